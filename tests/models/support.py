"""Shared pieces of the model-run tests: the notes tools the recorded replies call, and the
recorded replies under tests/data/models/."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import workbench as wb
from workbench.models.local_server import load_script

DATA = Path(__file__).parent.parent / "data" / "models"

NOTES = {
    "invoices.txt": "March invoice: 1200\nApril invoice: 900\n",
    "budget.txt": "budget: 1200\n",
    "travel.txt": "flight leaves at 07:40\n",
    "recipes.txt": "pancakes\nsoup\nbread\nsalad\n",
    "old.txt": "stale\n",
}


def script(name: str) -> dict[str, list[dict[str, Any]]]:
    """The recorded replies of ``tests/data/models/<name>.json``."""
    return load_script(DATA / f"{name}.json")


def add_note_tools(tools: wb.Registry, *, release: threading.Event | None = None) -> None:
    """search_notes, read_note, delete_note (asks for approval) and a slow tool that waits for
    ``release`` (or to be terminated)."""

    @tools.tool(read_only=True)
    def search_notes(query: str, limit: int = 5) -> list[str]:
        """Find notes whose name or text mentions a word.

        Args:
            query: The word to look for.
            limit: Most notes to return.
        """
        found = [name for name, text in NOTES.items() if query in name or query in text]
        return found[:limit]

    @tools.tool(read_only=True)
    def read_note(name: str, lines: int = 10) -> str:
        """Read the first lines of a note.

        Args:
            name: The note's file name.
            lines: How many lines to read.
        """
        if name not in NOTES:
            raise FileNotFoundError(name)
        return "".join(NOTES[name].splitlines(keepends=True)[:lines])

    @tools.tool(permission="always_ask", destructive=True)
    def delete_note(name: str) -> str:
        """Delete a note.

        Args:
            name: The note's file name.
        """
        return f"deleted {name}"

    @tools.tool(read_only=True)
    def slow_count(name: str, ctx: wb.ToolContext = None) -> int:
        """Count a note's words, slowly.

        Args:
            name: The note's file name.
        """
        while release is not None and not release.wait(0.05):
            ctx.check_cancelled()
        return len(NOTES.get(name, "").split())
