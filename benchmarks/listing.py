"""A listing of 100,000 entries: projection, receipt and card build time.

Two shapes, measured separately: ``file_read``'s own (the listing family cuts it to the limit,
200 by default, and writes the complete listing once as an artifact), and a tool that returns
every entry uncut (``limit`` as large as the listing), which is the worst case for the tree
view. Each phase is timed on its own: the family's projection to a canonical envelope, the
receipt, and building the card's listing tree (widget state only, no browser).
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path
from typing import Any

from workbench.families import DEFAULT_BUDGETS, Completed, project, render
from workbench.families.listing import CompleteListing
from workbench.output._artifacts import ArtifactSink, ArtifactStore


def entries(count: int) -> list[dict[str, Any]]:
    """``count`` entries of a plausible tree: directories first, then files."""
    directories = count // 10
    rows = [
        {"name": f"dir_{i:06d}", "path": f"big/dir_{i:06d}", "type": "directory"}
        for i in range(directories)
    ]
    rows += [
        {"name": f"file_{i:06d}.txt", "path": f"big/file_{i:06d}.txt", "type": "file"}
        for i in range(count - directories)
    ]
    return rows


def _timed(action: Any) -> tuple[Any, float]:
    started = time.perf_counter()
    value = action()
    return value, (time.perf_counter() - started) * 1000.0


def run(count: int = 100_000) -> list[dict[str, Any]]:
    """Time projection, receipt and tree build for a ``count``-entry listing, cut and uncut."""
    from workbench.widgets import ListingTree

    rows = []
    listing = entries(count)
    with tempfile.TemporaryDirectory() as scratch:
        store = ArtifactStore(Path(scratch) / "artifacts")
        for shape, limit in (("cut to the limit", None), ("every entry", count)):
            sink = ArtifactSink(store, f"call_{shape[:3]}")
            completed = Completed(
                tool_name="file_read",
                value=CompleteListing("big", listing, limit=limit),
                sink=sink,
            )
            envelope, project_ms = _timed(lambda c=completed: project("json", c, DEFAULT_BUDGETS))
            receipt, receipt_ms = _timed(lambda e=envelope: render(e, DEFAULT_BUDGETS))
            tree, card_ms = _timed(lambda e=envelope: ListingTree(e))
            tree.close()
            rows.append(
                {
                    "shape": shape,
                    "entries": count,
                    "entries_kept": len(envelope.result["entries"]),
                    "receipt_chars": len(receipt),
                    "project_ms": project_ms,
                    "receipt_ms": receipt_ms,
                    "card_ms": card_ms,
                }
            )
    return rows


if __name__ == "__main__":
    for row in run():
        print(row)
