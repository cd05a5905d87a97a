"""The receipt a model saw beside another rendering of the same call, with the difference marked.

``ReceiptDiff.segments`` cover both texts in order: ``same`` text is in both, ``removed`` only
in the first (the text the model saw), ``added`` only in the second (workbench's rendering, or
a replay's receipt). Lines are compared first; a changed line is compared word by word (words,
runs of spaces and single punctuation marks), so a one-word change marks one word.
"""

from __future__ import annotations

import dataclasses
import difflib
import json
import re
from collections.abc import Mapping
from typing import Any, Literal

from workbench.envelope import Envelope
from workbench.families._table import render

Op = Literal["same", "removed", "added"]

# Comparing a changed block word by word is quadratic in the worst case; past this size a
# changed block is shown as removed then added, whole.
CHAR_DIFF_LIMIT = 4_000
_WORDS = re.compile(r"\w+|\s+|[^\w\s]")


@dataclasses.dataclass(frozen=True, slots=True)
class ReceiptDiff:
    """Two texts and the segments that tell them apart (``left`` is the model's)."""

    left: str
    right: str
    segments: tuple[tuple[Op, str], ...]
    left_label: str = "the model saw"
    right_label: str = "workbench renders"

    @property
    def same(self) -> bool:
        """True when the two texts are identical."""
        return self.left == self.right

    @property
    def changed_chars(self) -> int:
        """How many characters are only in one of the texts."""
        return sum(len(text) for op, text in self.segments if op != "same")

    def unified(self) -> str:
        """A unified diff of the two texts, by line (empty when they are the same)."""
        return "".join(
            difflib.unified_diff(
                self.left.splitlines(keepends=True),
                self.right.splitlines(keepends=True),
                fromfile=self.left_label,
                tofile=self.right_label,
            )
        )

    def __str__(self) -> str:
        return "identical" if self.same else self.unified()

    def _repr_html_(self) -> str:
        return diff_html(self)


def diff_texts(
    left: str,
    right: str,
    *,
    left_label: str = "the model saw",
    right_label: str = "workbench renders",
) -> ReceiptDiff:
    """The segments telling ``left`` and ``right`` apart."""
    segments: list[tuple[Op, str]] = []
    left_lines = left.splitlines(keepends=True)
    right_lines = right.splitlines(keepends=True)
    matcher = difflib.SequenceMatcher(None, left_lines, right_lines, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        old = "".join(left_lines[i1:i2])
        new = "".join(right_lines[j1:j2])
        if tag == "equal":
            _add(segments, "same", old)
        elif tag == "replace" and len(old) + len(new) <= CHAR_DIFF_LIMIT:
            old_words, new_words = _WORDS.findall(old), _WORDS.findall(new)
            words = difflib.SequenceMatcher(None, old_words, new_words, autojunk=False)
            for op, a1, a2, b1, b2 in words.get_opcodes():
                if op == "equal":
                    _add(segments, "same", "".join(old_words[a1:a2]))
                else:
                    _add(segments, "removed", "".join(old_words[a1:a2]))
                    _add(segments, "added", "".join(new_words[b1:b2]))
        else:
            _add(segments, "removed", old)
            _add(segments, "added", new)
    return ReceiptDiff(left, right, tuple(segments), left_label, right_label)


def _add(segments: list[tuple[Op, str]], op: Op, text: str) -> None:
    if not text:
        return
    if segments and segments[-1][0] == op:
        segments[-1] = (op, segments[-1][1] + text)
    else:
        segments.append((op, text))


def rendering_of(row: Mapping[str, Any]) -> str | None:
    """Workbench's own receipt for a history row's canonical record (None without one)."""
    canonical = row.get("canonical")
    if not isinstance(canonical, dict):
        return None
    try:
        return render(Envelope.from_canonical(canonical))
    except ValueError:
        return None


def compare_receipts(row: Mapping[str, Any]) -> ReceiptDiff:
    """The receipt recorded for a row (for an imported call: what the model saw) beside
    workbench's rendering of the row's canonical record."""
    seen = row.get("receipt") if isinstance(row.get("receipt"), str) else ""
    rendered = rendering_of(row)
    return diff_texts(
        str(seen),
        "" if rendered is None else rendered,
        right_label="workbench renders" if rendered is not None else "(no canonical record)",
    )


def comparable(canonical: Any) -> Any:
    """A canonical record in the one form two records are compared in: without its call id,
    and a text result as the text family holds it (``{"text": ...}``), whether the record came
    from an import (which stores that form) or from a tool that returned a bare string."""
    if not isinstance(canonical, dict):
        return canonical
    same = {key: value for key, value in canonical.items() if key != "call_id"}
    if isinstance(same.get("result"), str):
        same["result"] = {"text": same["result"]}
    return same


def canonical_text(row: Mapping[str, Any]) -> str:
    """A row's canonical record as indented JSON, for diffing two records line by line."""
    return json.dumps(row.get("canonical"), indent=2, ensure_ascii=False, sort_keys=True)


_SIDE_CLASS = {"same": "wb-diff-same", "removed": "wb-diff-removed", "added": "wb-diff-added"}

CONTEXT_LINES = 3
"""Unchanged lines kept in view on each side of a difference."""
FOLD_MIN_LINES = 4
"""An unchanged run is folded only when folding hides at least this many lines."""

DIFF_CSS = """
.wb-receipt-diff { color: var(--jp-content-font-color1, #1f2328); }
.wb-receipt-diff .wb-diff-verdict { font-weight: 600; margin: 2px 0; }
.wb-receipt-diff .wb-diff-sides { display: flex; flex-wrap: wrap; gap: 0.8em; }
.wb-receipt-diff .wb-diff-side { flex: 1 1 20em; min-width: 0; }
.wb-receipt-diff .wb-diff-label { color: var(--jp-content-font-color2, #59636e); font-size: 0.9em; }
.wb-receipt-diff .wb-diff-text {
  font-family: var(--jp-code-font-family, monospace);
  font-size: var(--jp-code-font-size, 12px);
  line-height: 1.4;
  white-space: pre-wrap;
  overflow-wrap: break-word;
  text-align: left;
  color: var(--jp-content-font-color1, #1f2328);
  background: var(--jp-layout-color2, #f6f8fa);
  border-radius: 4px;
  padding: 4px 6px;
  margin: 2px 0;
  max-height: 24em;
  overflow: auto;
}
.wb-receipt-diff .wb-diff-removed,
.wb-receipt-diff .wb-diff-added {
  color: var(--jp-content-font-color1, #1f2328);
  border-radius: 2px;
}
.wb-receipt-diff .wb-diff-removed {
  background: color-mix(in srgb, var(--jp-error-color1, #cf222e) 28%, transparent);
  text-decoration: line-through;
  text-decoration-color: var(--jp-content-font-color2, #59636e);
}
.wb-receipt-diff .wb-diff-added {
  background: color-mix(in srgb, var(--jp-success-color1, #1a7f37) 28%, transparent);
}
.wb-receipt-diff details.wb-diff-fold { display: inline; }
.wb-receipt-diff details.wb-diff-fold > summary {
  display: block;
  cursor: pointer;
  font-family: var(--jp-ui-font-family, system-ui, sans-serif);
  font-style: italic;
  color: var(--jp-content-font-color2, #59636e);
}
"""
"""The diff's stylesheet: JupyterLab theme variables only, so changed text reads in light and
dark themes alike (it travels with the HTML: a diff is shown without any widget)."""


def _lines(text: str) -> list[str]:
    return text.splitlines(keepends=True)


def _folded(text: str, *, first: bool, last: bool) -> str:
    """An unchanged run as escaped HTML; a long one keeps ``CONTEXT_LINES`` next to each
    difference and folds the rest into ``<details>`` ("N unchanged lines")."""
    from workbench._html import esc

    lines = _lines(text)
    head = 0 if first else CONTEXT_LINES
    tail = 0 if last else CONTEXT_LINES
    hidden = len(lines) - head - tail
    if hidden < FOLD_MIN_LINES:
        return f"<span class='wb-diff-same'>{esc(text)}</span>"
    middle = "".join(lines[head : len(lines) - tail])
    noun = "line" if hidden == 1 else "lines"
    return (
        f"<span class='wb-diff-same'>{esc(''.join(lines[:head]))}</span>"
        f"<details class='wb-diff-fold'><summary>⋯ {hidden:,} unchanged {noun}</summary>"
        f"<span class='wb-diff-same'>{esc(middle)}</span></details>"
        f"<span class='wb-diff-same'>{esc(''.join(lines[len(lines) - tail :]))}</span>"
    )


def diff_html(diff: ReceiptDiff, *, verdict: bool = True) -> str:
    """The two texts (``wb-receipt-diff``), each segment escaped, each in a bounded box that
    scrolls. Identical texts are shown once, said to be identical. Otherwise the sides stand
    side by side: text only in the left is marked ``wb-diff-removed``, only in the right
    ``wb-diff-added``, and long unchanged runs are folded so the first difference is in view.
    ``verdict=False`` leaves out the line that counts the differing characters, for a caller
    that says it in its own title."""
    from workbench._html import esc

    style = f"<style>{DIFF_CSS}</style>"
    if diff.same:
        label = f"{diff.left_label} = {diff.right_label}"
        return (
            f"<div class='wb-receipt-diff wb-diff-identical'>{style}"
            "<div class='wb-diff-verdict'>identical</div>"
            "<div class='wb-diff-sides'><div class='wb-diff-side wb-diff-both'>"
            f"<div class='wb-diff-label'>{esc(label)}</div>"
            f"<div class='wb-diff-text'>{esc(diff.left)}</div></div></div></div>"
        )
    segments = diff.segments

    def side(keep: str) -> str:
        parts = []
        for index, (op, text) in enumerate(segments):
            if op == "same":
                parts.append(_folded(text, first=index == 0, last=index == len(segments) - 1))
            elif op == keep:
                parts.append(f"<span class='{_SIDE_CLASS[op]}'>{esc(text)}</span>")
        return "".join(parts)

    said = f"{diff.changed_chars:,} character(s) differ"
    return (
        f"<div class='wb-receipt-diff'>{style}"
        + (f"<div class='wb-diff-verdict'>{esc(said)}</div>" if verdict else "")
        + "<div class='wb-diff-sides'>"
        "<div class='wb-diff-side wb-diff-left'>"
        f"<div class='wb-diff-label'>{esc(diff.left_label)}</div>"
        f"<div class='wb-diff-text'>{side('removed')}</div></div>"
        "<div class='wb-diff-side wb-diff-right'>"
        f"<div class='wb-diff-label'>{esc(diff.right_label)}</div>"
        f"<div class='wb-diff-text'>{side('added')}</div></div>"
        "</div></div>"
    )
