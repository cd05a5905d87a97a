"""What a call has done so far, written by the lifecycle that runs it.

A ``Call`` is the person's handle over one ``Progress``. The lifecycle and its drivers write
here (the state, the arguments as checked, events, output, the stop control, the gate, who
runs the call); the handle, its card and the history read. Events reach subscribers on the
runtime loop, in order, even when the call runs on another thread.
"""

from __future__ import annotations

import asyncio
import math
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Literal, TypeVar

from workbench.output import ArtifactSink, ArtifactStore, Spool, Stream
from workbench.runtime._clock import CallClock
from workbench.runtime._control import StopControl
from workbench.runtime._events import Event, EventType
from workbench.runtime._gate import Gate
from workbench.runtime._loop import call_in_loop, on_loop_thread

if TYPE_CHECKING:
    from workbench.declare import ToolSpec
    from workbench.envelope import Envelope
    from workbench.preflight import Coercion

CallState = Literal["queued", "awaiting_approval", "running", "succeeded", "failed", "terminated"]
Driver = Literal["loop", "inline"]
Subscriber = Callable[[Event], object]
Made = TypeVar("Made")

OUTPUT_EVENTS_KEPT = 2_000
OUTPUT_CHARS_KEPT = 1 << 20
PROGRESS_EVENTS_KEPT = 200
"""Progress reports a call keeps as events; past them each report replaces the last kept one,
so the events (and the history row) always end with the latest."""
PROGRESS_MESSAGE_CHARS = 1_000


def _finite(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def _resolve(future: asyncio.Future[Envelope], envelope: Envelope) -> None:
    if not future.done():
        future.set_result(envelope)


class Progress:
    """One call's state as its lifecycle writes it; safe to read from any thread."""

    def __init__(
        self,
        call_id: str,
        loop: asyncio.AbstractEventLoop,
        grace: float,
        artifacts: ArtifactStore,
    ) -> None:
        self.call_id = call_id
        self.loop = loop
        self.spec: ToolSpec | None = None
        self.arguments: dict[str, Any] | None = None
        self.coercions: tuple[Coercion, ...] = ()
        self.modifications: list[dict[str, Any]] = []
        self.state: CallState = "queued"
        self.events: list[Event] = []
        self.envelope: Envelope | None = None
        self.receipt: str | None = None
        self.injected = False
        self.notes: list[str] = []
        self.traceback: str | None = None
        self.queued_at = time.time()
        self.started_at: float | None = None
        self.ended_at: float | None = None
        self.control = StopControl(grace)
        self.clock = CallClock()
        self.streams: dict[str, Spool] = {}
        self.dropped_output_events = 0
        self.reported: dict[str, Any] | None = None  # the latest progress report
        self.driver: Driver | None = None  # who runs the lifecycle; see claim()
        self.left_for_waiter = False  # its start was left a moment for a wait()
        self.in_lane = False  # queued for a lane; Terminate takes it back to the loop
        self.replay_of: dict[str, Any] | None = None  # the tool.replayed event of a replay
        self.history_problem: str | None = None  # what went wrong writing the row, if any
        self.raw_args_kept: tuple[Any, str | None] | None = None  # see _raw_args
        self.finished = False
        self._artifacts = artifacts
        self._gate: Gate | None = None  # made on first use: most calls never ask a person
        self._sink: ArtifactSink | None = None  # made on first use: most calls keep no file
        self._kept_output_events = 0
        self._kept_output_chars = 0
        self._kept_progress: list[int] = []  # where the kept progress events are in events
        # Replaced, never changed in place, so delivery reads them without a copy.
        self._subscribers: tuple[Subscriber, ...] = ()
        self._lock = threading.Lock()
        self._done_event: threading.Event | None = None  # made only for a thread that waits
        self._awaiters: tuple[tuple[asyncio.AbstractEventLoop, asyncio.Future[Envelope]], ...] = ()
        self._on_end: list[Callable[[], object]] | None = None
        self._inline_thread: int | None = None  # the waiting thread running it inline

    # ── who runs it ───────────────────────────────────────────────────────────────────────
    def claim(self, driver: Driver) -> bool:
        """Take the running of this call, once: the runtime loop, or a thread that waits for
        it and runs it inline. False when someone else took it."""
        with self._lock:
            if self.driver is not None:
                return False
            self.driver = driver
            if driver == "inline":
                self._inline_thread = threading.get_ident()
            return True

    def here_inline(self) -> bool:
        """True on the thread that runs this call inline."""
        return self._inline_thread is not None and self._inline_thread == threading.get_ident()

    @property
    def gate(self) -> Gate:
        """Where this call waits for a person (approval, a custom tool's result)."""
        gate = self._gate
        return gate if gate is not None else self._once("_gate", Gate)

    @property
    def gate_if_made(self) -> Gate | None:
        """The gate, if anyone asked for it yet."""
        return self._gate

    @property
    def sink(self) -> ArtifactSink:
        """The artifacts (files) this call keeps: spilled output, whole listings."""
        sink = self._sink
        if sink is not None:
            return sink
        return self._once("_sink", lambda: ArtifactSink(self._artifacts, self.call_id))

    def _once(self, name: str, make: Callable[[], Made]) -> Made:
        """The attribute ``name``, made by ``make()`` on first use: once, whatever the
        threads (most calls never need a gate or a sink)."""
        with self._lock:
            made: Made | None = getattr(self, name)
            if made is None:
                made = make()
                setattr(self, name, made)
        return made

    @property
    def sink_if_made(self) -> ArtifactSink | None:
        """The sink, if anything asked for one (None: no artifacts to list)."""
        return self._sink

    # ── events ────────────────────────────────────────────────────────────────────────────
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
            and self._inline_thread is not None
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
                self.notes.append(f"subscriber {subscriber!r} failed: {exc!r}")

    def warn(self, text: str) -> None:
        """Note a problem for the person (shown on the card, kept in the history); from any
        thread."""
        self.notes.append(text)
        if self.finished:
            return
        if self.here_inline():
            self.emit("tool.warning", text=text)
        else:
            call_in_loop(self.loop, self._emit_if_running, "tool.warning", {"text": text})

    def _emit_if_running(self, type_: EventType, data: dict[str, Any]) -> None:
        if not self.finished:
            self.emit(type_, **data)

    # ── output ────────────────────────────────────────────────────────────────────────────
    def spool(self, stream: str) -> Spool:
        """The spool of one stream, made on first use."""
        spool = self.streams.get(stream)
        if spool is None:
            sink = self.sink  # outside the lock, which making the sink takes
            with self._lock:
                spool = self.streams.get(stream)
                if spool is None:
                    spool = Spool(sink, f"{stream}.log")
                    self.streams[stream] = spool
        return spool

    def write_output(self, text: str, stream: Stream = "stdout", raw: bytes | None = None) -> None:
        """Record output: complete bytes to the stream's spool, the text as an event. Safe from
        any thread; the event is delivered on the runtime loop."""
        if self.finished:
            return
        self.spool(stream).write(raw if raw is not None else text.encode("utf-8"))
        if not text:
            return
        if self.here_inline() or on_loop_thread(self.loop):
            self.emit("tool.output", stream=stream, text=text)
        else:
            call_in_loop(
                self.loop, self._emit_if_running, "tool.output", {"stream": stream, "text": text}
            )

    def report(self, done: float, total: float | None = None, message: str | None = None) -> None:
        """Record how far the call has come (a ``tool.progress`` event, delivered on the
        runtime loop); from any thread. Raises ``ValueError`` for a value that is not a finite
        number or a ``total`` that is not positive."""
        if not _finite(done):
            raise ValueError(f"progress must be a finite number, not {done!r}")
        if total is not None and not (_finite(total) and total > 0):
            raise ValueError(f"total must be a positive number or None, not {total!r}")
        if message is not None and not isinstance(message, str):
            raise ValueError(f"message must be a string or None, not {type(message).__name__}")
        if self.finished:
            return
        data = {
            "done": done,
            "total": total,
            "message": None if message is None else message[:PROGRESS_MESSAGE_CHARS],
        }
        self.reported = data
        if self.here_inline() or on_loop_thread(self.loop):
            self.emit("tool.progress", **data)
        else:
            call_in_loop(self.loop, self._emit_if_running, "tool.progress", data)

    # ── the end ───────────────────────────────────────────────────────────────────────────
    def on_end(self, callback: Callable[[], object]) -> None:
        """Run ``callback`` once the call has ended (a driver forgetting it)."""
        with self._lock:
            self._on_end = [*(self._on_end or ()), callback]

    def done_event(self) -> threading.Event | None:
        """An event set when the call ends, for a thread that waits; None once it ended."""
        with self._lock:
            if self.finished:
                return None
            if self._done_event is None:
                self._done_event = threading.Event()
            return self._done_event

    def add_awaiter(
        self, loop: asyncio.AbstractEventLoop, future: asyncio.Future[Envelope]
    ) -> bool:
        """Resolve ``future`` on ``loop`` when the call ends; False when it already has."""
        with self._lock:
            if self.finished:
                return False
            self._awaiters = (*self._awaiters, (loop, future))
            return True

    def announce_end(self, envelope: Envelope, terminal: Event) -> None:
        """Tell everyone the call ended: subscribers first (the terminal event), then threads
        that wait and tasks that await. The row is committed before this runs."""
        self.deliver_now(terminal)
        with self._lock:
            self.finished = True
            event, awaiters, ended = self._done_event, self._awaiters, self._on_end
            self._awaiters = ()
            self._on_end = None
        if event is not None:
            event.set()
        for callback in ended or ():
            callback()
        for loop, future in awaiters:
            if on_loop_thread(loop):
                _resolve(future, envelope)
            else:
                call_in_loop(loop, _resolve, future, envelope)
