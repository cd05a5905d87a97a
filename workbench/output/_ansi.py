"""Terminal escape sequences in tool output (colours from pytest, git, ``ls --color``).

A receipt is what a model reads, so escapes are stripped from it; cards draw the colours (the
widgets read the same pattern). The complete output, escapes included, stays in the artifacts.
"""

from __future__ import annotations

from workbench._html import TERMINAL_ESCAPE

ESCAPE = TERMINAL_ESCAPE
"""One terminal escape sequence (``workbench._html`` holds the pattern: escaping drops them)."""


def strip_ansi(text: str) -> str:
    """``text`` without its escape sequences (a cheap no-op when it has none)."""
    return ESCAPE.sub("", text) if "\x1b" in text else text


def has_ansi(text: str) -> bool:
    """True when ``text`` holds an escape sequence."""
    return "\x1b" in text and ESCAPE.search(text) is not None
