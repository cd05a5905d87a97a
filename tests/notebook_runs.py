"""Each notebook of ``notebooks/`` run once per test session in a real Jupyter kernel, with
nbclient's default settings, and what the tests read of a run.

The ``executed`` and ``workdir_of`` fixtures (``tests/conftest.py``) hand out these runs:
``tests/test_notebooks.py`` and ``tests/mcp/test_notebook.py`` both read them, and the
scheduler keeps the two files in one process (``tests/conftest.py``) so no notebook runs twice.
"""

from __future__ import annotations

import re
import shutil
from collections.abc import Callable
from pathlib import Path

import nbformat
from nbclient import NotebookClient
from nbclient.util import ensure_async

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
WIDGET_STATE = "application/vnd.jupyter.widget-state+json"

CREATED: dict[int, set[str]] = {}
"""An executed notebook's ``id`` → the CSS classes of every widget its kernel created."""


def record_created_widgets(client: NotebookClient, classes: set[str]) -> None:
    """Collect into ``classes`` the CSS classes of every widget the kernel opens or restyles,
    whichever request its messages answer (workbench's views answer none: nbclient itself
    keeps no state for them)."""
    channel = client.kc.iopub_channel
    receive = channel.get_msg

    async def get_msg(*args, **kwargs):
        msg = await ensure_async(receive(*args, **kwargs))
        if msg["msg_type"] in ("comm_open", "comm_msg"):
            state = msg["content"].get("data", {}).get("state", {})
            classes.update(state.get("_dom_classes", ()))
        return msg

    channel.get_msg = get_msg


def run_notebook(path: Path, workdir: Path) -> nbformat.NotebookNode:
    """Execute a copy of ``path`` in ``workdir`` so nothing is written beside the original,
    with nbclient's default settings (widget state stored, as nbconvert and papermill do)."""
    copy = workdir / path.name
    shutil.copy(path, copy)
    notebook = nbformat.read(copy, as_version=4)
    created: set[str] = set()
    client = NotebookClient(
        notebook,
        timeout=180,
        kernel_name="python3",
        resources={"metadata": {"path": str(workdir)}},
        on_notebook_start=lambda **_: record_created_widgets(client, created),
    )
    client.execute()
    CREATED[id(notebook)] = created
    return notebook


class Runs:
    """``runs(name)``: the notebook ``name`` run once (at its first asking), in a folder of its
    own under ``make_dir(stem)``; ``runs.workdir(name)`` is the folder it ran in."""

    def __init__(self, make_dir: Callable[[str], Path]) -> None:
        self._make_dir = make_dir
        self._runs: dict[str, nbformat.NotebookNode] = {}
        self._workdirs: dict[str, Path] = {}

    def __call__(self, name: str) -> nbformat.NotebookNode:
        if name not in self._runs:
            path = next(p for p in NOTEBOOKS if p.name == name)
            self._workdirs[name] = self._make_dir(path.stem)
            self._runs[name] = run_notebook(path, self._workdirs[name])
        return self._runs[name]

    def workdir(self, name: str) -> Path:
        self(name)
        return self._workdirs[name]


def outputs_of(notebook: nbformat.NotebookNode) -> list[dict]:
    return [out for cell in notebook.cells if cell.cell_type == "code" for out in cell.outputs]


def html_outputs(notebook: nbformat.NotebookNode) -> list[dict]:
    return [out for out in outputs_of(notebook) if "text/html" in out.get("data", {})]


def classes_in(html: str) -> set[str]:
    """The CSS classes used on elements (not those a stylesheet merely mentions)."""
    return {
        name
        for match in re.finditer(r"class=['\"]([^'\"]*)['\"]", html)
        for name in match[1].split()
    }


def widget_classes(notebook: nbformat.NotebookNode) -> set[str]:
    """The CSS classes of the widgets the kernel created while the cells ran."""
    return CREATED[id(notebook)]
