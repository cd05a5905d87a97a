"""Every notebook runs top to bottom in a real Jupyter kernel, and is committed without outputs."""

from __future__ import annotations

import shutil
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

NOTEBOOKS = sorted((Path(__file__).parent.parent / "notebooks").glob("*.ipynb"))


def run_notebook(path: Path, workdir: Path) -> nbformat.NotebookNode:
    """Execute a copy of ``path`` in ``workdir`` so nothing is written beside the original."""
    copy = workdir / path.name
    shutil.copy(path, copy)
    notebook = nbformat.read(copy, as_version=4)
    client = NotebookClient(
        notebook,
        timeout=180,
        kernel_name="python3",
        resources={"metadata": {"path": str(workdir)}},
    )
    client.execute()
    return notebook


def outputs_of(notebook: nbformat.NotebookNode) -> list[dict]:
    return [out for cell in notebook.cells if cell.cell_type == "code" for out in cell.outputs]


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
def test_notebook_runs_top_to_bottom(path, tmp_path):
    notebook = run_notebook(path, tmp_path)
    errors = [out for out in outputs_of(notebook) if out.output_type == "error"]
    assert errors == []


@pytest.mark.kernel
def test_envelope_notebook_shows_escaped_envelopes(tmp_path):
    notebook = run_notebook(NOTEBOOKS[0], tmp_path)
    html = [
        out["data"]["text/html"]
        for out in outputs_of(notebook)
        if "text/html" in out.get("data", {})
    ]
    assert any("wb-envelope" in block for block in html)
    assert not any("<script>" in block for block in html)
    assert any("&lt;script&gt;" in block for block in html)
