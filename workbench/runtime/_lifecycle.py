"""The lifecycle of one call, from arguments to envelope (DESIGN.md's one flow).

    lookup → preflight → before_tool → gate (policy, approval) → limits → execute
           → project → after_tool → render → history

Every step that can fail ends the call with an envelope; nothing a tool, hook or subscriber
raises escapes. Termination and timeouts race against each waiting step.
"""

from __future__ import annotations

import asyncio
import inspect
import time
import traceback
import types
from collections.abc import Coroutine, Generator, Mapping
from typing import TYPE_CHECKING, Any

from workbench.context import ToolCancelled
from workbench.declare import BindError
from workbench.envelope import (
    Envelope,
    ErrorKind,
    failure,
    from_exception,
    jsonable,
    success,
    unrepresentable,
)
from workbench.families import Completed, project, render
from workbench.families.failure import attach_output, fallback_receipt
from workbench.runtime import _watchdog as watchdog
from workbench.runtime._body import WorkerRun, make_context, run_body
from workbench.runtime._control import StopReason
from workbench.runtime._faults import Fault
from workbench.runtime._gate import Decision, GateRequest
from workbench.runtime._loop import on_loop_thread

if TYPE_CHECKING:
    from workbench.declare import Tool
    from workbench.runtime._call import Call
    from workbench.runtime._limits import Limit


MAX_NESTING_DEPTH = 16
"""How deep calls made from inside running tools may nest before the runtime refuses one."""

_BODIES: set[asyncio.Task[Any]] = set()  # bodies left behind after a stop, until they end
_DRIVING: set[asyncio.Task[None]] = set()  # strong references to running calls' tasks
_HANDED: set[int] = set()  # calls handed to the loop from another thread, not yet launched


def start(*calls: Call) -> None:
    """Start ``calls`` on the runtime loop (tasks made now when already there, else on the
    loop's next pass, all with one wake-up); returns at once."""
    if not calls:
        return
    loop = calls[0]._loop
    if on_loop_thread(loop):
        _launch(calls)
    else:
        _HANDED.update(id(call) for call in calls)
        loop.call_soon_threadsafe(_launch, calls)


def driving() -> int:
    """How many calls the runtime loop runs, or has been handed and will run (a call ending
    counts until it has ended)."""
    return len(_DRIVING) + len(_HANDED)


def _launch(calls: tuple[Call, ...]) -> None:
    loop = asyncio.get_running_loop()
    for call in calls:
        if call.driver is None:  # else a thread waiting for it runs it (workbench/_inline.py)
            task = loop.create_task(drive(call))
            _DRIVING.add(task)
            task.add_done_callback(_DRIVING.discard)
        _HANDED.discard(id(call))


async def drive(call: Call) -> None:
    """Run ``call`` to its end on the runtime loop; always finishes it with an envelope.

    Stopping (Terminate, a time budget) cancels this task through the call's RunControl; the
    reason is recorded there, and whatever step was waiting turns into the stopped envelope.
    """
    if not call.claim("loop"):
        return  # a thread waiting for it took it first (workbench/_inline.py)
    call.clock.wait_ends()  # picked up: the time since invocation was spent in the queue
    control = call.control
    task = asyncio.current_task()
    assert task is not None
    control.attach(task)
    watchdog.running(task, call)
    try:
        try:
            if control.reason is not None:
                envelope = stopped_envelope(call, control.reason)
            else:
                envelope = await _lifecycle(call)
        except asyncio.CancelledError:
            # A stop while the call waited outside its body (the gate, a slot, a hook), or the
            # runtime loop shutting down: either way the call ends, as stopped.
            task.uncancel()
            envelope = stopped_envelope(call, control.note_reason(control.reason or "user"))
        except Exception as exc:
            call.traceback = traceback.format_exc()
            envelope = from_exception(exc, tool=str(call.tool_name))
        for problem in control.finishing():
            call.warn(problem)
        await _conclude(call, envelope)
    finally:
        watchdog.finished(task)


async def _maybe_await(value: Any) -> Any:
    return await value if inspect.isawaitable(value) else value


async def _conclude(call: Call, envelope: Envelope) -> None:
    registry = call.registry
    for hook in registry.after_hooks:
        try:
            changed = await _maybe_await(hook(call, envelope))
        except Exception as exc:
            call.notes.append(f"after_tool hook {hook!r} failed: {exc!r}")
            continue
        if isinstance(changed, Envelope):
            envelope = changed
    seal(call, envelope)


def seal(call: Call, envelope: Envelope) -> None:
    """The end of every call, on whichever thread ends it: the artifacts, the ids the model
    reads back, the receipt, then the committed row and the announcement (``Call._finish``)."""
    registry = call.registry
    sink = call._sink  # None when nothing asked for one: no artifacts to list
    if sink is not None and len(sink) > len(envelope.artifacts):
        envelope = envelope.replace(artifacts=sink.refs)
    call_id = call.model_call_id or call.id  # the model reads back the id it sent
    tool_name = call.tool_name if isinstance(call.tool_name, str) else repr(call.tool_name)
    if envelope.call_id != call_id or envelope.tool_name != tool_name:
        # Both are plain strings the runtime owns: no need to re-validate the whole envelope.
        envelope = envelope.model_copy(update={"call_id": call_id, "tool_name": tool_name})
    try:
        receipt = render(envelope, registry.budgets)
    except Exception as exc:
        call.notes.append(f"rendering failed: {exc!r}")
        receipt = fallback_receipt(envelope)
    call._finish(envelope, receipt)


async def _lifecycle(call: Call) -> Envelope:
    registry = call.registry
    if not isinstance(call.tool_name, str):
        return failure(
            ErrorKind.INVALID_ARGS,
            f"a tool name must be a string, not {type(call.tool_name).__name__}",
            field="name",
            expected="the exact name of a registered tool, as a string",
        )
    if call.depth > MAX_NESTING_DEPTH:
        return failure(
            ErrorKind.INVALID_ARGS,
            f"calls nested {call.depth} deep inside running tools; the limit is "
            f"{MAX_NESTING_DEPTH}, so this looks like runaway recursion and was not run",
            expected=f"at most {MAX_NESTING_DEPTH} levels of tools calling tools",
            recovery_hint="stop recursing; finish with what the outer calls have",
        )
    tool = registry.get(call.tool_name)
    if tool is None:
        return _unknown_tool(call)
    call.spec = tool.spec
    checked = tool.preflight(call.raw_args)
    call.coercions = checked.coercions
    if checked.error is not None:
        return checked.error
    arguments = checked.arguments or {}
    call.arguments = arguments

    for hook in registry.before_hooks:
        outcome = await _run_before_hook(hook, call, arguments)
        if isinstance(outcome, Envelope):
            return outcome
        if outcome is not None:
            rechecked = tool.preflight(dict(outcome))
            if rechecked.error is not None:
                return rechecked.error
            arguments = rechecked.arguments or {}
            call.arguments = arguments

    if call.dry_run:
        return await _plan(call, tool, arguments)

    fault = registry.faults.take(call.tool_name)
    permission = registry.permission(call.tool_name)
    if permission == "always_deny":
        return failure(
            ErrorKind.REJECTED,
            f"`{call.tool_name}` is blocked by this registry's policy",
            recovery_hint="do not call this tool; choose another way to reach the goal",
        )
    if fault is not None and fault.kind is ErrorKind.USER_DENIED:
        call.injected = True
        call._emit("tool.approval_requested", arguments=arguments, effects=list(tool.spec.effects))
        call._emit("tool.denied", reason=None, by="fault")
        return _denied(call, None)
    if permission == "always_ask":
        decision = await _approval(call, tool, arguments)
        if decision.verdict == "deny":
            call._emit("tool.denied", reason=decision.reason, by=decision.by)
            return _denied(call, decision.reason)
        arguments = call.arguments or arguments

    # A call made from inside a running tool runs in its ancestors' slot: waiting for a slot
    # that they hold while they wait for it would deadlock.
    limits = [] if call.parent is not None else [registry.limit]
    if tool.spec.serial and not _inside(call, tool.name):
        limits.append(registry.serial_limit(tool.name))
    acquired: list[Limit] = []
    try:
        for limit in limits:
            if not limit.try_acquire():
                call.clock.wait_begins()
                try:
                    await limit.acquire()
                finally:
                    call.clock.wait_ends()
            acquired.append(limit)
        call.state = "running"
        call.started_at = time.time()
        call._emit("tool.started", arguments=arguments)
        if fault is not None:
            return await _inject(call, fault)
        if tool.kind == "custom":
            return await _await_fulfilment(call, tool)
        return await _execute(call, tool, arguments)
    finally:
        for limit in reversed(acquired):
            limit.release()


async def _run_before_hook(hook: Any, call: Call, arguments: dict[str, Any]) -> Any:
    """None to proceed, a mapping of new arguments, or an envelope that ends the call."""
    try:
        outcome = await _maybe_await(hook(call, dict(arguments)))
    except Exception as exc:
        call.traceback = traceback.format_exc()
        return failure(
            ErrorKind.REJECTED,
            f"a before_tool hook refused the call by failing: {type(exc).__name__}: {exc}",
        )
    if outcome is None or outcome is True:
        return None
    if outcome is False or isinstance(outcome, str):
        return failure(ErrorKind.REJECTED, outcome or "refused by a before_tool hook")
    if isinstance(outcome, Envelope | Mapping):
        return outcome
    return failure(
        ErrorKind.REJECTED,
        f"a before_tool hook returned {type(outcome).__name__}; expected None, a dict or a str",
    )


def _unknown_tool(call: Call) -> Envelope:
    names = call.registry.names()
    listed = ", ".join(f"`{name}`" for name in names[:20]) or "none"
    return failure(
        ErrorKind.TOOL_NOT_FOUND,
        f"Unknown tool `{call.tool_name}`; available tools: {listed}.",
        recovery_hint="call one of the available tools by its exact name",
    )


def _denied(call: Call, reason: str | None) -> Envelope:
    message = f"The person denied this `{call.tool_name}` call"
    return failure(
        ErrorKind.USER_DENIED,
        f"{message}: {reason}" if reason else f"{message}.",
        recovery_hint="do not retry unchanged; ask the person what they want instead",
    )


def _inside(call: Call, tool_name: str) -> bool:
    """True when an ancestor of ``call`` is a call of ``tool_name`` (it holds that serial slot)."""
    ancestor = call.parent
    while ancestor is not None:
        if ancestor.tool_name == tool_name:
            return True
        ancestor = ancestor.parent
    return False


async def _approval(call: Call, tool: Tool, arguments: dict[str, Any]) -> Decision:
    """Pause until the person (or the registry's approver) allows, denies or modifies the call.

    A modification is checked by the preflight again; one it refuses is set aside (the call
    keeps waiting, and says why), one it accepts replaces the arguments and is recorded.
    """
    while True:
        request = GateRequest.of(
            call.id, tool.name, "approval", call.arguments, tuple(tool.spec.effects)
        )
        call.state = "awaiting_approval"
        decided = _ask(call, request)
        call._emit(
            "tool.approval_requested",
            arguments=call.arguments,
            effects=list(tool.spec.effects),
            binding=request.binding,
        )
        decision = await decided
        if decision.verdict != "modify":
            if decision.verdict == "allow":
                call._emit("tool.approved", by=decision.by)
            return decision
        checked = tool.preflight(decision.arguments or {})
        if checked.error is not None:
            error = checked.error.error
            _set_aside(
                call, f"the modified arguments were refused: {error.message if error else ''}"
            )
            continue
        before = call.arguments
        call.arguments = checked.arguments or {}
        call.coercions = checked.coercions
        call.modifications.append({"from": before, "to": call.arguments, "by": decision.by})
        call._emit("tool.modified", before=before, after=call.arguments, by=decision.by)
        call._emit("tool.approved", by=decision.by, modified=True)
        return decision


def _set_aside(call: Call, problem: str) -> None:
    call.warn(problem)
    call._emit("tool.decision_set_aside", reason=problem)


def _ask(call: Call, request: GateRequest) -> Coroutine[Any, Any, Decision]:
    """Open the call's gate on ``request``: it is pending at once; awaiting the result waits
    for the decision (Terminate cancels the wait)."""
    return call.gate.open(
        request, call.registry.approver, lambda problem: _set_aside(call, problem)
    )


async def _execute(call: Call, tool: Tool, arguments: dict[str, Any]) -> Envelope:
    """Run the body under the wall-clock budget. A stop cancels the body and gives it the
    grace to end; a body that ignores that is left behind and the call ends without it."""
    assert call.spec is not None
    control = call.control
    try:
        body, worker = run_body(tool, call, arguments)
    except BindError as exc:
        return failure(ErrorKind.INVALID_ARGS, str(exc), field=exc.field or None)
    running: asyncio.Future[Any]
    if inspect.iscoroutine(body):
        # Most async bodies finish without ever suspending: run the first step here, and only a
        # body that does suspend becomes a task of its own (which a stop can cancel and leave).
        try:
            suspended_on = body.send(None)
        except StopIteration as stop:
            return _returned(call, tool, stop.value)
        except ToolCancelled:
            return stopped_envelope(call, control.note_reason(_token_reason(call)))
        except Exception as exc:
            return _failed(call, exc)
        running = asyncio.get_running_loop().create_task(_rest(body, suspended_on))
    else:
        running = asyncio.ensure_future(body)
    if isinstance(running, asyncio.Task):
        watchdog.running(running, call)  # the step holding a blocked loop may be this task's
        running.add_done_callback(watchdog.finished)
    budget = None if call.spec.streaming else call.spec.timeout
    deadline = asyncio.timeout(budget)
    control.phase = "in_body"
    try:
        async with deadline:
            value = await asyncio.shield(running)
    except asyncio.CancelledError:
        if control.reason is None:
            raise
        _uncancel()
        reason = control.reason
    except TimeoutError as exc:
        if not deadline.expired():
            return _failed(call, exc)
        reason = control.note_reason("timeout")
    except ToolCancelled:
        reason = control.note_reason(_token_reason(call))
    except Exception as exc:
        return _failed(call, exc)
    else:
        if not call.token.cancelled:
            return project_result(call, tool, value)
        reason = control.note_reason(_token_reason(call))
    finally:
        control.phase = "driving"
    await _let_go(call, running, worker, reason)
    return stopped_envelope(call, reason)


def _token_reason(call: Call) -> StopReason:
    reason = call.token.reason
    return reason if reason in ("user", "timeout", "idle_timeout") else "user"  # type: ignore[return-value]


async def _rest(body: Coroutine[Any, Any, Any], suspended_on: Any) -> Any:
    return await _resume(body, suspended_on)


async def _let_go(
    call: Call, running: asyncio.Future[Any], worker: WorkerRun | None, reason: str
) -> None:
    """Cancel the body and give it the grace; past it, leave it behind with a note (and a
    warning in the history when its late result finally arrives)."""
    call.token.cancel(reason)
    body: asyncio.Future[Any] | Any = running if worker is None else worker.finished
    if worker is None:
        running.cancel()
    running.add_done_callback(_consume)
    history, call_id = call.registry.history, call.id
    ended = await call.control.let_go(
        body, lambda: history.add_warning(call_id, "late result discarded after the call ended")
    )
    if ended:
        return
    if isinstance(running, asyncio.Task):
        _BODIES.add(running)
        running.add_done_callback(_BODIES.discard)
    grace = call.control.grace
    kind = "async body" if worker is None else "thread body"
    call.warn(
        f"the tool's {kind} ignored cancellation for {grace:g} s; the call ended {reason} "
        "without it, its concurrency slot was freed, and its late result will be discarded"
    )


def _consume(future: asyncio.Future[Any]) -> None:
    # A body left behind may fail or be cancelled long after its call ended: its outcome is
    # of no one's concern then, but asyncio would log it as never retrieved.
    if not future.cancelled():
        future.exception()


def _returned(call: Call, tool: Tool, value: Any) -> Envelope:
    # The token is set before the task is cancelled, so a body that returned because its
    # process was just killed still counts as stopped.
    if call.token.cancelled:
        return stopped_envelope(call, call.control.note_reason(_token_reason(call)))
    return project_result(call, tool, value)


@types.coroutine
def _resume(body: Coroutine[Any, Any, Any], suspended_on: Any) -> Generator[Any, Any, Any]:
    """Carry on a coroutine whose first step already ran: what ``await`` would have done."""
    pending = suspended_on
    while True:
        try:
            sent = yield pending
        except GeneratorExit:
            body.close()
            raise
        except BaseException as exc:
            try:
                pending = body.throw(exc)
            except StopIteration as stop:
                return stop.value
        else:
            try:
                pending = body.send(sent)
            except StopIteration as stop:
                return stop.value


def _uncancel() -> None:
    task = asyncio.current_task()
    if task is not None:
        task.uncancel()


def _failed(call: Call, exc: BaseException) -> Envelope:
    call.traceback = "".join(traceback.format_exception(exc))
    return from_exception(exc, tool=call.tool_name)


def project_result(call: Call, tool: Tool, value: Any) -> Envelope:
    try:
        return _project_value(call, tool, value)
    except ValueError:
        reason = unrepresentable(value.result if isinstance(value, Envelope) else value)
        if reason is None:
            raise
        return failure(ErrorKind.INVALID_OUTPUT, f"`{tool.name}` returned a result that {reason}")


def _project_value(call: Call, tool: Tool, value: Any) -> Envelope:
    if not (isinstance(value, Envelope) and value.error is not None):
        checked = value.result if isinstance(value, Envelope) else jsonable(value)
        problem = tool.output_problem(checked)
        if problem is not None:
            return failure(
                ErrorKind.INVALID_OUTPUT,
                f"`{tool.name}` returned a result that does not match its output schema: {problem}",
                details={"output_schema": tool.spec.output_schema},
            )
    completed = Completed(
        tool_name=call.tool_name,
        value=value,
        sink=call.sink,
        streams=dict(call.streams),
        call_id=call.id,
    )
    return project(tool.spec.family, completed, call.registry.budgets)


def stopped_envelope(call: Call, reason: str) -> Envelope:
    """The envelope of a call stopped by the person or by its time budget, keeping its output."""
    spec = call.spec
    if reason in ("timeout", "idle_timeout"):
        budget = "" if spec is None or spec.timeout is None else f"{spec.timeout:g} s "
        envelope = failure(
            ErrorKind.TIMEOUT,
            f"`{call.tool_name}` ran past its {budget}time budget and was stopped",
            recovery_hint="retry with a smaller request, or ask for a longer timeout",
        ).replace(killed_by="timeout" if reason == "timeout" else "idle_timeout")
    else:
        envelope = failure(
            ErrorKind.TERMINATED,
            f"`{call.tool_name}` was terminated by the user after {call.elapsed:.1f} s",
            recovery_hint="the person stopped this call; ask before running it again",
        ).replace(killed_by="user")
    return attach_output(envelope, call.streams, call.sink, call.registry.budgets)


async def _inject(call: Call, fault: Fault) -> Envelope:
    call.injected = True
    for chunk in fault.after_output:
        call._output(chunk, "stdout")
        await asyncio.sleep(0)
    envelope = failure(fault.kind, fault.message_for(call.tool_name))
    if fault.kind is ErrorKind.TIMEOUT:
        envelope = envelope.replace(killed_by="timeout")
    elif fault.kind is ErrorKind.TERMINATED:
        envelope = envelope.replace(killed_by="user")
    return attach_output(envelope, call.streams, call.sink, call.registry.budgets)


async def _await_fulfilment(call: Call, tool: Tool) -> Envelope:
    decided = _ask(call, GateRequest.of(call.id, tool.name, "result", call.arguments))
    call._emit("tool.input_requested")
    decision = await decided
    call._emit("tool.fulfilled", by=decision.by)
    return project_result(call, tool, decision.value)


async def _plan(call: Call, tool: Tool, arguments: dict[str, Any]) -> Envelope:
    """A dry run: the tool's own planner, or a report of what would happen. No side effects."""
    spec = tool.spec
    if tool.planner is not None:
        args, kwargs = tool.bind(arguments)
        accepts = inspect.signature(tool.planner).parameters
        if tool.context_param is not None and tool.context_param in accepts:
            kwargs[tool.context_param] = make_context(call)
        try:
            planned = await _maybe_await(tool.planner(*args, **kwargs))
        except Exception as exc:
            call.traceback = traceback.format_exc()
            return from_exception(exc, tool=tool.name)
        if isinstance(planned, Envelope):
            return planned
        return success(tool.name, {"dry_run": True, "plan": planned}, summary="dry run planned")
    permission = call.registry.permission(tool.name)
    plan: dict[str, Any] = {
        "dry_run": True,
        "tool": tool.name,
        "arguments": arguments,
        "coercions": [str(coercion) for coercion in call.coercions],
        "permission": permission,
        "would_ask_approval": permission == "always_ask",
        "would_run": permission != "always_deny",
        "ownership": spec.ownership,
        "effects": list(spec.effects),
        "read_only": spec.read_only,
        "destructive": spec.destructive,
        "timeout": None if spec.streaming else spec.timeout,
    }
    return success(tool.name, plan, summary=f"dry run: {tool.name} was not executed")
