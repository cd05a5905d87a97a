"""Panes of text with marks: what the inspector and the compaction view draw.

A pane is one text a model or a program sees (the canonical record, the wire JSON, a receipt),
what it costs (characters, and tokens when a counter is given), and its segments: plain text
and marked pieces (cut markers, artifact references). Marks are found on the raw text; every
segment is escaped on its own when it becomes HTML, and the browser views set segments with
``textContent``, so marking can never let tool text become markup.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from workbench.declare import ClientViews
from workbench.envelope import MARKER_RE, Envelope
from workbench.families import render
from workbench.output import has_ansi
from workbench.tokens import TokenCounter
from workbench.widgets._html import esc, pretty_json

Counter = Callable[[str], int]

OPENAI_TOKENS = TokenCounter("openai")
"""The views' token counter unless given another: OpenAI's cl100k_base, exact with the
``tokens`` extra, an estimate marked as one without it."""
PaneKey = Literal[
    "canonical", "wire", "receipt", "before", "after", "text_client", "structured_client"
]
MarkKind = Literal["truncation", "artifact"]
Segment = tuple[str, MarkKind | None]
Patterns = Sequence[tuple[re.Pattern[str], MarkKind]]

# Inside a JSON string the cut marker sits between escaped newlines, not on a line of its own.
MARKER_IN_JSON = re.compile(MARKER_RE.pattern.removeprefix("^").removesuffix("$"))
# A result field that points at an artifact by index: "stdout_artifact": 0
ARTIFACT_INDEX = re.compile(r'"\w+_artifact": \d+')
MARK_NAMES: dict[MarkKind, tuple[str, str]] = {
    "truncation": ("cut marker", "cut markers"),
    "artifact": ("artifact ref", "artifact refs"),
}


@dataclass(frozen=True)
class Pane:
    """One side of the inspector: the text shown, what it costs, and its marked segments.

    ``chars`` and ``tokens`` measure the form that is stored or sent: the canonical record as
    compact JSON (it is shown indented), the wire string and the receipt exactly as they are.
    """

    key: PaneKey
    title: str
    text: str
    chars: int
    tokens: int | None
    segments: tuple[Segment, ...]
    tokens_by: str = ""
    """What counted ``tokens``: ``"cl100k_base"``, ``"≈ estimate…"``, or "" for a plain
    counter function."""

    def marks(self) -> dict[MarkKind, int]:
        """How many segments of each kind are marked."""
        found: dict[MarkKind, int] = {"truncation": 0, "artifact": 0}
        for _, kind in self.segments:
            if kind is not None:
                found[kind] += 1
        return found

    def label(self) -> str:
        """``1,234 chars · 310 tokens · 1 cut marker``: the pane's heading counts."""
        parts = [f"{self.chars:,} {'char' if self.chars == 1 else 'chars'}"]
        if self.tokens is not None:
            estimate, by = self.tokens_by.startswith("≈ "), self.tokens_by.removeprefix("≈ ")
            unit = "token" if self.tokens == 1 else "tokens"
            parts.append(
                f"{'≈ ' if estimate else ''}{self.tokens:,} {unit}{f' ({by})' if by else ''}"
            )
        for kind, number in self.marks().items():
            if number:
                singular, plural = MARK_NAMES[kind]
                parts.append(f"{number} {singular if number == 1 else plural}")
        return " · ".join(parts)

    def to_json(self) -> dict[str, Any]:
        """The pane as the browser view receives it."""
        return {
            "key": self.key,
            "title": self.title,
            "label": self.label(),
            "chars": self.chars,
            "tokens": self.tokens,
            "tokens_by": self.tokens_by,
            "marks": dict(self.marks()),
            "segments": [[text, kind] for text, kind in self.segments],
        }

    def to_html(self) -> str:
        """The pane as escaped static HTML."""
        return (
            f"<section class='wb-inspector-pane wb-pane-{self.key}'>"
            f"<header class='wb-pane-title'><span class='wb-pane-name'>{esc(self.title)}</span>"
            f"<span class='wb-pane-count'>{esc(self.label())}</span></header>"
            f"<pre class='wb-pane-text'>{segments_html(self.segments)}</pre></section>"
        )


def highlight(text: str, patterns: Patterns) -> tuple[Segment, ...]:
    """``text`` split into plain and marked segments; where matches overlap the first wins."""
    spans = sorted(
        (match.start(), match.end(), kind)
        for pattern, kind in patterns
        for match in pattern.finditer(text)
        if match.end() > match.start()
    )
    segments: list[Segment] = []
    at = 0
    for start, end, kind in spans:
        if start < at:
            continue
        if start > at:
            segments.append((text[at:start], None))
        segments.append((text[start:end], kind))
        at = end
    if at < len(text) or not segments:
        segments.append((text[at:], None))
    return tuple(segments)


def segments_html(segments: Sequence[Segment]) -> str:
    """Segments as HTML: every piece escaped first, marked ones then wrapped in ``<mark>``."""
    return "".join(
        esc(text) if kind is None else f"<mark class='wb-mark wb-mark-{kind}'>{esc(text)}</mark>"
        for text, kind in segments
    )


def _artifact_paths(envelope: Envelope, *, as_json: bool) -> re.Pattern[str] | None:
    paths = {ref.path for ref in envelope.artifacts if ref.path}
    if as_json:  # in JSON text a path appears with its quotes and backslashes escaped
        paths = {json.dumps(path, ensure_ascii=False)[1:-1] for path in paths}
    if not paths:
        return None
    # Longest first, so a path that extends another is marked whole.
    return re.compile("|".join(re.escape(p) for p in sorted(paths, key=lambda p: (-len(p), p))))


def mark_patterns(envelope: Envelope, *, as_json: bool) -> list[tuple[re.Pattern[str], MarkKind]]:
    """What to mark in a text about ``envelope``: the cut marker and its artifact references
    (as they appear in JSON text when ``as_json``)."""
    marker = MARKER_IN_JSON if as_json else MARKER_RE
    patterns: list[tuple[re.Pattern[str], MarkKind]] = [(marker, "truncation")]
    paths = _artifact_paths(envelope, as_json=as_json)
    if paths is not None:
        patterns.append((paths, "artifact"))
    if as_json:
        patterns.append((ARTIFACT_INDEX, "artifact"))
    return patterns


def counted_by(count: Counter | None) -> str:
    """What a counter counts by, for a heading: a ``TokenCounter``'s encoding (``"≈ "`` and
    its label when it estimates), "" for a plain function."""
    label = getattr(count, "label", "")
    if not isinstance(label, str) or not label:
        return ""
    return label if getattr(count, "exact", True) else f"≈ {label}"


def client_panes(
    envelope: Envelope, views: ClientViews, count: Counter | None = None
) -> tuple[Pane, ...]:
    """What a text-preferring and a structured-preferring MCP client hand their model, side
    by side; none when the call sends no structured content."""
    if views.structured is None:
        return ()
    patterns = mark_patterns(envelope, as_json=False)
    shown: dict[PaneKey, tuple[str, str]] = {
        "text_client": ("A client that reads the text", views.text),
        "structured_client": ("A client that prefers structured content", views.structured),
    }
    return tuple(
        Pane(
            key=key,
            title=title,
            text=text,
            chars=len(text),
            tokens=None if count is None else int(count(text)),
            segments=highlight(text, patterns),
            tokens_by=counted_by(count),
        )
        for key, (title, text) in shown.items()
    )


def panes_of(
    envelope: Envelope, receipt: str | None = None, count: Counter | None = None
) -> tuple[Pane, ...]:
    """The three panes of ``envelope``; ``receipt`` defaults to the family's rendering."""
    record = envelope.canonical()
    shown = {
        "canonical": pretty_json(record),
        "wire": envelope.to_wire(),
        "receipt": render(envelope) if receipt is None else receipt,
    }
    counted = {**shown, "canonical": json.dumps(record, ensure_ascii=False, default=repr)}
    titles = {"canonical": "Canonical record", "wire": "Wire JSON", "receipt": "Receipt"}
    if "\\u001b" in shown["wire"] and not has_ansi(shown["receipt"]):
        # The output held terminal colour codes: the receipt (what a model reads) has none.
        titles["receipt"] = "Receipt (colour codes stripped: a model reads text)"
    keys: tuple[PaneKey, ...] = ("canonical", "wire", "receipt")
    return tuple(
        Pane(
            key=key,
            title=titles[key],
            text=shown[key],
            chars=len(counted[key]),
            tokens=None if count is None else int(count(counted[key])),
            segments=highlight(shown[key], mark_patterns(envelope, as_json=key != "receipt")),
            tokens_by=counted_by(count),
        )
        for key in keys
    )
