"""Every install line a newcomer can read names the distribution ``tool-workbench``: the
notebooks' cells, the docs, the README and the changelog, the Binder files, and the texts of
workbench's own messages. ``workbench`` on the package index is another project."""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

import workbench._extras as extras

ROOT = Path(__file__).resolve().parents[1]

# A requirement naming workbench with extras ('workbench[lab]'), or `pip install workbench`,
# that is not preceded by "tool-".
WRONG = re.compile(r"(?<![\w-])workbench\[|pip install\s+(?:-\S+\s+)*['\"]?workbench(?![\w-])")


def texts() -> Iterator[tuple[str, str]]:
    """(where, text) for every text a person reads an install line in."""
    for notebook in sorted((ROOT / "notebooks").rglob("*.ipynb")):
        cells = json.loads(notebook.read_text(encoding="utf-8"))["cells"]
        for number, cell in enumerate(cells):
            yield f"{notebook.relative_to(ROOT)} cell {number}", "".join(cell["source"])
    pages = [*sorted((ROOT / "docs").rglob("*.md")), ROOT / "README.md", ROOT / "CHANGELOG.md"]
    pages += sorted(path for path in (ROOT / "binder").iterdir() if path.is_file())
    for page in pages:
        yield str(page.relative_to(ROOT)), page.read_text(encoding="utf-8")
    for module in sorted((ROOT / "workbench").rglob("*.py")):
        for node in ast.walk(ast.parse(module.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                yield f"{module.relative_to(ROOT)} line {node.lineno}", node.value


def test_the_scan_reads_the_notebooks_docs_and_messages():
    where = [place for place, _ in texts()]
    assert sum(".ipynb cell" in place for place in where) > 100
    assert sum(place.startswith("docs/") for place in where) > 20
    assert sum(place.startswith("workbench/") for place in where) > 1000


def test_the_pattern_knows_a_wrong_line_from_a_right_one():
    assert WRONG.search("pip install 'workbench[study]'")
    assert WRONG.search("`'workbench[anthropic]'`")
    assert WRONG.search("pip install workbench")
    assert WRONG.search("pip install -U workbench")
    assert not WRONG.search("pip install 'tool-workbench[study]'")
    assert not WRONG.search("pip install tool-workbench")
    assert not WRONG.search("import workbench as wb")


def test_every_install_line_names_tool_workbench():
    wrong = [
        f"{place}: {found.group(0)!r}" for place, text in texts() for found in WRONG.finditer(text)
    ]
    assert wrong == [], "install lines naming another project:\n" + "\n".join(wrong)


@pytest.mark.parametrize("extra", ["study", "lab", "mcp", "transcripts"])
def test_a_missing_extra_is_named_by_the_distribution(extra):
    assert extras.install_hint(extra) == f"pip install 'tool-workbench[{extra}]'"
