"""A call: one invocation of a tool, observable and controllable while it runs.

``tools.invoke`` returns a Call at once. Its state, events and output change as the tool runs on
an event loop; ``terminate``, ``approve``, ``deny`` and ``fulfil`` may be called from any thread
(a widget's button handler, a test, another cell) and never raise. ``wait()`` blocks a thread
until the envelope exists; ``await call`` does the same in async code.
"""

from __future__ import annotations

import asyncio
import functools
import itertools
import secrets
import threading
import time
from collections.abc import Callable, Coroutine, Generator
from typing import TYPE_CHECKING, Any, Literal

from workbench._artifacts import ArtifactSink
from workbench._context import CancellationToken, Stream
from workbench._envelope import Envelope
from workbench._events import Event, EventType
from workbench._loop import on_loop_thread, private_loop, running_loop
from workbench._record import CallRecord
from workbench._spool import Spool
from workbench._truncate import MARKER_RE
from workbench.families import family_of

if TYPE_CHECKING:
    from workbench._preflight import Coercion
    from workbench._registry import Registry
    from workbench._spec import ToolSpec

CallState = Literal["queued", "awaiting_approval", "running", "succeeded", "failed", "terminated"]
PendingAction = Literal["approval", "result"]
Subscriber = Callable[[Event], object]
Driver = Callable[["Call"], Coroutine[Any, Any, None]]
Awaiter = asyncio.Future[Envelope]

OUTPUT_EVENTS_KEPT = 2_000
OUTPUT_CHARS_KEPT = 1 << 20


_ID_PREFIX = secrets.token_hex(3)
_ID_COUNTER = itertools.count(1)


def new_call_id() -> str:
    """A fresh call id such as ``call_3f9c2a000001``: a random per-process prefix (so ids from
    two kernels sharing a history never collide) and a counter."""
    return f"call_{_ID_PREFIX}{next(_ID_COUNTER):06x}"


def _resolve(future: asyncio.Future[Envelope], envelope: Envelope) -> None:
    if not future.done():
        future.set_result(envelope)


class Call:
    """One invocation of a tool: state, events, output, and the envelope once it ends."""

    def __init__(
        self,
        registry: Registry,
        tool_name: str,
        raw_args: Any,
        *,
        call_id: str | None = None,
        dry_run: bool = False,
    ) -> None:
        self.id = call_id or new_call_id()
        self.model_call_id = call_id
        self.tool_name = tool_name
        self.raw_args = raw_args
        self.dry_run = dry_run
        self.registry = registry
        self.spec: ToolSpec | None = None
        self.arguments: dict[str, Any] | None = None
        self.coercions: tuple[Coercion, ...] = ()
        self.state: CallState = "queued"
        self.pending_action: PendingAction | None = None
        self.events: list[Event] = []
        self.envelope: Envelope | None = None
        self.receipt: str | None = None
        self.injected = False
        self.notes: list[str] = []
        self.traceback: str | None = None
        self.queued_at = time.time()
        self.started_at: float | None = None
        self.ended_at: float | None = None
        self.token = CancellationToken()
        self.sink = ArtifactSink(registry.artifacts, self.id)
        self.streams: dict[str, Spool] = {}
        self.dropped_output_events = 0
        self._kept_output_events = 0
        self._kept_output_chars = 0
        self._clock = time.monotonic()
        self._ended_clock: float | None = None
        self._subscribers: list[Subscriber] = []
        self._lock = threading.Lock()
        # Waiting primitives are created only when someone waits from elsewhere: most calls are
        # awaited on their own loop, and creating a Condition per call is measurable.
        self._finished = False
        self._done_event: threading.Event | None = None
        self._foreign_awaiters: list[tuple[asyncio.AbstractEventLoop, Awaiter]] = []
        self._loop: asyncio.AbstractEventLoop | None = None
        self._task: asyncio.Task[None] | None = None
        self._driving = False
        self._in_body = False
        self._finishing = False
        self._awaiters: list[Awaiter] = []
        self._decision: asyncio.Future[tuple[str, Any]] | None = None
        self._stop_reason: str | None = None
        self._drive_fn: Driver | None = None
        self._launch: asyncio.Handle | None = None

    # ── what a card shows ────────────────────────────────────────────────────────────────
    @property
    def short_id(self) -> str:
        """The last 8 characters of the id: enough to tell cards apart (ids end in a counter)."""
        return self.id.removeprefix("call_")[-8:]

    @property
    def done(self) -> bool:
        """True once the call has its envelope."""
        return self._finished

    @property
    def elapsed(self) -> float:
        """Seconds since the call was invoked, until it ended (ticks while it runs)."""
        end = self._ended_clock if self._ended_clock is not None else time.monotonic()
        return end - self._clock

    @property
    def wire(self) -> str | None:
        """The seed 000 wire string of the envelope, once it exists."""
        return None if self.envelope is None else self.envelope.to_wire()

    @property
    def killed_by(self) -> str | None:
        """Who stopped the call: "user", "timeout" or "idle_timeout"; None otherwise."""
        return None if self.envelope is None else self.envelope.killed_by

    def output(self, stream: Stream = "stdout") -> str:
        """The complete output of one stream so far (read back from its artifact when large)."""
        spool = self.streams.get(stream)
        return "" if spool is None else spool.text()

    def output_tail(self, stream: Stream = "stdout", limit: int = 4_096) -> str:
        """The last ``limit`` bytes of one stream, decoded: what a card's live pane shows."""
        spool = self.streams.get(stream)
        return "" if spool is None else spool.tail(limit).decode("utf-8", "replace")

    def output_size(self, stream: Stream | None = None) -> int:
        """Bytes of output so far, of one stream or all."""
        spools = self.streams.values() if stream is None else [self.streams.get(stream)]
        return sum(spool.size for spool in spools if spool is not None)

    # ── observing ────────────────────────────────────────────────────────────────────────
    def subscribe(self, subscriber: Subscriber) -> Callable[[], None]:
        """Call ``subscriber(event)`` for every later event; returns an unsubscribe function.

        Subscribers run on the call's event loop thread. One that raises is ignored (and noted
        in the history), so no subscriber can break the call.
        """
        with self._lock:
            self._subscribers.append(subscriber)

        def unsubscribe() -> None:
            with self._lock:
                if subscriber in self._subscribers:
                    self._subscribers.remove(subscriber)

        return unsubscribe

    def _emit(self, type_: EventType, **data: Any) -> Event:
        event = Event(type_, self.id, data=data)
        if type_ != "tool.output":
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
        with self._lock:
            subscribers = list(self._subscribers)
        for subscriber in subscribers:
            try:
                subscriber(event)
            except Exception as exc:
                self.notes.append(f"subscriber {subscriber!r} failed: {exc!r}")
        return event

    def _spool(self, stream: str) -> Spool:
        spool = self.streams.get(stream)
        if spool is None:
            with self._lock:
                spool = self.streams.get(stream)
                if spool is None:
                    spool = Spool(self.sink, f"{stream}.log")
                    self.streams[stream] = spool
        return spool

    def _output(self, text: str, stream: Stream, raw: bytes | None = None) -> None:
        """Record output: complete bytes to the stream's spool, the text as an event.

        Safe from any thread; the event is delivered on the call's loop.
        """
        if self.done:
            return
        self._spool(stream).write(raw if raw is not None else text.encode("utf-8"))
        if not text:
            return
        loop = self._loop
        if loop is None or on_loop_thread(loop):
            self._emit("tool.output", stream=stream, text=text)
        elif not loop.is_closed():
            loop.call_soon_threadsafe(self._emit_output_if_running, stream, text)

    def _emit_output_if_running(self, stream: str, text: str) -> None:
        if not self.done:
            self._emit("tool.output", stream=stream, text=text)

    # ── waiting ──────────────────────────────────────────────────────────────────────────
    def wait(self, timeout: float | None = None) -> Envelope:
        """Block until the call ends and return its envelope.

        Raises ``TimeoutError`` if ``timeout`` seconds pass first. Called in a notebook cell for
        a call that has not started yet, the call moves to workbench's private loop so the wait
        can finish; for a call already running on the kernel's loop, use ``await call``.
        Interrupting the wait (Ctrl-C, a kernel interrupt) terminates the call.
        """
        loop = self._loop
        if not self.done and loop is not None and on_loop_thread(loop):
            if self._driving:
                raise RuntimeError(
                    "call.wait() would block the event loop this call runs on; "
                    "use `await call` (or read call.envelope once it has ended)"
                )
            self._move_to_private_loop()
        with self._lock:
            if self._finished:
                return self._result()
            if self._done_event is None:
                self._done_event = threading.Event()
            event = self._done_event
        try:
            if not event.wait(timeout):
                raise TimeoutError(f"{self.tool_name} call {self.id} still {self.state}")
        except KeyboardInterrupt:
            self.terminate()
            raise
        return self._result()

    def _result(self) -> Envelope:
        assert self.envelope is not None
        return self.envelope

    def __await__(self) -> Generator[Any, None, Envelope]:
        if not self.done:
            loop = asyncio.get_running_loop()
            if loop is self._loop and self._launch is not None:
                # Awaited before its task was even made: run it right here, in the awaiting
                # task, saving a task and two passes of the loop on every awaited call.
                self._launch.cancel()
                self._launch = None
                assert self._drive_fn is not None
                yield from self._drive_fn(self).__await__()
                return self._result()
            future: asyncio.Future[Envelope] = loop.create_future()
            with self._lock:
                if not self._finished:
                    if loop is self._loop:
                        self._awaiters.append(future)  # resolved by _finish: no thread hop
                    else:
                        self._foreign_awaiters.append((loop, future))
                else:
                    future.set_result(self._result())
            try:
                yield from future.__await__()
            except asyncio.CancelledError:
                self.terminate()
                raise
        return self._result()

    def _start(self, drive: Driver) -> None:
        """Schedule the runner on the caller's running loop (as a task made on the loop's next
        pass, unless ``await call`` comes first), or on the private loop."""
        self._drive_fn = drive
        loop = running_loop()
        if loop is not None:
            self._loop = loop
            self._launch = loop.call_soon(self._launch_task)
        else:
            self._loop = private_loop()
            asyncio.run_coroutine_threadsafe(drive(self), self._loop)

    def _launch_task(self) -> None:
        assert self._loop is not None and self._drive_fn is not None
        self._launch = None
        self._task = self._loop.create_task(self._drive_fn(self))

    def _move_to_private_loop(self) -> None:
        assert self._drive_fn is not None
        if self._launch is not None:
            self._launch.cancel()  # it has not started, so nothing of it has run
            self._launch = None
        self._loop = private_loop()
        asyncio.run_coroutine_threadsafe(self._drive_fn(self), self._loop)

    # ── controlling ──────────────────────────────────────────────────────────────────────
    def _signal(self, action: Callable[[], None]) -> None:
        loop = self._loop
        if loop is None or loop.is_closed():
            return
        if on_loop_thread(loop):
            action()
        else:
            loop.call_soon_threadsafe(action)

    def terminate(self) -> None:
        """Stop the call (the Terminate button). A no-op once it has ended; never raises.

        The envelope carries ``killed_by: "user"`` and keeps the output produced so far.
        """
        if self.done:
            return
        if self.spec is not None and self.spec.interrupt == "block":
            self.notes.append("terminate ignored: this tool declares interrupt='block'")
            return
        self._stop_reason = self._stop_reason or "user"
        self.token.cancel("user")
        self._signal(self._interrupt)

    def _interrupt(self) -> None:
        """Cancel the runner wherever it waits; it turns that into the stopped envelope. A runner
        that has not started reads the reason when it does; one that is finishing is left be."""
        if self.done or self._finishing or not self._driving or self._task is None:
            return
        self._task.cancel()

    def approve(self) -> None:
        """Allow a call waiting for approval (the Allow button)."""
        self._decide("allow", None)

    def deny(self, reason: str | None = None) -> None:
        """Refuse a call waiting for approval (the Deny button): it ends ``user_denied``."""
        self._decide("deny", reason)

    def fulfil(self, result: Any) -> None:
        """Supply the result of a custom tool (``ownership="custom"``): a value, or a
        ``wb.failure(...)`` envelope. The value is checked against the tool's output schema."""
        self._decide("result", result)

    def _decide(self, decision: str, value: Any) -> None:
        def resolve() -> None:
            future = self._decision
            if future is not None and not future.done():
                future.set_result((decision, value))

        if not self.done:
            self._signal(resolve)

    # ── ending ───────────────────────────────────────────────────────────────────────────
    def _finish(self, envelope: Envelope, receipt: str) -> None:
        """Record the final envelope (once), emit the terminal event, write the history."""
        if self.done:
            return
        self.envelope = envelope
        self.receipt = receipt
        self.ended_at = time.time()
        self._ended_clock = time.monotonic()
        self.pending_action = None
        if envelope.killed_by == "user":
            self.state = "terminated"
            terminal: EventType = "tool.terminated"
        elif envelope.ok:
            self.state = "succeeded"
            terminal = "tool.completed"
        else:
            self.state = "failed"
            terminal = "tool.failed"
        for spool in self.streams.values():
            spool.close()
        error = envelope.error
        self._emit(
            terminal,
            status=envelope.status,
            kind=None if error is None else error.kind.value,
            summary_text=envelope.summary_text,
        )
        self.registry.history.record(self.to_record)
        with self._lock:
            self._finished = True
            event, foreign = self._done_event, self._foreign_awaiters
        if event is not None:
            event.set()
        for future in self._awaiters:
            if not future.done():
                future.set_result(envelope)
        for loop, future in foreign:
            if not loop.is_closed():
                loop.call_soon_threadsafe(_resolve, future, envelope)
        self._awaiters.clear()

    def to_record(self) -> CallRecord:
        """The history row of this call (keyed by a workbench id even when a model sent one)."""
        envelope = self.envelope
        error = None if envelope is None else envelope.error
        result = None if envelope is None else envelope.result
        receipt = self.receipt or ""
        truncated = bool(MARKER_RE.search(receipt)) or (
            isinstance(result, dict)
            and any(value is True for key, value in result.items() if key.endswith("truncated"))
        )
        return CallRecord.from_mapping(
            {
                "call_id": self.id if self.model_call_id is None else self._record_id,
                "model_call_id": self.model_call_id,
                "tool": self.tool_name,
                "family": None if envelope is None else family_of(envelope).name,
                "state": self.state,
                "status": None if envelope is None else envelope.status,
                "kind": None if error is None else error.kind.value,
                "retryable": None if error is None else error.retryable,
                "summary_text": None if envelope is None else envelope.summary_text,
                "elapsed_ms": self.elapsed * 1000.0,
                "queued_at": self.queued_at,
                "started_at": self.started_at,
                "ended_at": self.ended_at,
                "receipt_chars": len(receipt),
                "truncated": truncated,
                "killed_by": None if envelope is None else envelope.killed_by,
                "terminated": envelope is not None and envelope.killed_by == "user",
                "denied": error is not None and error.kind.value == "user_denied",
                "timed_out": error is not None and error.kind.value == "timeout",
                "injected": self.injected,
                "dry_run": self.dry_run,
                "raw_args": self.raw_args,
                "arguments": self.arguments,
                "coercions": [str(coercion) for coercion in self.coercions],
                "events": [event.to_dict() for event in self.events],
                "canonical": None if envelope is None else envelope.canonical(),
                "wire": None,  # derived from "canonical" when the history is read
                "receipt": receipt,
                "artifacts": [] if envelope is None else [ref.path for ref in envelope.artifacts],
                "warnings": ([] if envelope is None else list(envelope.warnings)) + self.notes,
            }
        )

    @functools.cached_property
    def _record_id(self) -> str:
        return new_call_id()

    # ── display ──────────────────────────────────────────────────────────────────────────
    def __repr__(self) -> str:
        return f"<Call {self.tool_name} {self.id} {self.state}>"

    def _repr_mimebundle_(self, **kwargs: Any) -> dict[str, Any] | None:
        from workbench._call_display import call_mimebundle

        return call_mimebundle(self, **kwargs)

    def _ipython_display_(self) -> None:
        from workbench._call_display import display_call

        display_call(self)
