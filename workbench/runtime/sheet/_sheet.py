"""What a call has done so far, in parts each with one job, written by the lifecycle that runs
it and read by the handle, its card and the history.

    phase     who runs it, and where it stands (queued, awaiting approval, running, ended)
    asked     what it was asked: the tool's spec, the arguments as checked, what was forgiven
    times     when it was queued, started and ended, and its clock
    outcome   how it ended: the envelope, the receipt, notes, the traceback, a history problem
    output    its streams' complete bytes and the files it keeps
    log       its events, delivered in order to its subscribers (``EventLog``)
    ending    who hears of the end: threads that wait, tasks that await, callbacks

A ``CallSheet`` holds them, with the call's stop control and (made on first use) its gate.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Literal, TypeVar

from workbench.output import ArtifactSink, ArtifactStore, Spool, Stream
from workbench.runtime.sheet._clock import CallClock
from workbench.runtime.sheet._control import StopControl
from workbench.runtime.sheet._event_log import EventLog
from workbench.runtime.sheet._events import Event, EventType
from workbench.runtime.sheet._gate import Gate
from workbench.runtime.threads import call_in_loop, on_loop_thread

if TYPE_CHECKING:
    from workbench.declare import ToolSpec
    from workbench.envelope import Envelope
    from workbench.preflight import Coercion

CallState = Literal["queued", "awaiting_approval", "running", "succeeded", "failed", "terminated"]
Driver = Literal["loop", "inline"]
Made = TypeVar("Made")


class Phase:
    """Who runs the call (decided once) and where it stands."""

    def __init__(self) -> None:
        self.state: CallState = "queued"
        self.driver: Driver | None = None
        """Who runs the lifecycle: the runtime loop, or a thread running it inline."""
        self.inline_thread: int | None = None
        """The thread running it inline, if one does."""
        self.in_lane = False
        """Queued for a lane; Terminate takes it back to the loop."""
        self._lock = threading.Lock()

    def claim(self, driver: Driver) -> bool:
        """Take the running of this call, once: the runtime loop, or a thread that waits for
        it and runs it inline. False when someone else took it."""
        with self._lock:
            if self.driver is not None:
                return False
            self.driver = driver
            if driver == "inline":
                self.inline_thread = threading.get_ident()
            return True

    def here_inline(self) -> bool:
        """True on the thread that runs this call inline."""
        return self.inline_thread is not None and self.inline_thread == threading.get_ident()


class Asked:
    """What the call was asked, as its lifecycle checked it."""

    def __init__(self, replay_of: dict[str, Any] | None) -> None:
        self.spec: ToolSpec | None = None
        self.arguments: dict[str, Any] | None = None
        self.coercions: tuple[Coercion, ...] = ()
        self.modifications: list[dict[str, Any]] = []
        """Arguments the person edited before allowing the call (from, to, by)."""
        self.raw_args_kept: tuple[Any, str | None] | None = None  # see _raw_args
        self.arguments_kept: tuple[Any, Any, str | None] | None = None  # of which arguments
        self.replay_of = replay_of
        """The ``tool.replayed`` event of a replayed call's row, linking it to the original."""


class Times:
    """When the call was queued, started and ended (wall clock), and its monotonic clock."""

    def __init__(self) -> None:
        self.queued_at = time.time()
        self.started_at: float | None = None
        self.ended_at: float | None = None
        self.clock = CallClock()


class Outcome:
    """How the call ended, and what the runtime noted on the way."""

    def __init__(self) -> None:
        self.envelope: Envelope | None = None
        self.receipt: str | None = None
        self.injected = False
        """Its failure was injected (``Registry.inject_fault``)."""
        self.notes: list[str] = []
        """The runtime's notes for the person (a blocked loop, a failed subscriber, ...)."""
        self.traceback: str | None = None
        self.history_problem: str | None = None
        """What went wrong writing the call's row, if anything, and where the row went."""


class Output:
    """The call's complete output: a spool per stream, and the files it keeps (made on first
    use: most calls keep no file)."""

    def __init__(self, call_id: str, artifacts: ArtifactStore) -> None:
        self.call_id = call_id
        self.streams: dict[str, Spool] = {}
        self._artifacts = artifacts
        self._sink: ArtifactSink | None = None
        self._lock = threading.Lock()

    @property
    def sink(self) -> ArtifactSink:
        """The artifacts (files) this call keeps: spilled output, whole listings."""
        sink = self._sink
        if sink is not None:
            return sink
        with self._lock:
            if self._sink is None:
                self._sink = ArtifactSink(self._artifacts, self.call_id)
            return self._sink

    @property
    def sink_if_made(self) -> ArtifactSink | None:
        """The sink, if anything asked for one (None: no artifacts to list)."""
        return self._sink

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


def _resolve(future: asyncio.Future[Envelope], envelope: Envelope) -> None:
    if not future.done():
        future.set_result(envelope)


class Ending:
    """Who hears of the call's end: threads that wait, tasks that await, callbacks."""

    def __init__(self) -> None:
        self.finished = False
        """True once the call has its envelope (and its history row is committed)."""
        self._done_event: threading.Event | None = None  # made only for a thread that waits
        self._awaiters: tuple[tuple[asyncio.AbstractEventLoop, asyncio.Future[Envelope]], ...] = ()
        self._on_end: list[Callable[[], object]] | None = None
        self._lock = threading.Lock()

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

    def announce(self, envelope: Envelope) -> None:
        """The call ended: wake the threads that wait, run the callbacks, resolve the tasks
        that await."""
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


class CallSheet:
    """Everything one call's lifecycle writes, in its parts; safe to read from any thread."""

    def __init__(
        self,
        call_id: str,
        loop: asyncio.AbstractEventLoop,
        grace: float,
        artifacts: ArtifactStore,
        replay_of: dict[str, Any] | None = None,
    ) -> None:
        self.loop = loop
        self.control = StopControl(grace)
        self.phase = Phase()
        self.asked = Asked(replay_of)
        self.times = Times()
        self.outcome = Outcome()
        self.output = Output(call_id, artifacts)
        self.log = EventLog(call_id, loop, self.phase, self.outcome.notes.append)
        self.ending = Ending()
        self._gate: Gate | None = None  # made on first use: most calls never ask a person
        self._lock = threading.Lock()

    @property
    def finished(self) -> bool:
        """True once the call has its envelope (and its history row is committed)."""
        return self.ending.finished

    @property
    def gate(self) -> Gate:
        """Where this call waits for a person (approval, a custom tool's result)."""
        gate = self._gate
        if gate is not None:
            return gate
        with self._lock:
            if self._gate is None:
                self._gate = Gate()
            return self._gate

    @property
    def gate_if_made(self) -> Gate | None:
        """The gate, if anyone asked for it yet."""
        return self._gate

    def emit(self, type_: EventType, **data: Any) -> Event:
        """Record an event and deliver it to the subscribers."""
        return self.log.emit(type_, **data)

    def warn(self, text: str) -> None:
        """Note a problem for the person (shown on the card, kept in the history); from any
        thread."""
        self.outcome.notes.append(text)
        self.log.emit_soon("tool.warning", {"text": text}, self._ended)

    def write_output(self, text: str, stream: Stream = "stdout", raw: bytes | None = None) -> None:
        """Record output: complete bytes to the stream's spool, the text as an event. Safe from
        any thread; the event is delivered on the runtime loop."""
        if self.finished:
            return
        self.output.spool(stream).write(raw if raw is not None else text.encode("utf-8"))
        if text:
            self.log.emit_soon("tool.output", {"stream": stream, "text": text}, self._ended)

    def report(self, done: float, total: float | None = None, message: str | None = None) -> None:
        """Record how far the call has come (a ``tool.progress`` event, delivered on the
        runtime loop); from any thread. Raises ``ValueError`` for a value that is not a finite
        number or a ``total`` that is not positive."""
        data = self.log.report(done, total, message)
        self.log.emit_soon("tool.progress", data, self._ended)

    def _ended(self) -> bool:
        return self.ending.finished

    def announce_end(self, envelope: Envelope, terminal: Event) -> None:
        """Tell everyone the call ended: subscribers first (the terminal event), then threads
        that wait and tasks that await. The row is committed before this runs."""
        self.log.deliver_now(terminal)
        self.ending.announce(envelope)
