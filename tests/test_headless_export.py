"""Notebooks run headless the other common ways export every card readable offline.

``tests/test_notebooks.py`` checks nbclient with its defaults. Here the same notebooks are run
with papermill (its defaults; it drives nbclient, which stores widget state) and then exported
with ``jupyter nbconvert --to html``, and with ``jupyter nbconvert --execute --to html`` in one
step. Each exported page must show every workbench view as its static HTML, with no widget view,
no widget state and no widget manager fetched from a CDN.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from tests.export_support import (
    assert_every_view_reads_offline,
    export_html,
    view_outputs,
    widget_free,
)

ROOT = Path(__file__).resolve().parents[1]
EXPORTED = ("01-author-a-tool.ipynb", "02-streaming-and-terminate.ipynb", "09-meet-a-model.ipynb")
STATIC_CARD = re.compile(r"class=['\"]wb-card wb-static['\"]")


def workdir(tmp_path: Path) -> Path:
    """A fresh copy of ``notebooks/``, so a run writes nothing beside the originals."""
    copy = tmp_path / "notebooks"
    shutil.copytree(ROOT / "notebooks", copy, ignore=shutil.ignore_patterns(".ipynb_checkpoints"))
    return copy


def cards_in(html: str) -> int:
    """How many cards ``html`` draws as static HTML (scripts and stylesheets left out)."""
    return len(STATIC_CARD.findall(re.sub(r"<(script|style)\b.*?</\1>", "", html, flags=re.S)))


@pytest.fixture(scope="module")
def papermilled(tmp_path_factory):
    """``papermilled(name)``: the notebook run once by papermill with its default settings."""
    import papermill

    runs: dict[str, nbformat.NotebookNode] = {}

    def get(name: str) -> nbformat.NotebookNode:
        if name not in runs:
            folder = workdir(tmp_path_factory.mktemp(Path(name).stem))
            output = folder / f"run-{name}"
            papermill.execute_notebook(
                str(folder / name),
                str(output),
                cwd=str(folder),
                kernel_name="python3",
                progress_bar=False,
            )
            runs[name] = nbformat.read(output, as_version=4)
        return runs[name]

    return get


@pytest.mark.kernel
@pytest.mark.slow
@pytest.mark.parametrize("name", EXPORTED)
def test_papermill_then_nbconvert_shows_every_card_offline(name, papermilled, tmp_path):
    notebook = papermilled(name)
    assert_every_view_reads_offline(notebook, export_html(notebook, tmp_path))


@pytest.mark.kernel
@pytest.mark.slow
@pytest.mark.parametrize("name", EXPORTED)
def test_nbconvert_execute_to_html_shows_every_card_offline(name, papermilled, tmp_path):
    """One step, as the command line is usually typed; the run's cards are counted against
    papermill's run of the same notebook (ids and timings differ between runs, counts do not)."""
    folder = workdir(tmp_path)
    subprocess.run(
        [sys.executable, "-m", "jupyter", "nbconvert", "--execute", "--to", "html", name],
        cwd=folder,
        check=True,
        capture_output=True,
    )
    html = (folder / name).with_suffix(".html").read_text(encoding="utf-8")
    assert widget_free(html) == []
    expected = sum(cards_in(view) for _, view in view_outputs(papermilled(name)))
    assert expected > 0
    assert cards_in(html) == expected
