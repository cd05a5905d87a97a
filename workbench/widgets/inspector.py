"""The envelope inspector: the canonical record, the wire JSON and the receipt side by side.

It answers "what exactly does the model see of this call, and what does it cost?". Each pane
carries its character count (and a token count when a counter function is given), and the cut
markers (``[output truncated: ...]``) and artifact references are marked in all three, so a cut
receipt can be traced to the file that holds the complete output.

The panes are computed here, in Python, as text segments; the browser view builds them with
``textContent`` and the static HTML escapes every segment, so no tool text is parsed as HTML.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import anywidget
import traitlets

from workbench._call import Call
from workbench._envelope import Envelope
from workbench._truncate import MARKER_RE
from workbench.families import render
from workbench.widgets._html import esc, pretty_json, with_html
from workbench.widgets._live_display import LiveDisplay
from workbench.widgets._static import STATIC, style_tag

Counter = Callable[[str], int]
PaneKey = Literal["canonical", "wire", "receipt", "before", "after"]
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

    def marks(self) -> dict[MarkKind, int]:
        """How many segments of each kind are marked."""
        found: dict[MarkKind, int] = {"truncation": 0, "artifact": 0}
        for _, kind in self.segments:
            if kind is not None:
                found[kind] += 1
        return found

    def label(self) -> str:
        """``1,234 chars · 310 tokens · 1 cut marker``: the pane's heading counts."""
        parts = [f"{self.chars:,} chars"]
        if self.tokens is not None:
            parts.append(f"{self.tokens:,} tokens")
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
    keys: tuple[PaneKey, ...] = ("canonical", "wire", "receipt")
    return tuple(
        Pane(
            key=key,
            title=titles[key],
            text=shown[key],
            chars=len(counted[key]),
            tokens=None if count is None else int(count(counted[key])),
            segments=highlight(shown[key], mark_patterns(envelope, as_json=key != "receipt")),
        )
        for key in keys
    )


def envelope_of_row(row: Mapping[str, Any]) -> Envelope | None:
    """The envelope of a history row, rebuilt from its canonical record (None if it has none)."""
    record = row.get("canonical")
    return Envelope.from_canonical(record) if isinstance(record, dict) else None


class EnvelopeInspector(anywidget.AnyWidget):
    """Canonical record, wire JSON and receipt of one envelope, side by side (``wb-inspector``).

    Give an Envelope (the receipt is rendered by its family, unless ``receipt`` is given) or a
    Call (its own receipt; a call still running fills the panes when it ends). ``count`` is a
    token counter such as ``len`` or a tokenizer's ``lambda s: len(enc.encode(s))``.
    """

    _esm = STATIC / "inspector.js"
    _css = STATIC / "inspector.css"

    header = traitlets.Dict(
        help="tool_name, status, call_id and summary_text of the envelope shown"
    ).tag(sync=True)
    panes = traitlets.List(
        traitlets.Dict(), help="canonical, wire and receipt panes: label, counts, segments"
    ).tag(sync=True)
    note = traitlets.Unicode("", help="why there is nothing to show yet, if so").tag(sync=True)

    def __init__(
        self,
        envelope_or_call: Envelope | Call | None = None,
        *,
        count: Counter | None = None,
        receipt: str | None = None,
    ) -> None:
        super().__init__()
        self.add_class("wb-inspector")
        self.count = count
        self.envelope: Envelope | None = None
        self.receipt: str | None = None
        self._panes: tuple[Pane, ...] = ()
        self._live = LiveDisplay()
        if isinstance(envelope_or_call, Call):
            self._follow(envelope_or_call)
        elif envelope_or_call is not None:
            self.show(envelope_or_call, receipt)
        else:
            self.note = "Nothing selected."

    @classmethod
    def from_row(cls, row: Mapping[str, Any], *, count: Counter | None = None) -> EnvelopeInspector:
        """An inspector of one history row: its canonical record and its recorded receipt."""
        inspector = cls(count=count)
        inspector.show_row(row)
        return inspector

    def _follow(self, call: Call) -> None:
        unsubscribe: list[Callable[[], None]] = []

        def ended(_event: object) -> None:
            # The terminal event is emitted once envelope and receipt are set.
            if call.envelope is not None and self.envelope is None:
                self.show(call.envelope, call.receipt)
                for stop in unsubscribe:
                    stop()

        self.note = f"{call.tool_name} {call.short_id} is {call.state}; waiting for it to end."
        # Subscribe before looking, so an end between the two cannot be missed.
        unsubscribe.append(call.subscribe(ended))
        ended(None)

    def show(self, envelope: Envelope, receipt: str | None = None) -> None:
        """Inspect ``envelope`` (and ``receipt``, or its family's rendering) from now on."""
        self.envelope = envelope
        self._panes = panes_of(envelope, receipt, self.count)
        self.receipt = self._panes[-1].text
        with self.hold_sync():
            self.header = {
                "tool_name": envelope.tool_name,
                "status": envelope.status,
                "call_id": envelope.call_id or "",
                "summary_text": envelope.summary_text,
                "kind": "" if envelope.error is None else envelope.error.kind.value,
            }
            self.panes = [pane.to_json() for pane in self._panes]
            self.note = ""
        self._republish()

    def show_row(self, row: Mapping[str, Any]) -> None:
        """Inspect a history row: the envelope rebuilt from its canonical record, its receipt."""
        envelope = envelope_of_row(row)
        if envelope is None:
            self.clear(f"call {row.get('call_id', '?')} has no canonical record")
        else:
            receipt = row.get("receipt")
            self.show(envelope, receipt if isinstance(receipt, str) else None)

    def clear(self, note: str = "Nothing selected.") -> None:
        """Show nothing, saying why."""
        self.envelope = None
        self.receipt = None
        self._panes = ()
        with self.hold_sync():
            self.header = {}
            self.panes = []
            self.note = note
        self._republish()

    @property
    def counts(self) -> dict[str, dict[str, int | None]]:
        """``{"canonical": {"chars": n, "tokens": m or None}, "wire": ..., "receipt": ...}``."""
        return {pane.key: {"chars": pane.chars, "tokens": pane.tokens} for pane in self._panes}

    def pane(self, key: PaneKey) -> Pane:
        """One pane by key; ``KeyError`` when nothing is shown."""
        for pane in self._panes:
            if pane.key == key:
                return pane
        raise KeyError(key)

    def to_html(self) -> str:
        """The static, escaped HTML form of what the inspector shows now."""
        return f"{style_tag('inspector.css')}{self.body_html()}"

    def body_html(self) -> str:
        """The static form without its stylesheet (for embedding in another view's HTML)."""
        header = self.header
        if header:
            status = esc(header.get("status", ""))
            title = (
                f"<div class='wb-inspector-header'><b>{esc(header.get('tool_name', ''))}</b> "
                f"<span class='wb-badge wb-status-{status}'>{status}</span> "
                f"<code>{esc(header.get('call_id', ''))}</code> "
                f"<span class='wb-inspector-summary'>{esc(header.get('summary_text', ''))}</span>"
                "</div>"
            )
        else:
            title = ""
        note = f"<div class='wb-inspector-note'>{esc(self.note)}</div>" if self.note else ""
        panes = "".join(pane.to_html() for pane in self._panes)
        return (
            f"<div class='wb-inspector wb-static'>{title}{note}"
            f"<div class='wb-inspector-panes'>{panes}</div></div>"
        )

    def _repr_mimebundle_(self, **kwargs: Any) -> tuple[dict[str, Any], dict[str, Any]]:
        data, metadata = super()._repr_mimebundle_(**kwargs) or ({}, {})
        return with_html(data, self.to_html()), metadata

    def _ipython_display_(self) -> None:
        """Show the inspector so that its saved ``text/html`` follows what it shows."""
        self._live.show(self._repr_mimebundle_()[0])

    def _republish(self) -> None:
        if self._live.shown:
            self._live.update(self._repr_mimebundle_()[0])
