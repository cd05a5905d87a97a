"""A call: the person's handle on one invocation of a tool.

``tools.invoke`` returns a Call at once; the tool runs on workbench's runtime loop thread (or on
the thread that waits for it). The handle shows the state, events, arguments, output and, once
it ended, the envelope and receipt; it carries the controls: ``terminate``, ``approve``,
``deny``, ``modify``, ``fulfil`` and ``retry`` may be called from any thread and never raise
(``modify`` refuses arguments its preflight refuses); ``wait()`` blocks any thread until the
end; ``await call`` resumes any asyncio task. Nobody learns that a call ended before its
history row is committed.
"""

from __future__ import annotations

import asyncio
import itertools
import os
import secrets
from collections.abc import Callable, Generator
from typing import TYPE_CHECKING, Any, Generic, Literal, Protocol, TypeVar, overload

from workbench.declare import ToolSpec
from workbench.envelope import Envelope
from workbench.preflight import Coercion
from workbench.runtime.call._display import call_mimebundle, display_call
from workbench.runtime.call._interrupted import CallInterrupted
from workbench.runtime.sheet import (
    CallSheet,
    CallState,
    Decision,
    Event,
    Gate,
    Subscriber,
    binding_of,
)
from workbench.runtime.threads import on_runtime_thread, runtime_loop

if TYPE_CHECKING:
    from workbench.context import CancellationToken
    from workbench.output import Stream
    from workbench.runtime.policy import Host

PendingAction = Literal["approval", "result"]
T = TypeVar("T")


class Drivers(Protocol):
    """What a handle asks of the drivers that run calls (``runtime.scheduling``)."""

    def serve_waiter(self, call: Call, *, here: bool) -> bool:
        """Someone waits for ``call``: run it now, on this thread when ``here`` (True when it
        ran here), else on a worker; a call already started is left as it is."""
        ...

    def serve_awaiter(self, call: Call, loop: asyncio.AbstractEventLoop) -> None:
        """A task on ``loop`` awaits ``call``: run it now, on that loop when it can, else on a
        worker or the runtime loop; a call already started is left as it is."""
        ...

    def withdraw(self, call: Call) -> None:
        """``call`` was stopped: if it still waits for a lane, let the loop end it at once."""
        ...

    def start(self, call: Call) -> None:
        """Start ``call``, just made; returns at once."""
        ...


_ID_PREFIX = ""
_ID_COUNTER = itertools.count(1)


def _new_id_prefix() -> None:
    """Draw this process's id prefix (again in a forked child, which must not repeat its
    parent's ids) and count from 1."""
    global _ID_PREFIX, _ID_COUNTER
    _ID_PREFIX = secrets.token_hex(8)
    _ID_COUNTER = itertools.count(1)


_new_id_prefix()
os.register_at_fork(after_in_child=_new_id_prefix)


def new_call_id() -> str:
    """A fresh call id such as ``call_3f9c2a5b71e0d48c000001``: a random prefix of 64 bits
    drawn by each process and each forked child, then a counter. Processes and forks sharing a
    history never repeat an id (among a million processes, two share a prefix with a chance
    below one in 30 million)."""
    return f"call_{_ID_PREFIX}{next(_ID_COUNTER):06x}"


class Shown(Generic[T]):
    """A field of the call's sheet, shown read-only on the handle (``call.state`` is
    ``call.sheet.phase.state``: ``part`` names the part holding it, ``field`` another name in
    it): the lifecycle writes it, a person and a card read it."""

    def __init__(self, part: str, field: str = "") -> None:
        self.part = part
        self.field = field

    def __set_name__(self, owner: type, name: str) -> None:
        self.field = self.field or name

    @overload
    def __get__(self, call: None, owner: type) -> Shown[T]: ...
    @overload
    def __get__(self, call: Call, owner: type) -> T: ...
    def __get__(self, call: Call | None, owner: type) -> Shown[T] | T:
        if call is None:
            return self
        held = getattr(call.sheet, self.part) if self.part else call.sheet
        value: T = getattr(held, self.field)
        return value


class Call:
    """One invocation of a tool: state, events, output, controls, and the envelope once it ends.

    ``id`` is workbench's own id (the history's key); ``model_call_id`` is the id the model
    sent, if any, kept as given; ``parent_id`` names the call whose tool made this one.
    ``sheet`` is what the lifecycle has written so far.

    Examples:
        >>> import workbench as wb
        >>> tools = wb.Registry(history=":memory:")
        >>> @tools.tool
        ... def wait_for_ever(ctx: wb.ToolContext) -> str:
        ...     '''Wait until stopped (ToolContext's example streams output).'''
        ...     return "stopped" if ctx.token.wait(60) else "a minute passed"
        >>> call = tools.invoke("wait_for_ever", {})  # at once, off the caller's thread
        >>> call.terminate(); print(call.wait().error.kind, call.killed_by); tools.close()
        terminated user
    """

    def __init__(
        self,
        registry: Host,
        tool_name: Any,
        raw_args: Any,
        *,
        drivers: Drivers,
        call_id: str | None = None,
        dry_run: bool = False,
        parent: Call | None = None,
        run_id: str | None = None,
        message_id: str | None = None,
        replay_of: dict[str, Any] | None = None,
    ) -> None:
        self.id = new_call_id()
        self.model_call_id = call_id
        self.run_id = run_id
        """The model run (``wb.run``) that asked for this call, if one did."""
        self.message_id = message_id
        """The model message that asked for it, if one did."""
        self.tool_name = tool_name
        self.raw_args = raw_args
        self.dry_run = dry_run
        self.registry = registry
        self.parent = parent
        self.depth: int = 0 if parent is None else parent.depth + 1
        self.sheet = CallSheet(
            self.id, runtime_loop(), registry.terminate_grace, registry.artifacts, replay_of
        )
        self._drivers = drivers
        self._started = False

    # ── what a card shows ────────────────────────────────────────────────────────────────
    state = Shown[CallState]("phase")
    """"queued", "awaiting_approval", "running", "succeeded", "failed" or "terminated"."""
    events = Shown[list[Event]]("log")
    """Every event so far, oldest first (output events past a bound are only counted)."""
    envelope = Shown[Envelope | None]("outcome")
    """The canonical record, once the call ended (and its row was committed)."""
    receipt = Shown[str | None]("outcome")
    """The text the model reads, once the call ended."""
    arguments = Shown[dict[str, Any] | None]("asked")
    """The arguments as the preflight accepted them (None until then, or if refused)."""
    coercions = Shown[tuple[Coercion, ...]]("asked")
    """What the preflight forgave in the arguments the model sent."""
    modifications = Shown[list[dict[str, Any]]]("asked")
    """Arguments the person edited before allowing the call (from, to, by)."""
    spec = Shown[ToolSpec | None]("asked")
    """The declaration of the tool called, once it was found."""
    notes = Shown[list[str]]("outcome")
    """The runtime's notes for the person (a blocked loop, a failed subscriber, ...)."""
    traceback = Shown[str | None]("outcome")
    """The traceback of a tool that raised, for its author (never shown to a model)."""

    gate = Shown[Gate]("")
    """Where this call waits for a person (approval, a custom tool's result)."""
    done = Shown[bool]("", "finished")
    """True once the call has its envelope (and its history row is committed)."""

    @property
    def token(self) -> CancellationToken:
        """The cancellation token that thread bodies and processes of this call watch."""
        return self.sheet.control.token

    @property
    def parent_id(self) -> str | None:
        """The id of the call whose tool made this call, if any."""
        return None if self.parent is None else self.parent.id

    @property
    def pending_action(self) -> PendingAction | None:
        """What the call waits for from the person: "approval", "result" or None."""
        gate = self.sheet.gate_if_made
        request = None if gate is None else gate.request
        return None if request is None or self.done else request.action

    @property
    def short_id(self) -> str:
        """The last 8 characters of the id: enough to tell cards apart (ids end in a counter)."""
        return self.id.removeprefix("call_")[-8:]

    @property
    def elapsed(self) -> float:
        """Seconds the call has run, less its time in the queue; ticks while it runs."""
        return self.sheet.times.clock.run

    @property
    def queued(self) -> float:
        """Seconds the call waited: for the runtime to pick it up and for a free slot
        (``max_concurrency``, a ``serial`` tool's turn). Ticks while it waits."""
        return self.sheet.times.clock.queued

    @property
    def wire(self) -> str | None:
        """The wire string of the envelope, once it exists."""
        envelope = self.envelope
        return None if envelope is None else envelope.to_wire()

    @property
    def killed_by(self) -> str | None:
        """Who stopped the call: "user", "timeout" or "idle_timeout"; None otherwise."""
        envelope = self.envelope
        return None if envelope is None else envelope.killed_by

    @property
    def warnings(self) -> list[str]:
        """The envelope's warnings and the runtime's notes for the person."""
        envelope = self.envelope
        shown = [] if envelope is None else list(envelope.warnings)
        return shown + [note for note in self.notes if note not in shown]

    def output(self, stream: Stream = "stdout") -> str:
        """The complete output of one stream so far (read back from its artifact when large)."""
        spool = self.sheet.output.streams.get(stream)
        return "" if spool is None else spool.text()

    def output_tail(self, stream: Stream = "stdout", limit: int = 4_096) -> str:
        """The last ``limit`` bytes of one stream, decoded: what a card's live pane shows."""
        spool = self.sheet.output.streams.get(stream)
        return "" if spool is None else spool.tail(limit).decode("utf-8", "replace")

    def output_size(self, stream: Stream | None = None) -> int:
        """Bytes of output so far, of one stream or all."""
        streams = self.sheet.output.streams
        spools = streams.values() if stream is None else [streams.get(stream)]
        return sum(spool.size for spool in spools if spool is not None)

    # ── observing ────────────────────────────────────────────────────────────────────────
    def subscribe(self, subscriber: Subscriber) -> Callable[[], None]:
        """Call ``subscriber(event)`` for every later event; returns an unsubscribe function.
        Subscribers run on the runtime loop thread; one that raises is noted, never raised."""
        self.sheet.log.subscribe(subscriber)
        return lambda: self.unsubscribe(subscriber)

    def unsubscribe(self, subscriber: Subscriber) -> None:
        """Stop delivering events to ``subscriber``; unknown subscribers are ignored."""
        self.sheet.log.unsubscribe(subscriber)

    def warn(self, text: str) -> None:
        """Note a problem for the person (shown on the card, kept in the history)."""
        self.sheet.warn(text)

    # ── starting and waiting ─────────────────────────────────────────────────────────────
    def start(self) -> Call:
        """Start a call made with ``Registry.prepare`` and return it at once (a second start
        does nothing); ``Registry.invoke`` makes and starts one in a single step."""
        if not self._started:
            self._started = True
            self._drivers.start(self)
        return self

    def wait(self, timeout: float | None = None) -> Envelope:
        """Block this thread until the call ends and return its envelope.

        Works in any cell, script or thread, before the call starts, while it runs and after it
        ended. Raises ``TimeoutError`` if ``timeout`` seconds pass first. Interrupting the wait
        (Ctrl-C, a kernel interrupt) terminates the call, like Ctrl-C on a foreground command.
        Inside an ``async def`` tool, use ``await call`` instead: blocking there would hold the
        runtime loop that the call needs.
        """
        sheet = self.sheet
        if sheet.phase.driver is None and not self.done and not on_runtime_thread():
            try:
                self._drivers.serve_waiter(self, here=timeout is None)
            except KeyboardInterrupt:  # it ran here and was terminated; say so in one line
                raise CallInterrupted(self.tool_name, self.id) from None
        event = sheet.ending.done_event()
        if event is None:
            return self._result()
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
        assert self.sheet.outcome.envelope is not None
        return self.sheet.outcome.envelope

    def __await__(self) -> Generator[Any, None, Envelope]:
        if not self.done:
            loop = asyncio.get_running_loop()
            future: asyncio.Future[Envelope] = loop.create_future()
            if not self.sheet.ending.add_awaiter(loop, future):
                future.set_result(self._result())
            elif self.sheet.phase.driver is None:
                self._drivers.serve_awaiter(self, loop)
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
        if self.done:
            return
        spec = self.spec
        if spec is not None and spec.interrupt == "block":
            self.warn("terminate ignored: this tool declares interrupt='block'")
            return
        self.sheet.control.stop("user")
        self._drivers.withdraw(self)

    def decide(self, decision: Decision) -> None:
        """Hand the call's gate a decision (what every Allow, Deny, form and approver does)."""
        if not self.done:
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
        """Refuse a call waiting for approval (the Deny button), or a custom tool's request for
        its result: it ends ``user_denied``."""
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

    def retry(self, args: Any = None) -> Call:
        """Call the same tool again, with ``args`` (edited arguments) or the arguments the model
        sent; the new call starts at once and is returned."""
        return self.registry.invoke(self.tool_name, self.raw_args if args is None else args)

    # ── display ──────────────────────────────────────────────────────────────────────────
    def __repr__(self) -> str:
        return f"<Call {self.tool_name} {self.id} {self.state}>"

    def _repr_mimebundle_(self, **kwargs: Any) -> dict[str, Any] | None:
        return call_mimebundle(self, **kwargs)

    def _ipython_display_(self) -> None:
        display_call(self)
