"""A small registry to serve and connect to: one tool of each kind, plus the built-ins.

``python -m workbench.mcp serve workbench.mcp.demo:registry`` serves it. The tools:

- ``greet`` (text family), ``word_stats`` (json, with an output schema), ``divide`` (json; a
  zero divisor fails with ``execution_error``), ``lookup`` (fails ``not_found`` for unknown keys),
  ``count`` (a streaming generator), ``publish`` (``always_ask``: never runs unapproved);
- the built-ins ``shell_exec``, ``process``, ``file_read``, ``artifact_read``, confined to a
  workspace holding ``README.md`` and ``src/app.py`` (``WORKBENCH_DEMO_ROOT``, else a new
  temporary directory).

The history is in memory unless ``WORKBENCH_DEMO_HISTORY`` names a file.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from pathlib import Path

from typing_extensions import TypedDict

from workbench import builtins
from workbench._scratch import scratch_directory
from workbench.envelope import ErrorKind, ToolFailure
from workbench.registry import Registry

ENTRIES = {"ada": "Ada Lovelace, 1815-1852", "alan": "Alan Turing, 1912-1954"}


class WordStats(TypedDict):
    """Counts of one text."""

    words: int
    lines: int
    chars: int


def registry(root: str | os.PathLike[str] | None = None) -> Registry:
    """A fresh demo registry; the built-ins work in ``root`` (seeded with two files if empty)."""
    history = os.environ.get("WORKBENCH_DEMO_HISTORY", ":memory:")
    tools = Registry(history=history, terminate_grace=1.0)
    _declare(tools)
    given = root or os.environ.get("WORKBENCH_DEMO_ROOT")
    workspace = Path(given) if given else scratch_directory("workbench-demo-")
    _seed(workspace)
    builtins.register(tools, root=workspace)
    return tools


def _seed(workspace: Path) -> None:
    workspace.mkdir(parents=True, exist_ok=True)
    if any(workspace.iterdir()):
        return
    (workspace / "README.md").write_text("# demo\n\nA workspace for the MCP demo.\n")
    (workspace / "src").mkdir()
    (workspace / "src" / "app.py").write_text('print("hello from app.py")\n')


def _declare(tools: Registry) -> None:
    @tools.tool(family="text", read_only=True, idempotent=True)
    def greet(name: str, excited: bool = False) -> str:
        """Greet someone by name.

        Args:
            name: Who to greet, e.g. "Ada".
            excited: End with an exclamation mark.
        """
        return f"Hello, {name}{'!' if excited else '.'}"

    @tools.tool(read_only=True, idempotent=True)
    def word_stats(text: str) -> WordStats:
        """Count the words, lines and characters of a text.

        Args:
            text: The text to measure.
        """
        return {"words": len(text.split()), "lines": len(text.splitlines()), "chars": len(text)}

    @tools.tool(read_only=True, idempotent=True)
    def divide(a: float, b: float) -> float:
        """Divide a by b.

        Args:
            a: The dividend.
            b: The divisor (zero fails).
        """
        return a / b

    @tools.tool(read_only=True, idempotent=True)
    def lookup(key: str) -> dict[str, str]:
        """Look up a person by key.

        Args:
            key: A key such as "ada" or "alan".
        """
        if key not in ENTRIES:
            raise ToolFailure(
                ErrorKind.NOT_FOUND,
                f"No entry `{key}`; known keys: {', '.join(sorted(ENTRIES))}.",
                field="key",
            )
        return {"key": key, "entry": ENTRIES[key]}

    @tools.tool(read_only=True)
    def count(n: int, delay: float = 0.05) -> Iterator[str | dict[str, int]]:
        """Count from 1 to n, printing one number per line as it goes.

        Args:
            n: Where to stop.
            delay: Seconds between numbers.
        """
        for number in range(1, n + 1):
            yield f"{number}\n"
            time.sleep(delay)
        yield {"counted": n}

    @tools.tool(
        permission="always_ask",
        destructive=True,
        open_world=True,
        effects=("posts the message publicly",),
    )
    def publish(message: str) -> str:
        """Publish a message to the world (asks the person first).

        Args:
            message: What to publish.
        """
        return f"published: {message}"


__all__ = ["WordStats", "registry"]
