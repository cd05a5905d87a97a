"""How long each notebook's first card takes once its kernel is up, against the 1 s goal.

A newcomer's first hour starts with Run All: the kernel starts, the first cells import and set
up, and one of them shows the first card. Each notebook here runs in a fresh kernel (nbclient,
the kernel a notebook names, in a copy of ``notebooks/`` so nothing is written beside the
originals), cell by cell until a cell's outputs hold a workbench view. ``first_card_s`` is
that cell's own time, ``before_s`` the cells before it together (their imports included): the
goal is for ``first_card_s``, which a person waits for in front of the first card.
"""

from __future__ import annotations

import shutil
import tempfile
import time
from pathlib import Path
from typing import Any

GOAL_S = 1.0
NOTEBOOKS = Path(__file__).resolve().parents[1] / "notebooks"
VIEW = "application/vnd.jupyter.widget-view+json"


def shows_a_view(outputs: list[Any]) -> bool:
    """True when a cell's outputs hold a workbench view: a live widget, or a card's HTML."""
    for output in outputs:
        data = output.get("data", {})
        if VIEW in data or "wb-" in str(data.get("text/html", "")):
            return True
    return False


def first_card(path: Path, timeout: float = 300) -> dict[str, Any]:
    """Run ``path`` in a fresh kernel until a cell shows a view; the timings of that run."""
    import nbformat
    from nbclient import NotebookClient

    notebook = nbformat.read(path, as_version=4)
    client = NotebookClient(
        notebook,
        timeout=timeout,
        resources={"metadata": {"path": str(path.parent)}},
    )
    before = 0.0
    row: dict[str, Any] = {"notebook": path.stem, "cell": None, "before_s": None}
    with client.setup_kernel():
        for index, cell in enumerate(notebook.cells):
            if cell.cell_type != "code":
                continue
            started = time.perf_counter()
            client.execute_cell(cell, index)
            took = time.perf_counter() - started
            if shows_a_view(cell.outputs):
                row.update(cell=index, before_s=before, first_card_s=took)
                break
            before += took
    seconds = row.get("first_card_s")
    row["goal_s"] = GOAL_S
    row["met"] = "n/a" if seconds is None else "met" if seconds < GOAL_S else "MISSED"
    return row


def run(names: list[str] | None = None) -> list[dict[str, Any]]:
    """Each notebook's first card (``names``: the notebooks' stems; all of them by default),
    each run in a fresh kernel in a copy of ``notebooks/``."""
    with tempfile.TemporaryDirectory(prefix="first-cells-") as scratch:
        copy = Path(scratch) / "notebooks"
        shutil.copytree(NOTEBOOKS, copy, ignore=shutil.ignore_patterns(".*", "__pycache__"))
        paths = sorted(copy.glob("*.ipynb"))
        chosen = [p for p in paths if names is None or p.stem in names]
        return [first_card(path) for path in chosen]


if __name__ == "__main__":
    for found in run():
        print(found)
