"""A call: the person's handle on one invocation of a tool.

``tools.invoke`` returns a Call at once; the tool runs on workbench's runtime loop thread. The
handle shows the state, events, arguments, output and (once it ended) the envelope, and carries
the controls: ``terminate``, ``approve``, ``deny``, ``modify`` and ``fulfil`` may be called from
any thread and never raise; ``wait()`` blocks any thread until the end; ``await call`` resumes
any asyncio task. Nobody learns that a call ended before its history row is committed.
"""

from __future__ import annotations

import asyncio
import itertools
import secrets
import threading
import time
from collections.abc import Callable, Generator
from typing import TYPE_CHECKING, Any, Literal

from workbench.context import CancellationToken
from workbench.envelope import MARKER_RE, Envelope
from workbench.families import family_of
from workbench.history import CallRecord
from workbench.output import ArtifactSink, Spool, Stream
from workbench.runtime import _lanes
from workbench.runtime import _waiting_thread as _inline
from workbench.runtime._clock import CallClock
from workbench.runtime._control import RunControl
from workbench.runtime._display import call_mimebundle, display_call
from workbench.runtime._events import Event, EventType
from workbench.runtime._gate import Decision, Gate, binding_of
from workbench.runtime._interrupted import CallInterrupted
from workbench.runtime._lifecycle import driving, start
from workbench.runtime._loop import call_in_loop, on_loop_thread, on_runtime_thread, runtime_loop

if TYPE_CHECKING:
    from workbench.declare import ToolSpec
    from workbench.history import History
    from workbench.preflight import Coercion
    from workbench.registry import Registry

CallState = Literal["queued", "awaiting_approval", "running", "succeeded", "failed", "terminated"]
Driver = Literal["loop", "inline"]
PendingAction = Literal["approval", "result"]
Subscriber = Callable[[Event], object]

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


class _Announcer:
    """Hands committed calls back to the runtime loop to be announced, many per wake-up: the
    history commits rows in groups, and one hop per group costs far less than one per call."""

    def __init__(self) -> None:
        self._pending: list[Callable[[], None]] = []
        self._lock = threading.Lock()

    def push(self, loop: asyncio.AbstractEventLoop, announce: Callable[[], None]) -> None:
        with self._lock:
            self._pending.append(announce)
            first = len(self._pending) == 1
        if first:
            call_in_loop(loop, self._drain)

    def _drain(self) -> None:
        with self._lock:
            pending, self._pending = self._pending, []
        for announce in pending:
            announce()


_ANNOUNCER = _Announcer()


Committed = Callable[[str | None], None]


class _Committer:
    """Gathers the rows of the calls that end in one pass of the runtime loop and commits them
    together at the end of that pass: on the loop itself when the history can take them at
    once, else through the history's writer thread (which retries and journals)."""

    def __init__(self) -> None:
        self._pending: dict[int, tuple[History, list[tuple[CallRecord, Committed]]]] = {}

    def push(
        self,
        loop: asyncio.AbstractEventLoop,
        history: History,
        record: CallRecord,
        then: Committed,
        alone: bool = False,
    ) -> None:
        """Hold a row until the end of this pass; ``alone`` (no other call runs on the loop,
        so none can end in this pass) commits it now, saving a pass of the loop."""
        if not self._pending:
            if alone:
                self._pending = {id(history): (history, [(record, then)])}
                self._commit()
                return
            loop.call_soon(self._commit)
        self._pending.setdefault(id(history), (history, []))[1].append((record, then))

    def _commit(self) -> None:
        pending, self._pending = self._pending, {}
        for history, rows in pending.values():
            if not history.commit_now(rows):
                for record, then in rows:
                    history.append(record, then)


_COMMITTER = _Committer()


class Call:
    """One invocation of a tool: state, events, output, controls, and the envelope once it ends.

    ``id`` is workbench's own id (the history's key); ``model_call_id`` is the id the model
    sent, if any, kept as given; ``parent_id`` names the call whose tool made this one.
    """

    def __init__(
        self,
        registry: Registry,
        tool_name: Any,
        raw_args: Any,
        *,
        call_id: str | None = None,
        dry_run: bool = False,
        parent: Call | None = None,
    ) -> None:
        self.id = new_call_id()
        self.model_call_id = call_id
        self.run_id: str | None = None  # the model run (``wb.run``) that asked for this call
        self.message_id: str | None = None  # the model message that asked for it
        self.tool_name = tool_name
        self.raw_args = raw_args
        self.dry_run = dry_run
        self.registry = registry
        self.parent = parent
        self.depth: int = 0 if parent is None else parent.depth + 1
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
        self.control = RunControl(registry.terminate_grace)
        self._gate: Gate | None = None  # made on first use: most calls never ask a person
        self._sink: ArtifactSink | None = None  # made on first use: most calls keep no file
        self.streams: dict[str, Spool] = {}
        self.dropped_output_events = 0
        self._kept_output_events = 0
        self._kept_output_chars = 0
        self.clock = CallClock()
        # Replaced, never changed in place, so delivery reads them without a copy.
        self._subscribers: tuple[Subscriber, ...] = ()
        self._lock = threading.Lock()
        self._finished = False
        self._done_event: threading.Event | None = None  # made only for a thread that waits
        self._awaiters: tuple[tuple[asyncio.AbstractEventLoop, asyncio.Future[Envelope]], ...] = ()
        self._loop: asyncio.AbstractEventLoop = runtime_loop()
        self.driver: Driver | None = None  # who runs the lifecycle; see claim()
        self.left_for_waiter = False  # its start was left a moment for a wait() (_inline)
        self.in_lane = False  # queued for a lane (_lanes); Terminate takes it back to the loop
        self.replay_of: dict[str, Any] | None = None  # the tool.replayed event of a replay
        self.history_problem: str | None = None  # what went wrong writing the row, if anything
        self._inline_thread: int | None = None  # the waiting thread running it inline

    def claim(self, driver: Driver) -> bool:
        """Take the running of this call, once: the runtime loop, or a thread that waits for it
        and runs it inline (``workbench/_inline.py``). False when someone else took it."""
        with self._lock:
            if self.driver is not None:
                return False
            self.driver = driver
            if driver == "inline":
                self._inline_thread = threading.get_ident()
            return True

    def _here_inline(self) -> bool:
        return self._inline_thread is not None and self._inline_thread == threading.get_ident()

    @property
    def gate(self) -> Gate:
        """Where this call waits for a person (approval, a custom tool's result)."""
        gate = self._gate
        if gate is None:
            with self._lock:
                if self._gate is None:
                    self._gate = Gate()
                gate = self._gate
        return gate

    @property
    def sink(self) -> ArtifactSink:
        """The artifacts (files) this call keeps: spilled output, whole listings."""
        sink = self._sink
        if sink is None:
            with self._lock:
                if self._sink is None:
                    self._sink = ArtifactSink(self.registry.artifacts, self.id)
                sink = self._sink
        return sink

    # ── what a card shows ────────────────────────────────────────────────────────────────
    @property
    def parent_id(self) -> str | None:
        """The id of the call whose tool made this call, if any."""
        return None if self.parent is None else self.parent.id

    @property
    def token(self) -> CancellationToken:
        """The cancellation token that thread bodies and processes of this call watch."""
        return self.control.token

    @property
    def pending_action(self) -> PendingAction | None:
        """What the call waits for from the person: "approval", "result" (a custom tool's
        form) or None."""
        request = None if self._gate is None else self._gate.request
        return None if request is None or self._finished else request.action

    @property
    def short_id(self) -> str:
        """The last 8 characters of the id: enough to tell cards apart (ids end in a counter)."""
        return self.id.removeprefix("call_")[-8:]

    @property
    def done(self) -> bool:
        """True once the call has its envelope (and its history row is committed)."""
        return self._finished

    @property
    def elapsed(self) -> float:
        """Seconds the call has taken, from invocation to its end, less its time in the queue
        (``queued``): its run time, ticking while it runs."""
        return self.clock.run

    @property
    def queued(self) -> float:
        """Seconds the call waited in the queue: for the runtime to pick it up and for a free
        slot (``max_concurrency``, a ``serial`` tool's turn). Ticks while it waits."""
        return self.clock.queued

    @property
    def wire(self) -> str | None:
        """The wire string of the envelope, once it exists."""
        return None if self.envelope is None else self.envelope.to_wire()

    @property
    def killed_by(self) -> str | None:
        """Who stopped the call: "user", "timeout" or "idle_timeout"; None otherwise."""
        return None if self.envelope is None else self.envelope.killed_by

    @property
    def warnings(self) -> list[str]:
        """The envelope's warnings and the runtime's notes for the person (a blocked loop, a
        body that ignored cancellation, a history write that failed)."""
        shown = [] if self.envelope is None else list(self.envelope.warnings)
        return shown + [note for note in self.notes if note not in shown]

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

        Subscribers run on the runtime loop thread. One that raises is ignored (and noted in
        the history), so no subscriber can break the call.
        """
        with self._lock:
            self._subscribers = (*self._subscribers, subscriber)
        return lambda: self.unsubscribe(subscriber)

    def unsubscribe(self, subscriber: Subscriber) -> None:
        """Stop delivering events to ``subscriber``; unknown subscribers are ignored."""
        with self._lock:
            if subscriber in self._subscribers:
                kept = list(self._subscribers)
                kept.remove(subscriber)
                self._subscribers = tuple(kept)

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
        self._deliver(event)
        return event

    def _subscribed_on_the_loop(self) -> bool:
        """True when subscribers must hear of an event on the runtime loop, not here: the call
        runs inline on another thread (subscribers run on the loop, in order, even then)."""
        return (
            bool(self._subscribers)
            and self._inline_thread is not None
            and not on_loop_thread(self._loop)
        )

    def _deliver(self, event: Event) -> None:
        if not self._subscribers:
            return
        if self._subscribed_on_the_loop():
            call_in_loop(self._loop, self._deliver_now, event)
            return
        self._deliver_now(event)

    def _deliver_now(self, event: Event) -> None:
        subscribers = self._subscribers
        for subscriber in subscribers:
            try:
                subscriber(event)
            except Exception as exc:
                # Kept in the history; not an event, which would reach the same subscriber.
                self.notes.append(f"subscriber {subscriber!r} failed: {exc!r}")

    def warn(self, text: str) -> None:
        """Note a problem for the person (shown on the card, kept in the history); from any
        thread."""
        self.notes.append(text)
        if self._finished:
            return
        if self._here_inline():
            self._emit("tool.warning", text=text)
        else:
            call_in_loop(self._loop, self._emit_if_running, "tool.warning", {"text": text})

    def _emit_if_running(self, type_: EventType, data: dict[str, Any]) -> None:
        if not self._finished:
            self._emit(type_, **data)

    def _spool(self, stream: str) -> Spool:
        spool = self.streams.get(stream)
        if spool is None:
            sink = self.sink  # outside the lock, which making the sink takes
            with self._lock:
                spool = self.streams.get(stream)
                if spool is None:
                    spool = Spool(sink, f"{stream}.log")
                    self.streams[stream] = spool
        return spool

    def _output(self, text: str, stream: Stream, raw: bytes | None = None) -> None:
        """Record output: complete bytes to the stream's spool, the text as an event.

        Safe from any thread; the event is delivered on the runtime loop.
        """
        if self._finished:
            return
        self._spool(stream).write(raw if raw is not None else text.encode("utf-8"))
        if not text:
            return
        if self._here_inline() or on_loop_thread(self._loop):
            self._emit("tool.output", stream=stream, text=text)
        else:
            call_in_loop(
                self._loop, self._emit_if_running, "tool.output", {"stream": stream, "text": text}
            )

    # ── waiting ──────────────────────────────────────────────────────────────────────────
    def wait(self, timeout: float | None = None) -> Envelope:
        """Block this thread until the call ends and return its envelope.

        Works in any cell, script or thread, before the call starts, while it runs and after it
        ended. Raises ``TimeoutError`` if ``timeout`` seconds pass first. Interrupting the wait
        (Ctrl-C, a kernel interrupt) terminates the call, like Ctrl-C on a foreground command.
        Inside an ``async def`` tool, use ``await call`` instead: blocking there would hold the
        runtime loop that the call needs.
        """
        if self.done:
            return self._result()
        if self.driver is None and not on_runtime_thread() and _inline.left_for_a_waiter(self):
            # Left for a waiter (a plain ``def`` tool that needs no person) and nobody runs it
            # yet: this thread would only block until it ends, so it runs it right here,
            # saving four thread hops. Any other call has been started already.
            if timeout is None:
                try:
                    ran_here = _inline.run_inline(self)
                except KeyboardInterrupt:  # the call was terminated; say so in one line
                    raise CallInterrupted(self.tool_name, self.id) from None
                if not ran_here:
                    _inline.kick(self)
            else:
                _inline.run_on_worker(self)  # this thread must be free to give up in time
        with self._lock:
            if self._finished:
                return self._result()
            if self._done_event is None:
                self._done_event = threading.Event()
            event = self._done_event
        if on_runtime_thread():
            raise RuntimeError(
                "call.wait() inside an async def tool would block the runtime loop that this "
                "call runs on; use `await call` there"
            )
        try:
            if not event.wait(timeout):
                raise TimeoutError(f"{self.tool_name} call {self.id} still {self.state}")
        except KeyboardInterrupt:
            self.terminate()
            raise CallInterrupted(self.tool_name, self.id) from None
        return self._result()

    def _result(self) -> Envelope:
        assert self.envelope is not None
        return self.envelope

    def __await__(self) -> Generator[Any, None, Envelope]:
        if not self.done:
            loop = asyncio.get_running_loop()
            future: asyncio.Future[Envelope] = loop.create_future()
            with self._lock:
                ended = self._finished
                if not ended:
                    self._awaiters = (*self._awaiters, (loop, future))
            if ended:
                future.set_result(self._result())
            elif self.driver is None:
                _inline.run_on_worker(self)  # if it was left for a waiter
            try:
                yield from future.__await__()
            except asyncio.CancelledError:
                self.terminate()  # the awaiting task was cancelled: the call stops with it
                raise
        return self._result()

    # ── controlling ──────────────────────────────────────────────────────────────────────
    def terminate(self) -> None:
        """Stop the call (the Terminate button). A no-op once it has ended; never raises.

        The envelope carries ``killed_by: "user"`` and keeps the output produced so far.
        """
        if self._finished:
            return
        if self.spec is not None and self.spec.interrupt == "block":
            self.warn("terminate ignored: this tool declares interrupt='block'")
            return
        self.control.stop("user")
        if self.in_lane and self.driver is None and self.registry.lanes.withdraw(self):
            start(self)  # it waited for a lane: the loop ends it now, with no slot to wait for

    def decide(self, decision: Decision) -> None:
        """Hand the call's gate a decision (what every Allow, Deny, form and approver does)."""
        if not self._finished:
            self.gate.decide(decision)

    def _binding(self, binding: str | None) -> str | None:
        # A decision made before the call reaches its gate is bound to the arguments known now,
        # so a before_tool hook that changes them voids it.
        if binding is not None or self.gate.request is not None or self.arguments is None:
            return binding
        return binding_of(self.arguments)

    def approve(self, *, binding: str | None = None) -> None:
        """Allow a call waiting for approval (the Allow button), with the arguments shown."""
        self.decide(Decision.allow(binding=self._binding(binding)))

    def deny(self, reason: str | None = None, *, binding: str | None = None) -> None:
        """Refuse a call waiting for approval (the Deny button): it ends ``user_denied``."""
        self.decide(Decision.deny(reason, binding=self._binding(binding)))

    def modify(self, arguments: dict[str, Any], *, binding: str | None = None) -> None:
        """Approve with edited arguments: the preflight checks them again (``ValueError`` here if
        it refuses them) and the call records the modification."""
        tool = self.registry.get(self.tool_name) if isinstance(self.tool_name, str) else None
        if tool is not None:
            checked = tool.preflight(arguments)
            if checked.error is not None:
                raise ValueError(checked.error.error.message if checked.error.error else "invalid")
        self.decide(Decision.modify(arguments, binding=self._binding(binding)))

    def fulfil(self, result: Any) -> None:
        """Supply the result of a custom tool (``ownership="custom"``): a value, or a
        ``wb.failure(...)`` envelope. The value is checked against the tool's output schema."""
        self.decide(Decision.fulfil(result))

    # ── ending ───────────────────────────────────────────────────────────────────────────
    def _finish(self, envelope: Envelope, receipt: str) -> None:
        """Commit the call's row (its terminal event included), then announce the end on the
        runtime loop: nobody learns that a call ended before its row is kept."""
        if self._finished:
            return
        self.ended_at = time.time()
        self.clock.end()
        state = _final_state(envelope)
        for spool in self.streams.values():
            spool.close()
        error = envelope.error
        terminal = Event(
            _TERMINAL[state],
            self.id,
            data={
                "status": envelope.status,
                "kind": None if error is None else error.kind.value,
                "summary_text": envelope.summary_text,
            },
        )
        self.events.append(terminal)
        record = self.to_record(envelope, receipt, state)
        history: History = self.registry.history

        def committed(problem: str | None) -> None:
            if problem is not None:
                # The row was kept without it: the warning goes on the row too.
                history.add_warning(self.id, problem)
            _ANNOUNCER.push(
                self._loop, lambda: self._publish(envelope, receipt, state, terminal, problem)
            )

        if on_loop_thread(self._loop):
            _COMMITTER.push(self._loop, history, record, committed, alone=driving() <= 1)
            return

        def committed_here(problem: str | None) -> None:
            self._publish(envelope, receipt, state, terminal, problem)

        group = _lanes.group_for(self)
        if group is not None:  # ended in a lane: committed with the rows of the calls beside it
            group.add(history, record, committed_here, committed)
            return
        # Ended on another thread (run inline by the thread waiting for it): committed and
        # announced right here when the history takes the row at once, else by its writer.
        if not history.commit_now([(record, committed_here)]):
            history.append(record, committed)

    def _publish(
        self,
        envelope: Envelope,
        receipt: str,
        state: CallState,
        terminal: Event,
        problem: str | None,
    ) -> None:
        if problem is not None:
            self.history_problem = problem
            self.notes.append(problem)
            envelope = envelope.replace(warnings=[*envelope.warnings, problem])
        self.envelope = envelope
        self.receipt = receipt
        self.state = state
        self.control.phase = "ended"
        if self._subscribed_on_the_loop() and call_in_loop(
            self._loop, self._announce_end, envelope, terminal
        ):
            # Subscribers (a card) hear of the end on the loop, in order after the call's
            # other events, and before any waiter does: a card whose call wait() returned
            # is already final.
            return
        self._announce_end(envelope, terminal)

    def _announce_end(self, envelope: Envelope, terminal: Event) -> None:
        self._deliver_now(terminal)
        with self._lock:
            self._finished = True
            event, awaiters = self._done_event, self._awaiters
            self._awaiters = ()
        if event is not None:
            event.set()
        if self.left_for_waiter:
            _inline.forget(self)
        for loop, future in awaiters:
            if on_loop_thread(loop):
                _resolve(future, envelope)
            else:
                call_in_loop(loop, _resolve, future, envelope)

    def to_record(
        self,
        envelope: Envelope | None = None,
        receipt: str | None = None,
        state: CallState | None = None,
    ) -> CallRecord:
        """The history row of this call (as it ends, or as it is now)."""
        envelope = envelope if envelope is not None else self.envelope
        receipt = (receipt if receipt is not None else self.receipt) or ""
        error = None if envelope is None else envelope.error
        result = None if envelope is None else envelope.result
        truncated = bool(MARKER_RE.search(receipt)) or (
            isinstance(result, dict)
            and any(value is True for key, value in result.items() if key.endswith("truncated"))
        )
        return CallRecord(
            call_id=self.id,
            model_call_id=self.model_call_id,
            parent_call_id=self.parent_id
            if self.replay_of is None
            else self.replay_of["replay_of"],
            run_id=self.run_id,
            message_id=self.message_id,
            tool=self.tool_name if isinstance(self.tool_name, str) else repr(self.tool_name),
            family=None if envelope is None else family_of(envelope).name,
            state=state or self.state,
            status=None if envelope is None else envelope.status,
            kind=None if error is None else error.kind.value,
            retryable=None if error is None else error.retryable,
            summary_text=None if envelope is None else envelope.summary_text,
            elapsed_ms=self.elapsed * 1000.0,
            queued_ms=self.queued * 1000.0,
            queued_at=self.queued_at,
            started_at=self.started_at,
            ended_at=self.ended_at,
            receipt_chars=len(receipt),
            truncated=truncated,
            killed_by=None if envelope is None else envelope.killed_by,
            terminated=envelope is not None and envelope.killed_by == "user",
            denied=error is not None and error.kind.value == "user_denied",
            timed_out=error is not None and error.kind.value == "timeout",
            injected=self.injected,
            dry_run=self.dry_run,
            raw_args=self.raw_args,
            arguments=self.arguments,
            coercions=[str(coercion) for coercion in self.coercions],
            events=[event.to_dict() for event in self.events]
            + ([] if self.replay_of is None else [self.replay_of]),
            canonical=None if envelope is None else envelope.canonical(),
            wire=None,  # derived from "canonical" when the history is read
            receipt=receipt,
            artifacts=[] if envelope is None else [ref.path for ref in envelope.artifacts],
            warnings=([] if envelope is None else list(envelope.warnings)) + self.notes,
        )

    # ── display ──────────────────────────────────────────────────────────────────────────
    def __repr__(self) -> str:
        return f"<Call {self.tool_name} {self.id} {self.state}>"

    def _repr_mimebundle_(self, **kwargs: Any) -> dict[str, Any] | None:
        return call_mimebundle(self, **kwargs)

    def _ipython_display_(self) -> None:
        display_call(self)


_TERMINAL: dict[CallState, EventType] = {
    "terminated": "tool.terminated",
    "succeeded": "tool.completed",
    "failed": "tool.failed",
}


def _final_state(envelope: Envelope) -> CallState:
    if envelope.killed_by == "user":
        return "terminated"
    return "succeeded" if envelope.ok else "failed"
