"""The steps of a call that ask someone: ``before_tool`` hooks, the person's approval, a custom
tool's result, and the two ways a call ends without its body (a dry run's plan, an injected
fault). Each answer is checked as carefully as the model's own arguments were."""

from __future__ import annotations

import asyncio
import inspect
import traceback
from collections.abc import Callable, Coroutine, Mapping
from typing import TYPE_CHECKING, Any

from workbench.envelope import Envelope, ErrorKind, failure, from_exception, success
from workbench.runtime.sheet import Decision, GateRequest
from workbench.runtime.steps._body import make_context, on_worker
from workbench.runtime.steps._outcome import project_result, with_output
from workbench.runtime.threads import watched_step

if TYPE_CHECKING:
    from workbench.declare import Tool
    from workbench.runtime.call import Call
    from workbench.runtime.policy import Fault


async def maybe_await(value: Any) -> Any:
    """``value``, awaited if it is awaitable (hooks and planners may be either)."""
    return await value if inspect.isawaitable(value) else value


async def run_hook(hook: Callable[..., Any], which: str, call: Call, *args: Any) -> Any:
    """What ``hook(call, *args)`` returns (awaited if awaitable). A plain ``def`` hook runs on
    a worker thread, so one that blocks holds neither the runtime loop (every other call)
    nor ``terminate()`` of this one; an ``async def`` hook runs on the loop, where blocking
    is named on the calls it delayed as the ``which`` hook's doing, not the tool's."""
    if _is_async(hook):
        with watched_step(f"a {which} hook ({_name_of(hook)}) of `{call.tool_name}`"):
            return await hook(call, *args)
    ran, _ = on_worker(lambda: hook(call, *args))
    return await maybe_await(await ran)


def _is_async(hook: Callable[..., Any]) -> bool:
    """True for an ``async def`` function, or an object whose ``__call__`` is one."""
    if inspect.iscoroutinefunction(hook):
        return True
    return not inspect.isroutine(hook) and inspect.iscoroutinefunction(type(hook).__call__)


def _name_of(hook: Callable[..., Any]) -> str:
    return getattr(hook, "__qualname__", None) or type(hook).__qualname__


async def run_before_hook(hook: Any, call: Call, arguments: dict[str, Any]) -> Any:
    """None to proceed, a mapping of new arguments, or an envelope that ends the call."""
    try:
        outcome = await run_hook(hook, "before_tool", call, dict(arguments))
    except Exception as exc:
        call.sheet.outcome.traceback = traceback.format_exc()
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


def denied(call: Call, reason: str | None) -> Envelope:
    """The envelope of a call the person (or an approver) denied."""
    message = f"The person denied this `{call.tool_name}` call"
    return failure(
        ErrorKind.USER_DENIED,
        f"{message}: {reason}" if reason else f"{message}.",
        recovery_hint="do not retry unchanged; ask the person what they want instead",
    )


async def approval(call: Call, tool: Tool, arguments: dict[str, Any]) -> Decision:
    """Pause until the person (or the registry's approver) allows, denies or modifies the call.

    A modification is checked by the preflight again; one it refuses is set aside (the call
    keeps waiting, and says why), one it accepts replaces the arguments and is recorded.
    """
    sheet = call.sheet
    while True:
        request = GateRequest.of(
            call.id, tool.name, "approval", sheet.asked.arguments, tuple(tool.spec.effects)
        )
        sheet.phase.state = "awaiting_approval"
        decided = _ask(call, request)
        sheet.emit(
            "tool.approval_requested",
            arguments=sheet.asked.arguments,
            effects=list(tool.spec.effects),
            binding=request.binding,
        )
        decision = await decided
        if decision.verdict != "modify":
            if decision.verdict == "allow":
                sheet.emit("tool.approved", by=decision.by)
            return decision
        checked = tool.preflight(decision.arguments or {})
        if checked.error is not None:
            error = checked.error.error
            _set_aside(
                call, f"the modified arguments were refused: {error.message if error else ''}"
            )
            continue
        before = sheet.asked.arguments
        sheet.asked.arguments = checked.arguments or {}
        sheet.asked.coercions = checked.coercions
        sheet.asked.modifications.append(
            {"from": before, "to": sheet.asked.arguments, "by": decision.by}
        )
        sheet.emit("tool.modified", before=before, after=sheet.asked.arguments, by=decision.by)
        sheet.emit("tool.approved", by=decision.by, modified=True)
        return decision


def _set_aside(call: Call, problem: str) -> None:
    call.sheet.warn(problem)
    call.sheet.emit("tool.decision_set_aside", reason=problem)


def _ask(call: Call, request: GateRequest) -> Coroutine[Any, Any, Decision]:
    """Open the call's gate on ``request``: it is pending at once; awaiting the result waits
    for the decision (Terminate cancels the wait)."""
    return call.gate.open(
        request, call.registry.policy.approver, lambda problem: _set_aside(call, problem)
    )


async def await_fulfilment(call: Call, tool: Tool) -> Envelope:
    """A custom tool's result, supplied by the person (``call.fulfil``) and checked against
    the tool's output schema like any body's value; a Deny (``call.deny``) refuses to supply
    one, and the call ends ``user_denied`` at once."""
    decided = _ask(call, GateRequest.of(call.id, tool.name, "result", call.arguments))
    call.sheet.emit("tool.input_requested")
    decision = await decided
    if decision.verdict == "deny":
        call.sheet.emit("tool.denied", reason=decision.reason, by=decision.by)
        return denied(call, decision.reason)
    call.sheet.emit("tool.fulfilled", by=decision.by)
    return project_result(call, tool, decision.value)


async def inject(call: Call, fault: Fault) -> Envelope:
    """End the call with an injected fault, through the normal path (after its output)."""
    call.sheet.outcome.injected = True
    for chunk in fault.after_output:
        call.sheet.write_output(chunk, "stdout")
        await asyncio.sleep(0)
    envelope = failure(fault.kind, fault.message_for(call.tool_name))
    if fault.kind is ErrorKind.TIMEOUT:
        envelope = envelope.replace(killed_by="timeout")
    elif fault.kind is ErrorKind.TERMINATED:
        envelope = envelope.replace(killed_by="user")
    return with_output(call, envelope)


async def plan(call: Call, tool: Tool, arguments: dict[str, Any]) -> Envelope:
    """A dry run: the tool's own planner, or a report of what would happen. No side effects."""
    spec = tool.spec
    if tool.planner is not None:
        args, kwargs = tool.bind(arguments)
        accepts = inspect.signature(tool.planner).parameters
        if tool.context_param is not None and tool.context_param in accepts:
            kwargs[tool.context_param] = make_context(call)
        try:
            planned = await maybe_await(tool.planner(*args, **kwargs))
        except Exception as exc:
            call.sheet.outcome.traceback = traceback.format_exc()
            return from_exception(exc, tool=tool.name)
        if isinstance(planned, Envelope):
            return planned
        return success(tool.name, {"dry_run": True, "plan": planned}, summary="dry run planned")
    permission = call.registry.policy.permission(tool.name)
    report: dict[str, Any] = {
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
    return success(tool.name, report, summary=f"dry run: {tool.name} was not executed")
