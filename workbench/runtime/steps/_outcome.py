"""What a call's body left: its value projected into an envelope, its failure, or the envelope
of a call that was stopped. Every driver ends a body through these."""

from __future__ import annotations

import asyncio
import traceback
from typing import TYPE_CHECKING, Any

from workbench.context import ToolCancelled
from workbench.declare import BindError
from workbench.envelope import (
    Envelope,
    ErrorKind,
    UnrepresentableValue,
    failure,
    from_exception,
    jsonable,
    unrepresentable,
)
from workbench.families import Completed, attach_output, project
from workbench.runtime.steps._exits import ToolExit

if TYPE_CHECKING:
    from workbench.declare import Tool
    from workbench.runtime.call import Call
    from workbench.runtime.sheet import StopReason


def token_reason(call: Call) -> StopReason:
    """Why the call's token was cancelled ("user" when a body cancelled it for no reason)."""
    reason = call.token.reason
    return reason if reason in ("user", "timeout", "idle_timeout") else "user"  # type: ignore[return-value]


def stopped_by_token(call: Call) -> Envelope:
    """The stopped envelope of a call whose token was cancelled, the reason recorded."""
    return stopped_envelope(call, call.sheet.control.note_reason(token_reason(call)))


def returned(call: Call, tool: Tool, value: Any) -> Envelope:
    """The envelope of a body that returned ``value``. The token is set before a body is
    cancelled, so a body that returned because its process was just killed counts as stopped."""
    if call.token.cancelled:
        return stopped_by_token(call)
    return project_result(call, tool, value)


def failed(call: Call, exc: BaseException) -> Envelope:
    """The envelope of a body that raised: the failure a model reads, the traceback kept for
    the tool's author. A ``ToolExit`` is the exit its body raised, said in a warning."""
    if isinstance(exc, ToolExit):
        call.sheet.outcome.traceback = "".join(traceback.format_exception(exc.raised))
        envelope = from_exception(exc.raised, tool=call.tool_name)
        return envelope.replace(warnings=[*envelope.warnings, exc.note])
    call.sheet.outcome.traceback = "".join(traceback.format_exception(exc))
    return from_exception(exc, tool=call.tool_name)


def project_result(call: Call, tool: Tool, value: Any) -> Envelope:
    """A body's value as the canonical envelope, through the tool's family; a value that does
    not match the output schema, or that JSON cannot hold (whatever the reason: an integer
    too long, nesting too deep, bytes that are not text), is an ``invalid_output`` failure."""
    try:
        return _project_value(call, tool, value)
    except ValueError as exc:
        reason = unrepresentable(value.result if isinstance(value, Envelope) else value)
        if reason is None and isinstance(exc, UnrepresentableValue):
            reason = str(exc)
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
    sheet = call.sheet
    completed = Completed(
        tool_name=call.tool_name,
        value=value,
        sink=sheet.output.sink,
        streams=dict(sheet.output.streams),
        call_id=call.id,
    )
    return project(tool.spec.family, completed, call.registry.budgets)


def body_failure(call: Call, exc: BaseException) -> Envelope:
    """The envelope of a body that raised ``exc`` (not ``KeyboardInterrupt``), on any driver: a
    binding error, a stop it noticed or was cancelled by, or its failure."""
    if isinstance(exc, BindError):
        return failure(ErrorKind.INVALID_ARGS, str(exc), field=exc.field or None)
    if isinstance(exc, ToolCancelled):
        return stopped_by_token(call)
    if isinstance(exc, asyncio.CancelledError):  # a stop cancelled the async body's task
        control = call.sheet.control
        return stopped_envelope(call, control.note_reason(control.reason or "user"))
    return failed(call, exc)


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
    return with_output(call, envelope)


def with_output(call: Call, envelope: Envelope) -> Envelope:
    """``envelope`` keeping the output the call produced (previews, artifacts)."""
    sheet = call.sheet
    return attach_output(envelope, sheet.output.streams, sheet.output.sink, call.registry.budgets)
