"""A call's events: kept in order, bounded, and delivered to its subscribers on the runtime loop.

Output events past a bound are only counted (the complete output is in the stream spools);
progress reports past a bound replace the last one kept, so the events (and the history row)
always end with the latest. Subscribers hear of every event in order, on the runtime loop even
when the call runs inline on another thread.
"""

from __future__ import annotations

import asyncio
import math
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from workbench.runtime._events import Event, EventType
from workbench.runtime._loop import call_in_loop, on_loop_thread

if TYPE_CHECKING:
    from workbench.runtime._sheet import Phase

Subscriber = Callable[[Event], object]

OUTPUT_EVENTS_KEPT = 2_000
OUTPUT_CHARS_KEPT = 1 << 20
PROGRESS_EVENTS_KEPT = 200
"""Progress reports a call keeps as events; past them each report replaces the last kept one,
so the events (and the history row) always end with the latest."""
PROGRESS_MESSAGE_CHARS = 1_000


def _finite(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


class EventLog:
    """The events of one call and who listens to them; safe to use from any thread. ``phase``
    says whether the call runs inline on a thread of its own (its events are then delivered
    on the loop); ``noted`` keeps a subscriber's failure where the person reads it."""

    def __init__(
        self,
        call_id: str,
        loop: asyncio.AbstractEventLoop,
        phase: Phase,
        noted: Callable[[str], None],
    ) -> None:
        self.call_id = call_id
        self.loop = loop
        self.events: list[Event] = []
        self.dropped_output_events = 0
        """Output events counted but not kept (past the bound)."""
        self.reported: dict[str, Any] | None = None
        """The latest progress report."""
        self._phase = phase
        self._noted = noted
        self._kept_output_events = 0
        self._kept_output_chars = 0
        self._kept_progress: list[int] = []  # where the kept progress events are in events
        # Replaced, never changed in place, so delivery reads them without a copy.
        self._subscribers: tuple[Subscriber, ...] = ()
        self._lock = threading.Lock()

    def subscribe(self, subscriber: Subscriber) -> None:
        with self._lock:
            self._subscribers = (*self._subscribers, subscriber)

    def unsubscribe(self, subscriber: Subscriber) -> None:
        with self._lock:
            if subscriber in self._subscribers:
                kept = list(self._subscribers)
                kept.remove(subscriber)
                self._subscribers = tuple(kept)

    @property
    def subscribed(self) -> bool:
        """True when anyone listens to this call's events."""
        return bool(self._subscribers)

    def emit(self, type_: EventType, **data: Any) -> Event:
        """Record an event and deliver it to the subscribers."""
        event = Event(type_, self.call_id, data=data)
        if type_ == "tool.progress":
            self._keep_progress(event)
        elif type_ != "tool.output":
            self.events.append(event)
        elif (
            self._kept_output_events < OUTPUT_EVENTS_KEPT
            and self._kept_output_chars < OUTPUT_CHARS_KEPT
        ):
            self._kept_output_events += 1
            self._kept_output_chars += len(event.text)
            self.events.append(event)
        else:
            # The complete output is in the stream spools; the list keeps only the first events.
            self.dropped_output_events += 1
        self._deliver(event)
        return event

    def emit_soon(self, type_: EventType, data: dict[str, Any], ended: Callable[[], bool]) -> None:
        """``emit`` from any thread: here on the runtime loop's thread or the one running the
        call inline, else on the loop; either way only until ``ended()``."""
        if self._phase.here_inline() or on_loop_thread(self.loop):
            if not ended():
                self.emit(type_, **data)
        else:
            call_in_loop(self.loop, self._emit_unless, ended, type_, data)

    def _emit_unless(
        self, ended: Callable[[], bool], type_: EventType, data: dict[str, Any]
    ) -> None:
        if not ended():
            self.emit(type_, **data)

    def report(self, done: float, total: float | None, message: str | None) -> dict[str, Any]:
        """A progress report checked and kept as the latest; raises ``ValueError`` for a value
        that is not a finite number or a ``total`` that is not positive."""
        if not _finite(done):
            raise ValueError(f"progress must be a finite number, not {done!r}")
        if total is not None and not (_finite(total) and total > 0):
            raise ValueError(f"total must be a positive number or None, not {total!r}")
        if message is not None and not isinstance(message, str):
            raise ValueError(f"message must be a string or None, not {type(message).__name__}")
        data = {
            "done": done,
            "total": total,
            "message": None if message is None else message[:PROGRESS_MESSAGE_CHARS],
        }
        self.reported = data
        return data

    def _keep_progress(self, event: Event) -> None:
        kept = self._kept_progress
        if len(kept) < PROGRESS_EVENTS_KEPT:
            kept.append(len(self.events))
            self.events.append(event)
        else:
            self.events[kept[-1]] = event

    def subscribed_on_the_loop(self) -> bool:
        """True when subscribers must hear of an event on the runtime loop, not here: the call
        runs inline on another thread (subscribers run on the loop, in order, even then)."""
        return (
            bool(self._subscribers)
            and self._phase.inline_thread is not None
            and not on_loop_thread(self.loop)
        )

    def _deliver(self, event: Event) -> None:
        if not self._subscribers:
            return
        if self.subscribed_on_the_loop():
            call_in_loop(self.loop, self.deliver_now, event)
            return
        self.deliver_now(event)

    def deliver_now(self, event: Event) -> None:
        """Hand ``event`` to every subscriber here; one that raises is noted, never raised."""
        for subscriber in self._subscribers:
            try:
                subscriber(event)
            except Exception as exc:
                # Kept in the history; not an event, which would reach the same subscriber.
                self._noted(f"subscriber {subscriber!r} failed: {exc!r}")
