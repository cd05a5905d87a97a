"""Tool name rules: ASCII snake_case, non-empty, no spaces, at most 64 characters.

A name that passes here is accepted unchanged by OpenAI, Anthropic and MCP alike, so a tool never
needs a provider-specific alias. Uniqueness is the registry's rule, not this module's.
"""

from __future__ import annotations

import re

MAX_NAME_LENGTH = 64

_SNAKE_CASE = re.compile(r"[a-z][a-z0-9_]*")
_CAMEL_BOUNDARY = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
_NOT_WORD = re.compile(r"[^a-z0-9]+")


def check_name(name: object) -> str:
    """Return ``name`` when it is a valid tool name; otherwise raise ``ValueError``.

    The message names every rule the name breaks (empty, contains spaces, longer than 64
    characters, not ASCII snake_case) and, when one can be derived, suggests a valid name.
    """
    if not isinstance(name, str):
        raise ValueError(f"tool name must be a string, not {type(name).__name__}")
    broken = _broken_rules(name)
    if not broken:
        return name
    message = f"invalid tool name {name!r}: " + "; ".join(broken)
    suggestion = suggest_name(name)
    if suggestion and suggestion != name:
        message += f" (try {suggestion!r})"
    raise ValueError(message)


def _broken_rules(name: str) -> list[str]:
    if name == "":
        return ["it must not be empty"]
    broken = []
    if any(char.isspace() for char in name):
        broken.append("it must not contain spaces")
    if len(name) > MAX_NAME_LENGTH:
        broken.append(
            f"it is longer than {MAX_NAME_LENGTH} characters ({len(name)}), "
            "the limit OpenAI and Anthropic enforce"
        )
    if not _SNAKE_CASE.fullmatch(name):
        broken.append(
            "it is not ASCII snake_case (a lowercase letter, then lowercase letters, "
            "digits or underscores)"
        )
    return broken


def suggest_name(name: str) -> str:
    """A snake_case name derived from ``name`` (``"Search Files"`` → ``"search_files"``).

    Returns ``""`` when nothing usable remains (for example a name of only punctuation).
    """
    words = _CAMEL_BOUNDARY.sub("_", name).lower()
    snake = _NOT_WORD.sub("_", words).strip("_")
    if not snake:
        return ""
    if not snake[0].isalpha():
        snake = "tool_" + snake
    return snake[:MAX_NAME_LENGTH].rstrip("_")
