"""The README fits on a few screens, its tour does what it says, and nothing it dropped is lost.

The README used to hold everything (47 KB); its sections now live in the docs site, each on a
page of its own. These tests keep it short, run its tour as a newcomer would paste it, and check
that every section it dropped is a docs page and every link it has leads somewhere.
"""

from __future__ import annotations

import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
DOCS = ROOT / "docs"
MAX_BYTES = 12 * 1024

MOVED = {
    "Set up": "how-to/set-up.md",
    "Notebooks": "tutorials/index.md",
    "Cards in a notebook": "explanation/cards.md",
    "On Binder": "how-to/binder.md",
    "Envelope, receipt, compaction: one flow": "explanation/flow.md",
    "The history (in the flow)": "explanation/history.md",
    "The runtime": "explanation/runtime.md",
    "Containment": "explanation/containment.md",
    "MCP": "how-to/mcp.md",
    "Use it in CI": "how-to/ci.md",
    "Real transcripts": "how-to/import-transcripts.md",
    "A study of many runs": "how-to/study.md",
    "Meet a model": "how-to/run-a-model.md",
    "Benchmarks": "explanation/benchmarks.md",
    "Layout": "architecture.md",
}
"""Each section of the README as it was (47 KB) → the docs page that holds it now."""


def tour() -> str:
    """The Python block under "A one-minute tour"."""
    text = README.read_text(encoding="utf-8")
    section = text.split("## A one-minute tour", 1)[1]
    match = re.search(r"```python\n(.*?)```", section, re.S)
    assert match, "the tour has no python block"
    return match[1]


def test_readme_fits_on_a_few_screens():
    assert len(README.read_bytes()) <= MAX_BYTES


def test_readme_installs_the_distribution_by_its_own_name():
    text = README.read_text(encoding="utf-8")
    assert "pip install tool-workbench" in text
    assert "pip install workbench" not in text


@pytest.mark.parametrize("section", sorted(MOVED))
def test_every_section_the_readme_dropped_is_a_docs_page(section):
    page = DOCS / MOVED[section]
    assert page.is_file(), f"{section!r} should live in docs/{MOVED[section]}"
    first = page.read_text(encoding="utf-8").splitlines()[0]
    assert first.startswith("# "), f"docs/{MOVED[section]} should open with its title"


def test_every_link_in_the_readme_leads_to_a_file():
    text = README.read_text(encoding="utf-8")
    targets = re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", text)
    local = [t for t in targets if "://" not in t]
    assert local, "the README links into the docs"
    missing = [t for t in local if not (ROOT / t).exists()]
    assert not missing


@pytest.mark.slow
def test_the_tour_runs_and_its_last_lines_show_what_they_promise(tmp_path):
    """Pasted into a script in a fresh folder, the tour runs; the shell call's complete output
    is a file at the path it shows, and the compaction really shrinks the history to its
    budget, keeping the path to the rest."""
    (tmp_path / "one.py").write_text("x = 1\n")
    (tmp_path / "notes.md").write_text("# notes\n")
    checks = textwrap.dedent(
        """
        from pathlib import Path as _Path
        artifact = _Path(big.artifacts[0].path)
        assert artifact.is_file(), artifact
        assert artifact.stat().st_size == big.result["stdout_bytes"] == 588_895
        assert small.before_chars > 1000 >= small.after_chars, small.summary()
        assert not small.over_budget and len(small.steps) >= 1
        assert small.summary().startswith("compaction of 3 calls:"), small.summary()
        assert str(artifact) in small.receipts[1] and "100000" in small.receipts[1]
        assert len(small.receipts[1]) < 1000
        print("tour ok")
        """
    )
    script = tmp_path / "tour.py"
    script.write_text(tour() + checks, encoding="utf-8")
    result = subprocess.run(
        [sys.executable, str(script)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin", "HOME": str(tmp_path)},
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.strip().endswith("tour ok")
