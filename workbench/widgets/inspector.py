"""The envelope inspector: the canonical record, the wire JSON and the receipt side by side.

It answers "what exactly does the model see of this call, and what does it cost?". For a call
that sends structured content over MCP (a served tool with an output schema, or a connected
server's tool), it also shows the call as each client sees it: the text a text-preferring client
hands its model beside the structured content a structured-preferring client hands its model
whole (the receipt budget binds only the first). Each pane
carries its character count (and a token count when a counter function is given), and the cut
markers (``[output truncated: ...]``) and artifact references are marked in all three, so a cut
receipt can be traced to the file that holds the complete output.

The panes are computed in Python (``_panes``) as text segments; the browser view builds them with
``textContent`` and the static HTML escapes every segment, so no tool text is parsed as HTML.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import anywidget
import traitlets

from workbench.declare import Resolve, ToolSpec, client_views
from workbench.envelope import Envelope
from workbench.runtime import Call
from workbench.widgets._html import esc
from workbench.widgets._panes import OPENAI_TOKENS, Counter, Pane, PaneKey, client_panes, panes_of
from workbench.widgets._static import STATIC, style_tag, view_module
from workbench.widgets._view import LiveView


def envelope_of_row(row: Mapping[str, Any]) -> Envelope | None:
    """The envelope of a history row, rebuilt from its canonical record (None if it has none)."""
    record = row.get("canonical")
    return Envelope.from_canonical(record) if isinstance(record, dict) else None


class EnvelopeInspector(LiveView, anywidget.AnyWidget):
    """Canonical record, wire JSON and receipt of one envelope, side by side (``wb-inspector``).

    Give an Envelope (the receipt is rendered by its family, unless ``receipt`` is given) or a
    Call (its own receipt; a call still running fills the panes when it ends). ``count`` is a
    token counter such as ``len`` or a tokenizer's ``lambda s: len(enc.encode(s))``. A Call
    (or an envelope given with its tool's ``spec`` and the ``resolve`` of its artifacts) that
    sends structured content over MCP is also shown as each client sees it (``clients``).
    """

    shared_stylesheet = False  # its static HTML starts with its own stylesheets

    _esm = view_module("inspector.js")
    _css = STATIC / "inspector.css"

    header = traitlets.Dict(
        help="tool_name, status, call_id and summary_text of the envelope shown"
    ).tag(sync=True)
    panes = traitlets.List(
        traitlets.Dict(), help="canonical, wire and receipt panes: label, counts, segments"
    ).tag(sync=True)
    clients = traitlets.List(
        traitlets.Dict(),
        help="as each client sees it: the text client's and the structured client's panes",
    ).tag(sync=True)
    clients_note = traitlets.Unicode(
        "", help="how much more a structured-preferring client hands its model"
    ).tag(sync=True)
    note = traitlets.Unicode("", help="why there is nothing to show yet, if so").tag(sync=True)

    def __init__(
        self,
        envelope_or_call: Envelope | Call | None = None,
        *,
        count: Counter | None = OPENAI_TOKENS,
        receipt: str | None = None,
    ) -> None:
        super().__init__()
        self.add_class("wb-inspector")
        self.count = count
        self.envelope: Envelope | None = None
        self.receipt: str | None = None
        self._panes: tuple[Pane, ...] = ()
        self._clients: tuple[Pane, ...] = ()
        if isinstance(envelope_or_call, Call):
            self._follow(envelope_or_call)
        elif envelope_or_call is not None:
            self.show(envelope_or_call, receipt)
        else:
            self.note = "Nothing selected."

    @classmethod
    def from_row(
        cls,
        row: Mapping[str, Any],
        *,
        count: Counter | None = OPENAI_TOKENS,
        spec: ToolSpec | None = None,
        resolve: Resolve | None = None,
    ) -> EnvelopeInspector:
        """An inspector of one history row: its canonical record and its recorded receipt
        (as each client sees it too, given the tool's ``spec`` and ``resolve``)."""
        inspector = cls(count=count)
        inspector.show_row(row, spec=spec, resolve=resolve)
        return inspector

    def _follow(self, call: Call) -> None:
        unsubscribe: list[Callable[[], None]] = []

        def ended(_event: object) -> None:
            # The terminal event is emitted once envelope and receipt are set.
            if call.envelope is not None and self.envelope is None:
                resolve = call.registry.artifacts.resolve
                self.show(call.envelope, call.receipt, spec=call.spec, resolve=resolve)
                for stop in unsubscribe:
                    stop()

        self.note = f"{call.tool_name} {call.short_id} is {call.state}; waiting for it to end."
        # Subscribe before looking, so an end between the two cannot be missed.
        unsubscribe.append(call.subscribe(ended))
        ended(None)

    def show(
        self,
        envelope: Envelope,
        receipt: str | None = None,
        *,
        spec: ToolSpec | None = None,
        resolve: Resolve | None = None,
    ) -> None:
        """Inspect ``envelope`` (and ``receipt``, or its family's rendering) from now on; as
        each client sees it too when ``spec`` and ``resolve`` are given."""
        self.envelope = envelope
        self._panes = panes_of(envelope, receipt, self.count)
        self.receipt = self._panes[-1].text
        views = None if resolve is None else client_views(spec, envelope, self.receipt, resolve)
        self._clients = () if views is None else client_panes(envelope, views, self.count)
        clients_note = ""
        if views is not None and self._clients:
            clients_note = (
                f"A client that prefers structured content hands its model "
                f"{views.extra_chars:,} more chars than one that reads the text."
                if views.extra_chars
                else "Both clients hand their model the same amount."
            )
        elif views is not None and views.problem:
            clients_note = f"The structured content could not be read back: {views.problem}"
        with self.hold_sync():
            self.header = {
                "tool_name": envelope.tool_name,
                "status": envelope.status,
                "call_id": envelope.call_id or "",
                "summary_text": envelope.summary_text,
                "kind": "" if envelope.error is None else envelope.error.kind.value,
            }
            self.panes = [pane.to_json() for pane in self._panes]
            self.clients = [pane.to_json() for pane in self._clients]
            self.clients_note = clients_note
            self.note = ""
        self._republish()

    def show_row(
        self,
        row: Mapping[str, Any],
        *,
        spec: ToolSpec | None = None,
        resolve: Resolve | None = None,
    ) -> None:
        """Inspect a history row: the envelope rebuilt from its canonical record, its receipt."""
        envelope = envelope_of_row(row)
        if envelope is None:
            self.clear(f"call {row.get('call_id', '?')} has no canonical record")
        else:
            receipt = row.get("receipt")
            shown = receipt if isinstance(receipt, str) else None
            self.show(envelope, shown, spec=spec, resolve=resolve)

    def clear(self, note: str = "Nothing selected.") -> None:
        """Show nothing, saying why."""
        self.envelope = None
        self.receipt = None
        self._panes = ()
        self._clients = ()
        with self.hold_sync():
            self.header = {}
            self.panes = []
            self.clients = []
            self.clients_note = ""
            self.note = note
        self._republish()

    @property
    def counts(self) -> dict[str, dict[str, int | None]]:
        """``{"canonical": {"chars": n, "tokens": m or None}, "wire": ..., "receipt": ...}``."""
        return {pane.key: {"chars": pane.chars, "tokens": pane.tokens} for pane in self._panes}

    def pane(self, key: PaneKey) -> Pane:
        """One pane by key (the client views' too); ``KeyError`` when it is not shown."""
        for pane in (*self._panes, *self._clients):
            if pane.key == key:
                return pane
        raise KeyError(key)

    def static_html(self) -> str:
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
            f"<div class='wb-inspector-panes'>{panes}</div>{self._clients_html()}</div>"
        )

    def _clients_html(self) -> str:
        if not self._clients:
            return ""
        panes = "".join(pane.to_html() for pane in self._clients)
        return (
            "<div class='wb-inspector-clients'><h4>As each client sees it</h4>"
            f"<div class='wb-inspector-clients-note'>{esc(self.clients_note)}</div>"
            f"<div class='wb-inspector-panes'>{panes}</div></div>"
        )
