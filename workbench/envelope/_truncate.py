"""Head-and-tail previews with an explicit cut marker, so a model knows what it was not shown.

Log-like text keeps its first and last lines, because the setup and the final failure are the
parts a model needs; the middle is replaced by one marker line that says exactly what was kept.
Cutting is stable: cutting an already-cut text to the same budget changes nothing, and cutting
it to a smaller budget keeps one marker whose counts still refer to original lines.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

DEFAULT_MAX_CHARS = 50_000

MARKER_RE = re.compile(r"^\[output truncated: showing first (\d+) and last (\d+) lines\]$", re.M)


TEXT_RESULT_KEYS = frozenset({"text", "truncated", "chars", "text_artifact", "text_kept_bytes"})
"""The keys of a text result, ``{"text": ...}``, and of its cut form (the text family's:
the preview, ``truncated``, the whole text's ``chars`` and the ``text_artifact`` keeping it)."""


def cut_marker(head_lines: int, tail_lines: int) -> str:
    """The marker line that replaces the middle of a cut text."""
    return f"[output truncated: showing first {head_lines} and last {tail_lines} lines]"


@dataclass(frozen=True, slots=True)
class Preview:
    """A bounded preview of a text and what was kept of it."""

    text: str
    truncated: bool
    head_lines: int = 0
    tail_lines: int = 0


def _split_cut(text: str) -> tuple[str, str] | None:
    """The head and tail around the single marker of an already-cut text, if it is one."""
    matches = list(MARKER_RE.finditer(text))
    if len(matches) != 1:
        return None
    match = matches[0]
    end = match.end() + 1 if text[match.end() : match.end() + 1] == "\n" else match.end()
    return text[: match.start()], text[end:]


def _take(lines: list[str], budget: int) -> int:
    """How many lines from the start of ``lines`` fit in ``budget`` characters."""
    used = 0
    for count, line in enumerate(lines):
        used += len(line)
        if used > budget:
            return count
    return len(lines)


def preview(text: str, max_chars: int = DEFAULT_MAX_CHARS) -> Preview:
    """Cut ``text`` to at most ``max_chars`` characters of content plus one marker line."""
    max_chars = max(0, max_chars)
    if len(text) <= max_chars:  # cut or not, it already fits: stable as it is
        if "[output truncated" in text and _split_cut(text) is not None:
            return Preview(text, True, *_counts(text))
        return Preview(text, truncated=False)
    split = _split_cut(text)
    if split is None:
        if len(text) <= max_chars:
            return Preview(text, truncated=False)
        head_src = tail_src = text.splitlines(keepends=True)
        shared = True
    else:
        head_part, tail_part = split
        if len(head_part) + len(tail_part) <= max_chars:
            return Preview(text, True, *_counts(text))
        head_src, tail_src = head_part.splitlines(True), tail_part.splitlines(True)
        shared = False

    head_budget = max_chars // 2
    head_count = _take(head_src, head_budget)
    head = "".join(head_src[:head_count])
    available = tail_src[head_count:] if shared else tail_src
    if head_count == 0 and head_src and head_budget > 0:
        head, head_count = head_src[0][:head_budget], 1
        if shared:  # the rest of a cut first line may still end the tail
            available = [head_src[0][head_budget:], *head_src[1:]]
    tail_budget = max_chars - len(head)
    tail_count = _take(available[::-1], tail_budget)
    tail = "".join(available[len(available) - tail_count :]) if tail_count else ""
    if tail_count == 0 and available and tail_budget > 0:
        tail, tail_count = available[-1][-tail_budget:], 1

    if head and not head.endswith("\n"):
        head += "\n"
    return Preview(
        head + cut_marker(head_count, tail_count) + "\n" + tail, True, head_count, tail_count
    )


def _counts(text: str) -> tuple[int, int]:
    match = MARKER_RE.search(text)
    return (int(match.group(1)), int(match.group(2))) if match else (0, 0)


def truncate_for_model(text: str, max_chars: int = DEFAULT_MAX_CHARS) -> str:
    """Head and tail of ``text`` with ``[output truncated: showing first N and last M lines]``.

    Text within the limit comes back unchanged; the result never exceeds ``max_chars`` plus the
    marker line.

    Examples:
        >>> text = "\\n".join(str(n) for n in range(100))
        >>> truncate_for_model(text, max_chars=60).splitlines()[13]
        '[output truncated: showing first 13 and last 10 lines]'
    """
    return preview(text, max_chars).text
