"""The tool-call card: a live view of one Call, from queued to its envelope.

A card subscribes to its call and redraws from the call's own state; it holds no logic the call
lacks (Terminate is ``call.terminate()``, Allow is ``call.approve()``, ...). Output is coalesced:
each event costs O(chunk) in the kernel (appended to a bounded tail) and the widgets are
redrawn at most once per ``flush_interval`` on the call's event loop, whatever the output rate.
"""

from __future__ import annotations

import asyncio
import threading
import time
import weakref
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import ipywidgets

from workbench.runtime import TERMINAL_EVENTS, Event, on_loop_thread
from workbench.widgets._card_html import (
    arguments_html,
    ended,
    header_html,
    progress_html,
    receipt_html,
)
from workbench.widgets._html import esc, shared_style
from workbench.widgets._output import (
    MAX_CHARS,
    MAX_LINES,
    STREAMS,
    OutputPane,
    OutputTail,
    omitted_note,
    output_html,
)
from workbench.widgets._timer import call_later
from workbench.widgets._view import LiveView
from workbench.widgets.approval import ApprovalPrompt
from workbench.widgets.custom import CustomToolForm
from workbench.widgets.results import result_view

if TYPE_CHECKING:
    from workbench.runtime import Call

CONTROLLABLE_STATES = frozenset({"queued", "awaiting_approval", "running"})
FLUSH_INTERVAL_S = 0.1
TICK_INTERVAL_S = 0.25
BLOCKED_TIP = "this tool declares interrupt='block': it cannot be terminated"
Listener = Callable[[], None]


def _set(widget: ipywidgets.Widget, name: str, value: Any) -> bool:
    if getattr(widget, name) == value:
        return False
    setattr(widget, name, value)
    return True


class CallCard(LiveView, ipywidgets.VBox):  # type: ignore[misc]
    """A live card for ``call`` (CSS class ``wb-card``).

    Header (tool, short id, state badge, ticking elapsed time, a mark once a person approved
    it), the arguments on one line (expanding to as sent / as coerced and each coercion), the
    latest progress report as a bar with its message (``wb-progress``), an
    approval prompt or custom-tool form while the call waits for the person, a Terminate button
    (``wb-terminate``, shown only while the call is queued, awaiting approval or running), the
    output tail (``wb-output-pane``, the one place output appears), then the result view by
    family and the receipt. The button sits above the output, so streaming output, which
    grows the pane, never moves it from under a person's pointer.

    Once the call has ended and its result offers nothing to click (no Edit and retry, no
    listing to open), the card's display is replaced by its static HTML: the notebook then
    saves a form that reads the same with no kernel and no widget manager. The output pane is
    made when there is output to show in a live view (the first output of a running call, a
    card used as a widget), or when ``output`` is asked for: the pane is an anywidget, whose
    model each page makes and loads a module for, and a notebook of finished calls would make
    one per card to show nothing. ``whole=False`` (how a Call displays its card) leaves a
    settled card's result widgets and pane unmade until ``card(call)`` asks for them.

    Counters for tests and benchmarks: ``events_seen`` (events delivered to the card),
    ``updates_sent`` (coalesced redraws that changed what the browser shows).
    """

    def __init__(
        self,
        call: Call,
        *,
        flush_interval: float = FLUSH_INTERVAL_S,
        max_lines: int = MAX_LINES,
        max_chars: int = MAX_CHARS,
        whole: bool = True,
    ) -> None:
        super().__init__()
        self.call = call
        self._whole = whole
        self.flush_interval = flush_interval
        self.events_seen = 0
        self.updates_sent = 0
        self.tail = OutputTail(max_lines, max_chars)
        self.listeners: list[Listener] = []
        self.result_widget: ipywidgets.Widget | None = None
        self.header = ipywidgets.HTML()
        self.arguments = ipywidgets.HTML()
        self.progress_bar = ipywidgets.HTML()
        self.warnings = ipywidgets.HTML()
        self.prompt = ipywidgets.VBox()
        self._output: OutputPane | None = None
        self.terminate_button = ipywidgets.Button(
            description="Terminate", icon="stop", button_style="danger"
        )
        self.terminate_button.add_class("wb-terminate")
        self.terminate_button.on_click(lambda _: call.terminate())
        self.result = ipywidgets.VBox()
        self.children = (
            shared_style(),
            self.header,
            self.warnings,
            self.arguments,
            self.progress_bar,
            self.prompt,
            self.terminate_button,
            self.result,
        )
        self.add_class("wb-card")
        self._lock = threading.RLock()
        self._final = False
        self._flush_scheduled = False
        self._last_flush = 0.0
        self._unsubscribe: Callable[[], None] = lambda: None
        self._seeded: set[int] = set()
        with self._lock:
            self._unsubscribe = call.subscribe(self._on_event)
            self._seed()
            if not ended(call):
                self._render()
                self._schedule(TICK_INTERVAL_S, self._tick)
        if ended(call):
            self._end()

    def _seed(self) -> None:
        """Start the tail with the output printed before the card subscribed.

        The call's kept events give it in order; an event both kept and delivered (it was
        emitted while we subscribed) is drawn once. Past the events a call keeps, the streams'
        tails are used instead, one after the other.
        """
        call = self.call
        if call.sheet.log.dropped_output_events:
            for stream in STREAMS:
                self.tail.append(stream, call.output_tail(stream, self.tail.max_chars))
            return
        for event in list(call.events):
            if event.type == "tool.output":
                self._seeded.add(id(event))
                self.tail.append(event.stream or "stdout", event.text)

    @property
    def output(self) -> OutputPane:
        """The output pane (``wb-output-pane``); made on first use for a card of a call that
        had ended with no output when the card was made."""
        with self._lock:
            if self._output is None:
                self._add_output_pane()
                self._render_output()
            assert self._output is not None
            return self._output

    def _ensure_output_pane(self) -> None:
        """Give the card its output pane once it has output to show in a live view. A card
        shown as its static HTML alone gets none: the pane is an anywidget, whose model the
        page would make (and load a module for) to draw nothing."""
        with self._lock:
            if self._output is None and self.call.output_size():
                self._add_output_pane()

    def _add_output_pane(self) -> None:
        """Make the pane and put it between the Terminate button and the result."""
        pane = self._output = OutputPane(layout=ipywidgets.Layout(display="none"))
        children = list(self.children)
        children.insert(children.index(self.result), pane)
        self.children = tuple(children)

    def _output_shown(self) -> tuple[list[tuple[str, str]], str, int]:
        """The tail's runs, the note on what they leave out, and the call's output size."""
        with self._lock:
            segments = self.tail.segments()
        shown = sum(len(text.encode("utf-8", "replace")) for _, text in segments)
        total = self.call.output_size()
        return segments, omitted_note(total - shown, total), total

    # ── events, on the call's loop ───────────────────────────────────────────────────────
    def _on_event(self, event: Event) -> None:
        self.events_seen += 1
        if event.type == "tool.output":
            with self._lock:
                if id(event) in self._seeded:
                    self._seeded.discard(id(event))
                else:
                    self.tail.append(event.stream or "stdout", event.text)
        if event.type in TERMINAL_EVENTS:
            self._end()
        else:
            self._request_flush()

    def _request_flush(self) -> None:
        if self._flush_scheduled or self._final:
            return
        self._flush_scheduled = True
        delay = max(0.0, self._last_flush + self.flush_interval - time.monotonic())
        self._schedule(delay, self._flush)

    def _flush(self) -> None:
        with self._lock:
            self._flush_scheduled = False
            self._last_flush = time.monotonic()
            if not self._final and self._render():
                self.updates_sent += 1

    def _tick(self) -> None:
        if not self._final and not ended(self.call):
            self._request_flush()
            self._schedule(TICK_INTERVAL_S, self._tick)

    def _schedule(self, delay: float, callback: Callable[[], None]) -> None:
        """Run ``callback`` after ``delay`` s: on the call's event loop while it has one open
        (where its events arrive), else on the cards' timer thread."""
        loop: asyncio.AbstractEventLoop | None = getattr(self.call, "_loop", None)
        if not isinstance(loop, asyncio.AbstractEventLoop) or loop.is_closed():
            call_later(delay, callback)
        elif on_loop_thread(loop):
            loop.call_later(delay, callback)
        else:
            loop.call_soon_threadsafe(loop.call_later, delay, callback)

    # ── drawing ──────────────────────────────────────────────────────────────────────────
    def _render(self) -> bool:
        """Redraw everything from the call's state; True when anything changed."""
        call = self.call
        if not self._final:
            self._ensure_output_pane()
        changed = _set(self.header, "value", header_html(call))
        changed |= _set(self.warnings, "value", notes_html(call))
        changed |= _set(self.arguments, "value", arguments_html(call))
        changed |= _set(self.progress_bar, "value", progress_html(call))
        changed |= self._render_prompt()
        changed |= self._render_output()
        # The spec is known once the call starts; a tool that blocks interrupts cannot stop.
        blocks = call.spec is not None and call.spec.interrupt == "block"
        controllable = call.state in CONTROLLABLE_STATES and not ended(call)
        changed |= _set(self.terminate_button.layout, "display", None if controllable else "none")
        changed |= _set(self.terminate_button, "disabled", not controllable or blocks)
        if blocks:
            changed |= _set(
                self.terminate_button, "tooltip", "this tool declares interrupt='block'"
            )
        return changed

    def _render_output(self) -> bool:
        """Show the tail in the pane, if the card has one; True when anything changed."""
        pane = self._output
        if pane is None:
            return False
        segments, note, total = self._output_shown()
        with pane.hold_sync():
            changed = _set(pane, "segments", segments)
            changed |= _set(pane, "note", note)
        if segments or total:
            changed |= _set(pane.layout, "display", None)
        return changed

    def _render_prompt(self) -> bool:
        call = self.call
        wanted = None if ended(call) else call.pending_action
        current = self.prompt.children[0] if self.prompt.children else None
        if wanted == "approval" and not isinstance(current, ApprovalPrompt):
            # The card shows the arguments already: the prompt does not repeat them.
            self.prompt.children = (ApprovalPrompt(call, with_arguments=False),)
        elif wanted == "result" and not isinstance(current, CustomToolForm):
            self.prompt.children = (CustomToolForm(call),)
        elif wanted is None and current is not None:
            self.prompt.children = ()
        else:
            return False
        return True

    def _end(self) -> None:
        """Draw the final card once: result by family, receipt, Terminate disabled."""
        with self._lock:
            if self._final:
                return
            self._final = True
            self._unsubscribe()
            self._seeded.clear()
            self._render()
            envelope = self.call.envelope
            if envelope is not None:
                view = result_view(envelope, call=self.call)
                follow_ups = getattr(view, "follow_ups", None)
                if follow_ups is not None:
                    follow_ups.listeners.append(self._static_changed)
                self.result_widget = view
                # A shown card with nothing left to click becomes its static HTML right now:
                # building its result widgets in the page while the page swaps them out only
                # ends in "Could not add child view to box". They are built when the card is
                # asked for again (``card(call)``), e.g. to sit in a box of widgets.
                if not self.settled or (self._whole and not self._live.shown):
                    self.build_result()
            self.updates_sent += 1
        self._static_changed()

    def make_whole(self) -> None:
        """Make the card whole from now on: its result widgets and output pane, now if its
        call has ended, else when it ends."""
        with self._lock:
            self._whole = True
            self.build_result()

    def build_result(self) -> None:
        """Put the result view and the receipt into the card's widgets (once)."""
        with self._lock:
            self._ensure_output_pane()
            self._render_output()
            view = self.result_widget
            if view is None or self.result.children:
                return
            receipt = ipywidgets.HTML(receipt_html(self.call.receipt or ""))
            self.result.children = (view, receipt)

    # ── static form and display ──────────────────────────────────────────────────────────
    def static_html(self) -> str:
        """The card as it is now, as escaped HTML (without the stylesheet)."""
        call = self.call
        parts = [header_html(call), notes_html(call), arguments_html(call), progress_html(call)]
        parts.extend(getattr(child, "static_html", str)() for child in self.prompt.children)
        segments, note, _ = self._output_shown()
        parts.append(output_html(segments, note))
        if self.result_widget is not None:
            parts.append(getattr(self.result_widget, "static_html", str)())
            parts.append(receipt_html(call.receipt or ""))
        return f"<div class='wb-card wb-static'>{''.join(parts)}</div>"

    @property
    def settled(self) -> bool:
        """True once the call ended and nothing on the card can be clicked any more: its
        display is then its static HTML alone."""
        view = self.result_widget
        return self._final and not bool(getattr(view, "interactive", False))

    def _repr_mimebundle_(self, **kwargs: Any) -> Any:
        if self.settled:
            return {"text/plain": repr(self.call), "text/html": self.to_html()}
        return super()._repr_mimebundle_(**kwargs)

    def _static_changed(self) -> None:
        if self._final:
            # A settled card is published as HTML alone: reopened without a kernel, a widget
            # view would say "model not found" where this reads as the card did.
            self._republish()
        for listener in list(self.listeners):
            listener()


_cards: weakref.WeakValueDictionary[str, CallCard] = weakref.WeakValueDictionary()
_cards_lock = threading.Lock()


def notes_html(call: Call) -> str:
    """The runtime's notes for the person (a loop the tool blocked, a body that ignored
    cancellation, a history write that failed), escaped; empty when there are none."""
    notes = list(call.notes)
    if not notes:
        return ""
    items = "".join(f"<li>{esc(note)}</li>" for note in notes)
    return f"<ul class='wb-warnings wb-notes'>{items}</ul>"


def card(call: Call) -> CallCard:
    """The card of ``call`` whole, to be used as a widget (in a box, say): one per call,
    created on first use."""
    view = displayed_card(call)
    view.make_whole()  # a settled card shown as HTML may be used as a widget now
    return view


def displayed_card(call: Call) -> CallCard:
    """The card of ``call`` as a Call displays it: one per call, created on first use. A card
    whose call had ended with nothing left to click is shown as its static HTML alone, so its
    result widgets and output pane are not made until the card is used as a widget."""
    with _cards_lock:
        existing = _cards.get(call.id)
        if existing is not None and existing.call is call:
            return existing
        created = _cards[call.id] = CallCard(call, whole=False)
        return created


__all__ = ["CallCard", "card", "displayed_card"]
