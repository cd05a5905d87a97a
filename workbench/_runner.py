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

from workbench._builders import failure, from_exception, success
from workbench._context import ToolCancelled
from workbench._envelope import Envelope, jsonable, unrepresentable
from workbench._errors import ErrorKind
from workbench._execute import WorkerRun, make_context, run_body
from workbench._faults import Fault
from workbench._schema import BindError
from workbench.families import Completed, project, render
from workbench.families.failure import attach_output, fallback_receipt

if TYPE_CHECKING:
    from workbench._call import Call
    from workbench._limits import Limit
    from workbench._tool import Tool


async def drive(call: Call) -> None:
    """Run ``call`` to its end on the current loop; always finishes it with an envelope.

    Stopping (Terminate, or the call being interrupted while it waits) cancels this task; the
    reason is on the call, and whatever step was waiting turns into the stopped envelope.
    """
    call._driving = True
    task = asyncio.current_task()
    call._task = task
    cancelled_from_outside: asyncio.CancelledError | None = None
    try:
        if call._stop_reason is not None:
            envelope = _stopped(call, call._stop_reason)
        else:
            envelope = await _lifecycle(call)
    except asyncio.CancelledError as cancelled:
        if call._stop_reason is None:
            # Not Terminate: whoever awaited the call was cancelled (or the loop is closing).
            # The call still ends, as terminated, and the same cancellation goes on afterwards
            # (re-raised as it came, so the cancel scope that sent it recognises it).
            cancelled_from_outside = cancelled
            call._stop_reason = "user"
            call.token.cancel("user")
        elif task is not None:
            task.uncancel()
        envelope = _stopped(call, call._stop_reason)
    except Exception as exc:
        call.traceback = traceback.format_exc()
        envelope = from_exception(exc, tool=call.tool_name)
    call._finishing = True
    if cancelled_from_outside is not None:
        # The awaiting task may be cancelled again at every await (anyio cancel scopes do
        # that), so the call is concluded in a task of its own and the cancellation goes on.
        finishing = asyncio.ensure_future(_conclude(call, envelope))
        _CONCLUDING.add(finishing)
        finishing.add_done_callback(_CONCLUDING.discard)
        raise cancelled_from_outside
    await _conclude(call, envelope)


_CONCLUDING: set[asyncio.Future[None]] = set()  # strong references until they finish


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
    if len(call.sink) > len(envelope.artifacts):
        envelope = envelope.replace(artifacts=call.sink.refs)
    if envelope.call_id != call.id or envelope.tool_name != call.tool_name:
        # Both are plain strings the runtime owns: no need to re-validate the whole envelope.
        envelope = envelope.model_copy(update={"call_id": call.id, "tool_name": call.tool_name})
    try:
        receipt = render(envelope, registry.budgets)
    except Exception as exc:
        call.notes.append(f"rendering failed: {exc!r}")
        receipt = fallback_receipt(envelope)
    call._finish(envelope, receipt)


async def _lifecycle(call: Call) -> Envelope:
    registry = call.registry
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
        call._emit("tool.denied", reason=None)
        return _denied(call, None)
    if permission == "always_ask":
        decision, reason = await _ask(call, "approval", {"allow", "deny"})
        if decision == "deny":
            call._emit("tool.denied", reason=reason)
            return _denied(call, reason)
        call._emit("tool.approved")

    limits = [registry.limit]
    if tool.spec.serial:
        limits.append(registry.serial_limit(tool.name))
    acquired: list[Limit] = []
    try:
        for limit in limits:
            if not limit.try_acquire():
                await limit.acquire()
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


async def _ask(call: Call, action: str, accepted: set[str]) -> tuple[str, Any]:
    """Pause until the person decides: ``(decision, value)``. Terminate cancels the wait."""
    loop = asyncio.get_running_loop()
    call.pending_action = "approval" if action == "approval" else "result"
    if action == "approval":
        call.state = "awaiting_approval"
        spec = call.spec
        call._emit(
            "tool.approval_requested",
            arguments=call.arguments,
            effects=[] if spec is None else list(spec.effects),
        )
    else:
        call.state = "running"
        call._emit("tool.input_requested")
    try:
        while True:
            call._decision = loop.create_future()
            decision, value = await call._decision
            if decision in accepted:
                return decision, value
    finally:
        call.pending_action = None
        call._decision = None


async def _execute(call: Call, tool: Tool, arguments: dict[str, Any]) -> Envelope:
    """Run the body under the wall-clock budget; Terminate cancels this task mid-await."""
    assert call.spec is not None
    try:
        body, worker = run_body(tool, call, arguments)
    except BindError as exc:
        return failure(ErrorKind.INVALID_ARGS, str(exc), field=exc.field or None)
    if inspect.iscoroutine(body):
        # Most async bodies finish without ever suspending: run the first step here, and only a
        # body that does suspend pays for the deadline timer.
        try:
            suspended_on = body.send(None)
        except StopIteration as stop:
            return _returned(call, tool, stop.value)
        except ToolCancelled:
            return _stopped(call, _stop(call, call.token.reason or "user"))
        except Exception as exc:
            return _failed(call, exc)
        body = _resume(body, suspended_on)
    budget = None if call.spec.streaming else call.spec.timeout
    deadline = asyncio.timeout(budget)
    call._in_body = True
    try:
        async with deadline:
            value = await body
    except asyncio.CancelledError:
        if call._stop_reason is None:
            raise
        _uncancel()
        reason = call._stop_reason
    except TimeoutError as exc:
        if not deadline.expired():
            return _failed(call, exc)
        reason = "timeout"
    except ToolCancelled:
        reason = call.token.reason or "user"
    except Exception as exc:
        return _failed(call, exc)
    else:
        if not call.token.cancelled:
            return _project(call, tool, value)
        reason = call.token.reason or "user"
    finally:
        call._in_body = False
    _stop(call, reason)
    if worker is not None and not worker.finished.done():
        await _grace(call, worker, reason)
    return _stopped(call, reason)


def _returned(call: Call, tool: Tool, value: Any) -> Envelope:
    # The token is set before the task is cancelled, so a body that returned because its
    # process was just killed still counts as stopped.
    if call.token.cancelled:
        return _stopped(call, _stop(call, call.token.reason or "user"))
    return _project(call, tool, value)


def _stop(call: Call, reason: str) -> str:
    call._stop_reason = reason
    call.token.cancel(reason)
    return reason


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


async def _grace(call: Call, worker: WorkerRun, reason: str) -> None:
    """Give a thread body the registry's grace to notice cancellation; past it, note that its
    late result will be discarded (in the history too, when it finally arrives)."""
    grace = call.registry.terminate_grace
    await asyncio.wait({asyncio.wrap_future(worker.finished)}, timeout=grace)
    if worker.finished.done():
        return
    call.notes.append(
        f"the tool ignored cancellation for {grace:g} s; the call ended {reason} and "
        "its late result will be discarded"
    )
    history, call_id = call.registry.history, call.id
    worker.finished.add_done_callback(
        lambda _: history.add_warning(call_id, "late result discarded after the call ended")
    )


def _failed(call: Call, exc: BaseException) -> Envelope:
    call.traceback = "".join(traceback.format_exception(exc))
    return from_exception(exc, tool=call.tool_name)


def _project(call: Call, tool: Tool, value: Any) -> Envelope:
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


def _stopped(call: Call, reason: str) -> Envelope:
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
    _decision, value = await _ask(call, "result", {"result"})
    return _project(call, tool, value)


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
