"""Every notebook runs top to bottom in a real Jupyter kernel, and is committed without outputs.

Each notebook is executed once per test run (in a copy, as a new user would run it, with
nbclient's default settings: the ``executed`` fixture, ``tests/notebooks/support.py``) and the
widget checks read that one run (so do notebook 06's checks in ``tests/mcp``, notebook 08's
chart checks and the Binder check's comparison): the cards, failure cards, inspectors and views
each notebook teaches must be in its saved outputs, in their final state, with no script in
them; exported to HTML, every card reads offline. The docs site is built strictly from these
same runs, so no notebook is executed twice.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import zlib
from html.parser import HTMLParser
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import unquote, urlsplit

import nbformat
import pytest

import workbench as wb
from tests.notebooks.exports import assert_every_view_reads_offline
from tests.notebooks.support import (
    NOTEBOOKS,
    ROOT,
    WIDGET_STATE,
    WIDGET_VIEW,
    classes_in,
    html_outputs,
    outputs_of,
)

if TYPE_CHECKING:
    from tests.notebooks.support import Runs


def test_there_are_notebooks():
    assert [p.name for p in NOTEBOOKS][:1] == ["00-envelopes.ipynb"]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_notebook_is_committed_without_outputs(path):
    notebook = nbformat.read(path, as_version=4)
    for cell in notebook.cells:
        if cell.cell_type == "code":
            assert cell.outputs == [] and cell.execution_count is None, cell.source[:60]


@pytest.mark.kernel
@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_notebook_runs_top_to_bottom(path, executed):
    notebook = executed(path.name)
    errors = [out for out in outputs_of(notebook) if out.output_type == "error"]
    assert errors == []


@pytest.mark.kernel
@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_no_cell_prints_a_traceback(path, executed):
    """A newcomer's Run All shows no red text: no traceback on any cell's stderr (asyncio's
    "Future exception was never retrieved" of a stopped body among them)."""
    notebook = executed(path.name)
    printed = [
        (index, out.text[-800:])
        for index, cell in enumerate(notebook.cells)
        for out in getattr(cell, "outputs", [])
        if out.output_type == "stream"
        and out.name == "stderr"
        and ("Traceback" in out.text or "never retrieved" in out.text)
    ]
    assert printed == []


@pytest.mark.kernel
@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_a_notebook_leaves_nothing_in_the_temporary_folder_once_its_kernel_exits(path, executed):
    """Artifacts of a history kept in memory, the MCP demo's workspace, a sandbox the notebook
    made: each goes when the process that made it exits (a killed one aside)."""
    assert executed.left_behind(path.name) == []


@pytest.mark.kernel
def test_envelope_notebook_shows_escaped_envelopes(executed):
    notebook = executed("00-envelopes.ipynb")
    html = [out["data"]["text/html"] for out in html_outputs(notebook)]
    assert any("wb-envelope" in block for block in html)
    assert not any("<script>" in block for block in html)
    assert any("&lt;script&gt;" in block for block in html)


@pytest.mark.kernel
def test_envelope_notebook_shows_text_as_markdown_where_it_says_so(executed):
    notebook = executed("00-envelopes.ipynb")
    claims = [
        index
        for index, cell in enumerate(notebook.cells)
        if cell.cell_type == "markdown" and "as markdown" in " ".join(cell.source.split())
    ]
    assert claims, "the notebook no longer says how a text result is drawn"
    for index in claims:
        following = []
        for cell in notebook.cells[index + 1 :]:
            if cell.cell_type == "markdown":
                break
            following.extend(cell.outputs)
        html = "".join(out.get("data", {}).get("text/html", "") for out in following)
        assert "wb-markdown" in html and "<li>" in html, notebook.cells[index].source


# What each notebook must show. "live": a card or view whose saved HTML carries the class (a
# widget's static HTML beside its view, or a finished card saved as HTML alone); "created":
# widgets the kernel made while a cell ran, found in the saved
# widget state (the approval prompt and custom-tool form are gone from a card once it has ended,
# so its final saved HTML does not show them); "images": plots.
SHOWS = {
    "01-author-a-tool.ipynb": {
        "live": {"wb-card", "wb-failure", "wb-registry"},
        "created": {"wb-card", "wb-terminate", "wb-registry"},
        "images": 0,
    },
    "02-streaming-and-terminate.ipynb": {
        "live": {"wb-card", "wb-failure"},
        "created": {"wb-card", "wb-terminate", "wb-approval", "wb-custom"},
        "images": 0,
    },
    "03-receipts.ipynb": {
        "live": {"wb-inspector", "wb-card", "wb-listing", "wb-history"},
        # (a listing's tree is made when its call ends, often after its cell: "live" checks it)
        "created": {"wb-inspector", "wb-history"},
        "images": 1,
    },
    "04-compaction.ipynb": {
        "live": {"wb-compaction"},
        "created": {"wb-compaction"},
        "images": 1,
    },
    "05-failure-gallery.ipynb": {
        "live": {"wb-card", "wb-failure"},
        "created": {"wb-card", "wb-failure", "wb-approval"},
        "images": 0,
    },
    "07-real-transcripts.ipynb": {
        "live": {"wb-history", "wb-inspector", "wb-compaction"},
        "created": {"wb-history", "wb-inspector", "wb-compaction"},
        "images": 0,
    },
    "09-meet-a-model.ipynb": {
        "live": {"wb-run", "wb-card", "wb-run-edited"},
        "created": {
            "wb-run",
            "wb-card",
            "wb-run-step",
            "wb-run-stop",
            "wb-terminate",
        },
        "images": 0,
    },
}


def test_every_teaching_notebook_has_its_widget_checks():
    assert sorted(SHOWS) == [p.name for p in NOTEBOOKS if p.name in SHOWS]
    assert {f"0{n}" for n in (1, 2, 3, 4, 5, 7, 9)} == {name[:2] for name in SHOWS}


@pytest.mark.kernel
@pytest.mark.parametrize("name", sorted(SHOWS))
def test_notebook_shows_its_widgets(name, executed):
    notebook = executed(name)
    expected = SHOWS[name]
    live = set()
    for out in html_outputs(notebook):
        live |= classes_in(out["data"]["text/html"])
    assert expected["live"] <= live, f"missing from the saved outputs: {expected['live'] - live}"
    created = executed.created(name)
    assert expected["created"] <= created, f"widgets never created: {expected['created'] - created}"
    images = [out for out in outputs_of(notebook) if "image/png" in out.get("data", {})]
    assert len(images) >= expected["images"]


@pytest.mark.kernel
@pytest.mark.parametrize("name", sorted(SHOWS))
def test_notebook_saves_cards_as_they_ended_and_runs_no_script(name, executed):
    notebook = executed(name)
    for out in html_outputs(notebook):
        html = out["data"]["text/html"]
        assert "<script" not in html.lower()
        # a card is saved in its final state: the headless run waited for every call it shows
        assert not re.search(r"wb-state wb-state-(queued|running|awaiting_approval)['\"]", html)


@pytest.mark.kernel
def test_streaming_notebook_saves_terminated_timed_out_and_denied_cards(executed):
    notebook = executed("02-streaming-and-terminate.ipynb")
    html = " ".join(out["data"]["text/html"] for out in html_outputs(notebook))
    for state in ("succeeded", "failed", "terminated"):
        assert re.search(rf"wb-state wb-state-{state}['\"]", html), state
    for kind in ("terminated", "timeout", "user_denied"):
        assert re.search(rf"wb-kind['\"][^>]*>{kind}<", html), kind


@pytest.mark.kernel
def test_failure_gallery_shows_every_error_kind_as_a_failure_card(executed):
    notebook = executed("05-failure-gallery.ipynb")
    shown = set()
    for out in html_outputs(notebook):
        html = out["data"]["text/html"]
        if "wb-failure" in classes_in(html):
            shown |= set(re.findall(r"wb-kind['\"][^>]*>([a-z_]+)<", html))
    assert shown == {kind.value for kind in wb.ErrorKind}


@pytest.mark.kernel
def test_streaming_notebook_text_says_what_run_all_shows(executed):
    """After Run All the approval card shows its outcome, and the text beside it says so."""
    notebook = executed("02-streaming-and-terminate.ipynb")
    cells = notebook.cells
    index = next(i for i, c in enumerate(cells) if c.source.startswith("request = tools.invoke"))
    (card,) = [out for out in cells[index].outputs if "text/html" in out.get("data", {})]
    html = card["data"]["text/html"]
    assert re.search(r"wb-state wb-state-succeeded['\"]", html)
    assert "approved by you" in html
    text = cells[index + 1].source
    assert "After Run All" in text and "approved by you" in text
    assert "waiting for you" not in text.split("After Run All")[1]


@pytest.mark.kernel
@pytest.mark.parametrize("name", sorted(SHOWS))
def test_finished_cards_are_saved_without_a_widget_view(name, executed):
    """A card with nothing left to click is saved as HTML alone: reopened with no kernel it
    reads as it ended, never "model not found". Only a card that still offers a click (a
    listing that opens entries, a retryable failure's Edit and retry) keeps its widget view."""
    settled = 0
    for out in html_outputs(executed(name)):
        body = re.sub(r"['\"]", "'", out["data"]["text/html"].split("</style>")[-1])
        if not body.startswith("<div class='wb-card wb-static'>"):
            continue
        if WIDGET_VIEW in out["data"]:
            assert "class='wb-listing'" in body or "wb-ok'>retryable<" in body, body[:300]
        else:
            settled += 1
    if name[:2] in {"01", "02", "05"}:  # the notebooks that show finished calls as cards
        assert settled > 0


@pytest.mark.kernel
def test_real_transcripts_notebook_diffs_receipts_and_replays_a_fixed_call(executed):
    notebook = executed("07-real-transcripts.ipynb")
    html = " ".join(out["data"]["text/html"] for out in html_outputs(notebook))
    assert "wb-receipt-diff" in classes_in(html) and "wb-replay" in classes_in(html)
    assert "wb-diff-removed" in classes_in(html)  # the model's receipt differs from workbench's
    text = " ".join(
        out.get("text", "") for out in outputs_of(notebook) if out.get("output_type") == "stream"
    )
    assert "invalid_args" in text  # the call replayed as sent still fails ...
    assert "Wöchentliche Zusammenfassung" in html  # ... and with fixed arguments it reads the file
    assert "wb-history-pinned" in classes_in(html)


@pytest.mark.kernel
def test_meet_a_model_notebook_runs_a_model_through_allow_deny_terminate_and_an_edit(executed):
    notebook = executed("09-meet-a-model.ipynb")
    html = " ".join(out["data"]["text/html"] for out in html_outputs(notebook))
    run_card = next(
        out["data"]["text/html"]
        for out in html_outputs(notebook)
        if "wb-run" in classes_in(out["data"]["text/html"])
    )
    # the run card is saved as the run ended, as HTML alone
    assert re.search(r"wb-run-state-finished['\"]", run_card)
    for state in ("succeeded", "failed", "terminated"):
        assert re.search(rf"wb-state wb-state-{state}['\"]", run_card), state
    assert "approved by you" in run_card or "approved" in run_card
    assert "the bank closes at 4 pm" in run_card  # the edited receipt, shown on the card
    assert "wb-run-compare" in classes_in(html)  # compare_runs' table
    assert "wb-run-compaction" in classes_in(html)  # what compaction cut, on a run's card


@pytest.mark.kernel
def test_study_notebook_imports_every_run_and_plots_the_study(executed):
    notebook = executed("08-a-study.ipynb")
    images = [out for out in outputs_of(notebook) if "image/png" in out.get("data", {})]
    assert len(images) >= 4  # failures by tool and kind, by model, receipt sizes, compaction
    text = " ".join(
        str(out.get("data", {}).get("text/plain", out.get("text", "")))
        for out in outputs_of(notebook)
    )
    assert "27 run(s)" in text  # 2 inspect_ai evals and 25 generated runs, none unreadable
    for model in ("careful", "hasty", "gpt-mini", "claude-b"):
        assert model in text
    assert "not_found" in text and "execution_error" in text


EXPORTED = ("01-author-a-tool.ipynb", "02-streaming-and-terminate.ipynb", "09-meet-a-model.ipynb")


@pytest.fixture(scope="module")
def exported(executed: Runs, tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """The executed copies of ``EXPORTED``, exported the common way (``jupyter nbconvert --to
    html``, its defaults) in one run of nbconvert: each page by notebook name."""
    folder = tmp_path_factory.mktemp("exported")
    for name in EXPORTED:
        nbformat.write(executed(name), folder / name)
    command = [sys.executable, "-m", "jupyter", "nbconvert", "--to", "html", *EXPORTED]
    subprocess.run(command, cwd=folder, check=True, capture_output=True)
    return {
        name: (folder / name).with_suffix(".html").read_text(encoding="utf-8") for name in EXPORTED
    }


@pytest.mark.kernel
@pytest.mark.parametrize("name", EXPORTED)
def test_a_notebook_run_with_nbclient_defaults_exports_every_card_readable_offline(
    name, executed, exported
):
    """nbclient stores widget state by default; workbench's views answer no cell, so none of
    theirs is stored and the export shows each view's static HTML, not a blank widget."""
    notebook = executed(name)
    assert WIDGET_STATE not in notebook.metadata.get("widgets", {})
    assert_every_view_reads_offline(notebook, exported[name])


def public_names() -> list[str]:
    """Every public name: ``workbench.X`` for each name ``import workbench`` offers and
    ``workbench.P.X`` for each name of each public subpackage ``P`` (its ``__all__``)."""
    import importlib
    import pkgutil

    names = [f"workbench.{name}" for name in wb.__all__]
    for module in pkgutil.iter_modules(wb.__path__):
        if not module.name.startswith("_"):
            package = importlib.import_module(f"workbench.{module.name}")
            names += [f"workbench.{module.name}.{name}" for name in package.__all__]
    return names


def inventory(site: Path) -> set[str]:
    """The names the built site documents (mkdocstrings' ``objects.inv``)."""
    header, _, body = site.joinpath("objects.inv").read_bytes().partition(b"zlib.\n")
    assert header.startswith(b"# Sphinx inventory version 2")
    return {line.split(" ")[0] for line in zlib.decompress(body).decode().splitlines()}


class _Anchors(HTMLParser):
    """The ids a page holds and the links it makes."""

    def __init__(self) -> None:
        super().__init__()
        self.ids: set[str] = set()
        self.links: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        named = dict(attrs)
        self.ids.update(value for key in ("id", "name") if (value := named.get(key)))
        if tag == "a" and named.get("href"):
            self.links.append(str(named["href"]))


def broken_anchors(site: Path) -> list[str]:
    """Every link of the built site to a place on one of its pages (``page/#heading``, or
    ``#heading`` on the page itself, the table of contents' entries too) where that page holds
    no such id: ``"from-page -> link"``. Links to other sites are not followed."""
    pages: dict[Path, _Anchors] = {}
    for path in site.rglob("*.html"):
        pages[path.resolve()] = reader = _Anchors()
        reader.feed(path.read_text(encoding="utf-8"))
    broken = []
    for page, reader in pages.items():
        for link in reader.links:
            parts = urlsplit(link)
            if parts.scheme or parts.netloc or not parts.fragment:
                continue
            target = (page.parent / unquote(parts.path)).resolve() if parts.path else page
            if target.is_dir():
                target = target / "index.html"
            if target in pages and unquote(parts.fragment) not in pages[target].ids:
                broken.append(f"{page.relative_to(site.resolve())} -> {link}")
    return sorted(set(broken))


@pytest.mark.kernel
@pytest.mark.slow
@pytest.mark.timeout(900)
def test_the_docs_site_builds_strictly_with_every_notebook_and_every_public_name(
    executed, tmp_path
):
    """The site of ``mkdocs.yml``, built with ``--strict`` (a broken link, a page missing from
    the navigation, a warning from a docstring all fail) from the notebooks run above: each
    tutorial page shows its cards as static HTML, and every public name has its entry."""
    docs = tmp_path / "docs"
    shutil.copytree(ROOT / "docs", docs, ignore=shutil.ignore_patterns("*.ipynb"))
    shutil.copy(ROOT / "mkdocs.yml", tmp_path / "mkdocs.yml")
    for path in NOTEBOOKS:
        nbformat.write(executed(path.name), docs / "tutorials" / path.name)
    site = tmp_path / "site"
    command = [sys.executable, "-m", "mkdocs", "build", "--strict"]
    command += ["-f", str(tmp_path / "mkdocs.yml"), "--site-dir", str(site)]
    result = subprocess.run(
        command,
        cwd=ROOT,
        env={**os.environ, "WORKBENCH_SOURCE": str(ROOT)},
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stderr[-5000:]
    documented = inventory(site)
    missing = [name for name in public_names() if name not in documented]
    assert missing == [], f"public names with no reference entry: {missing}"
    for name in EXPORTED:
        page = site / "tutorials" / Path(name).stem / "index.html"
        assert_every_view_reads_offline(executed(name), page.read_text(encoding="utf-8"))
    manifest = json.loads((site / "search" / "search_index.json").read_text())
    assert any(doc["location"].startswith("reference/") for doc in manifest["docs"])
    # Offline, a font fetched from Google is a console error on every page.
    fetching = [
        str(page.relative_to(site))
        for page in site.rglob("*.html")
        if "fonts.googleapis.com" in page.read_text(encoding="utf-8")
    ]
    assert fetching == [], f"pages that fetch Google Fonts: {fetching[:5]}"
    # Every link to a heading leads to one: the contents of a notebook page whose headings
    # start with code too (docs/_hooks/toc_anchors.py).
    assert broken_anchors(site) == []


@pytest.mark.kernel
@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_a_notebook_writes_only_into_folders_git_ignores(path, executed):
    """What a notebook creates beside itself (histories, workspaces, artifacts) lands where
    ``notebooks/.gitignore`` ignores it: a person's clone stays clean after Run All."""
    workdir = executed.workdir(path.name)
    made = sorted(
        f"notebooks/{file.relative_to(workdir).as_posix()}"
        for file in workdir.rglob("*")
        if file.is_file() and file.name != path.name
    )
    checked = subprocess.run(
        ["git", "check-ignore", "--no-index", "--verbose", "--non-matching", "--stdin"],
        cwd=NOTEBOOKS[0].parent.parent,
        input="\n".join(made),
        capture_output=True,
        text=True,
    )
    kept = [line.split("\t")[1] for line in checked.stdout.splitlines() if line.startswith("::")]
    assert kept == []
