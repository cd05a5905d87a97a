"""The lifecycle of one call, from arguments to envelope, step by step.

    admit (name, nesting, lookup, preflight) → before_tool hooks → dry run → policy, fault,
    approval → limits → begin → body → outcome (projection) → after_tool hooks → end

Every driver runs these same steps: the runtime loop all of them (``steps``), the thread that
waits for a plain ``def`` call, and a lane, only those such a call has (``admit``, ``begin``,
the body, ``workbench.runtime.steps._outcome``). Every step that can fail ends the call with an
envelope; nothing a tool, hook or subscriber raises escapes. Stopping races every waiting step.
"""

from __future__ import annotations

import asyncio
import inspect
import time
from collections.abc import Callable, Coroutine
from typing import TYPE_CHECKING, Any

from workbench.context import ToolCancelled
from workbench.declare import BindError
from workbench.envelope import Envelope, ErrorKind, failure, unknown_tool
from workbench.runtime.sheet import outcome_seen
from workbench.runtime.steps._asking import (
    approval,
    await_fulfilment,
    denied,
    inject,
    plan,
    run_before_hook,
)
from workbench.runtime.steps._body import WorkerBody, run_body
from workbench.runtime.steps._exits import EXITS, ToolExit, guarded, the_bodys
from workbench.runtime.steps._left_behind import let_go
from workbench.runtime.steps._outcome import (
    body_failure,
    failed,
    project_result,
    returned,
    stopped_envelope,
    token_reason,
)
from workbench.runtime.threads import task_ended, task_runs

if TYPE_CHECKING:
    from workbench.declare import Tool
    from workbench.runtime.call import Call
    from workbench.runtime.policy import Limit


MAX_NESTING_DEPTH = 16
"""How deep calls made from inside running tools may nest before the runtime refuses one."""

_BODIES: set[asyncio.Task[Any]] = set()  # bodies left behind after a stop, until they end


def admit(call: Call) -> Tool | Envelope:
    """The first step of every call: the tool it names and its arguments as the preflight
    accepts them (kept on the call), or the envelope that ends it here."""
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
    tool = call.registry.get(call.tool_name)
    if tool is None:
        return _unknown_tool(call)
    sheet = call.sheet
    sheet.asked.spec = tool.spec
    checked = tool.preflight(call.raw_args)
    sheet.asked.coercions = checked.coercions
    if checked.error is not None:
        return checked.error
    sheet.asked.arguments = checked.arguments or {}
    return tool


def begin(call: Call, arguments: dict[str, Any]) -> None:
    """The body is about to run with ``arguments``: the call is running from now on."""
    sheet = call.sheet
    sheet.phase.state = "running"
    sheet.times.started_at = time.time()
    sheet.emit("tool.started", arguments=arguments)


def _unknown_tool(call: Call) -> Envelope:
    return unknown_tool(call.tool_name, call.registry.names())


async def steps(call: Call) -> Envelope:
    """Every step of the lifecycle on the runtime loop, up to the envelope."""
    admitted = admit(call)
    if isinstance(admitted, Envelope):
        return admitted
    tool, registry, sheet = admitted, call.registry, call.sheet
    arguments = sheet.asked.arguments or {}

    for hook in registry.policy.before:
        outcome = await run_before_hook(hook, call, arguments)
        if isinstance(outcome, Envelope):
            return outcome
        if outcome is not None:
            rechecked = tool.preflight(dict(outcome))
            if rechecked.error is not None:
                return rechecked.error
            arguments = sheet.asked.arguments = rechecked.arguments or {}

    if call.dry_run:
        return await plan(call, tool, arguments)

    fault = registry.policy.faults.take(call.tool_name)
    permission = registry.policy.permission(call.tool_name)
    if permission == "always_deny":
        return failure(
            ErrorKind.REJECTED,
            f"`{call.tool_name}` is blocked by this registry's policy",
            recovery_hint="do not call this tool; choose another way to reach the goal",
        )
    if fault is not None and fault.kind is ErrorKind.USER_DENIED:
        sheet.outcome.injected = True
        sheet.emit("tool.approval_requested", arguments=arguments, effects=list(tool.spec.effects))
        sheet.emit("tool.denied", reason=None, by="fault")
        return denied(call, None)
    if permission == "always_ask":
        decision = await approval(call, tool, arguments)
        if decision.verdict == "deny":
            sheet.emit("tool.denied", reason=decision.reason, by=decision.by)
            return denied(call, decision.reason)
        arguments = sheet.asked.arguments or arguments

    # A call made from inside a running tool runs in its ancestors' slot: waiting for a slot
    # that they hold while they wait for it would deadlock.
    limits = [] if call.parent is not None else [registry.limits.concurrency]
    if tool.spec.serial and not _inside(call, tool.name):
        limits.append(registry.limits.serial(tool.name))
    acquired: list[Limit] = []
    try:
        for limit in limits:
            if not limit.try_acquire():
                sheet.times.clock.wait_begins()
                try:
                    await limit.acquire()
                finally:
                    sheet.times.clock.wait_ends()
            acquired.append(limit)
        begin(call, arguments)
        if fault is not None:
            return await inject(call, fault)
        if tool.kind == "custom":
            return await await_fulfilment(call, tool)
        return await _execute(call, tool, arguments)
    finally:
        kept_by = sheet.control.slots_kept_by
        for limit in reversed(acquired):
            if kept_by is None:
                limit.release()
            else:  # a body left running past the bound keeps its slots until it returns
                kept_by.add_done_callback(_releaser(limit))


def _releaser(limit: Limit) -> Callable[[object], None]:
    """A done-callback that gives ``limit``'s place back."""
    return lambda _: limit.release()


def _inside(call: Call, tool_name: str) -> bool:
    """True when an ancestor of ``call`` is a call of ``tool_name`` (it holds that serial slot)."""
    ancestor = call.parent
    while ancestor is not None:
        if ancestor.tool_name == tool_name:
            return True
        ancestor = ancestor.parent
    return False


async def _execute(call: Call, tool: Tool, arguments: dict[str, Any]) -> Envelope:
    """Run the body under the wall-clock budget. A stop cancels the body and gives it the
    grace to end; a body that ignores that is left behind and the call ends without it."""
    assert call.spec is not None
    control = call.sheet.control
    try:
        body, worker = run_body(tool, call, arguments)
    except BindError as exc:
        return body_failure(call, exc)
    running: asyncio.Future[Any]
    if inspect.iscoroutine(body):
        # Most async bodies finish without ever suspending: run the first step here, and only a
        # body that does suspend becomes a task of its own (which a stop can cancel and leave).
        try:
            suspended_on = body.send(None)
        except StopIteration as stop:
            return returned(call, tool, stop.value)
        except Exception as exc:
            return body_failure(call, exc)
        except EXITS as exc:
            if not the_bodys(exc):
                raise
            return failed(call, ToolExit(exc))
        running = asyncio.get_running_loop().create_task(_rest(body, suspended_on))
    else:
        running = asyncio.ensure_future(body)
    if isinstance(running, asyncio.Task):
        task_runs(running, call)  # the step holding a blocked loop may be this task's
        running.add_done_callback(task_ended)
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
            return failed(call, exc)
        reason = control.note_reason("timeout")
    except ToolCancelled:
        reason = control.note_reason(token_reason(call))
    except Exception as exc:
        return failed(call, exc)
    else:
        if not call.token.cancelled:
            return project_result(call, tool, value)
        reason = control.note_reason(token_reason(call))
    finally:
        control.phase = "driving"
    await _let_go(call, running, worker, reason)
    return stopped_envelope(call, reason)


async def _rest(body: Coroutine[Any, Any, Any], suspended_on: Any) -> Any:
    return await guarded(body, suspended_on)


async def _let_go(
    call: Call, running: asyncio.Future[Any], worker: WorkerBody | None, reason: str
) -> None:
    """Cancel the body and give it the grace; past it, leave it behind with a note (and a
    warning in the history when its late result finally arrives)."""
    control = call.sheet.control
    call.token.cancel(reason)
    body: asyncio.Future[Any] | Any = running if worker is None else worker.finished
    if worker is None:
        running.cancel()
    running.add_done_callback(outcome_seen)
    history, call_id, limit = call.registry.history, call.id, call.registry.limits.concurrency

    def late() -> None:
        limit.caught_up()
        history.add_warning(call_id, "late result discarded after the call ended")

    if await control.let_go(body, late):
        return
    if isinstance(running, asyncio.Task):
        _BODIES.add(running)
        running.add_done_callback(_BODIES.discard)
    freed, text = let_go(call, "async body" if worker is None else "thread body", reason)
    if not freed:
        control.slots_kept_by = body
    call.warn(text)


def _uncancel() -> None:
    task = asyncio.current_task()
    if task is not None:
        task.uncancel()
