"""The end of every call, on whichever thread ends it: the receipt, the committed history row,
then the announcement. Nobody learns that a call ended before its row is kept."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from workbench.declare import structured_note
from workbench.envelope import MARKER_RE, Envelope
from workbench.families import fallback_receipt, family_of, render
from workbench.history import CallRecord
from workbench.preflight import forgiven
from workbench.runtime.sheet import Event, EventType
from workbench.runtime.steps._commit import ANNOUNCER, COMMITTER, lane_group_of
from workbench.runtime.steps._raw_args import kept_arguments, kept_raw_args
from workbench.runtime.threads import call_in_loop, driving, on_loop_thread

if TYPE_CHECKING:
    from workbench.runtime.call import Call
    from workbench.runtime.sheet import CallState

_TERMINAL: dict[CallState, EventType] = {
    "terminated": "tool.terminated",
    "succeeded": "tool.completed",
    "failed": "tool.failed",
}


def final_state(envelope: Envelope) -> CallState:
    """The state an envelope ends a call in."""
    if envelope.killed_by == "user":
        return "terminated"
    return "succeeded" if envelope.ok else "failed"


def seal(call: Call, envelope: Envelope) -> None:
    """End ``call`` with ``envelope``: its artifacts listed, the ids the model reads back, the
    receipt, then the committed row and the announcement."""
    sink = call.sheet.output.sink_if_made  # None when nothing asked for one: no artifacts to list
    if sink is not None and len(sink) > len(envelope.artifacts):
        envelope = envelope.replace(artifacts=sink.refs)
    call_id = call.model_call_id or call.id  # the model reads back the id it sent
    tool_name = call.tool_name if isinstance(call.tool_name, str) else repr(call.tool_name)
    if envelope.call_id != call_id or envelope.tool_name != tool_name:
        # Both are plain strings the runtime owns: no need to re-validate the whole envelope.
        envelope = envelope.model_copy(update={"call_id": call_id, "tool_name": tool_name})
    try:
        receipt = render(envelope, call.registry.budgets)
    except Exception as exc:
        call.sheet.outcome.notes.append(f"rendering failed: {exc!r}")
        receipt = fallback_receipt(envelope)
    note = structured_note(call.spec, envelope, receipt, call.registry.artifacts.resolve)
    if note is not None:
        call.sheet.outcome.notes.append(note)
    _finish(call, envelope, receipt)


def _finish(call: Call, envelope: Envelope, receipt: str) -> None:
    """Commit the call's row (its terminal event included), then announce the end on the
    runtime loop."""
    sheet = call.sheet
    if sheet.finished:
        return
    sheet.times.ended_at = time.time()
    sheet.times.clock.end()
    state = final_state(envelope)
    for spool in sheet.output.streams.values():
        spool.close()
    error = envelope.error
    terminal = Event(
        _TERMINAL[state],
        call.id,
        data={
            "status": envelope.status,
            "kind": None if error is None else error.kind.value,
            "summary_text": envelope.summary_text,
        },
    )
    sheet.log.events.append(terminal)
    record = record_of(call, envelope, receipt, state)
    history = call.registry.history
    loop = sheet.loop

    def noted(problem: str | None) -> None:
        if problem is not None:
            # The row was kept without it: the warning goes on the row too.
            history.add_warning(call.id, problem)

    def committed(problem: str | None) -> None:
        noted(problem)
        ANNOUNCER.push(loop, lambda: _publish(call, envelope, receipt, state, terminal, problem))

    if on_loop_thread(loop):
        COMMITTER.push(loop, history, record, committed, alone=driving() <= 1)
        return

    def committed_here(problem: str | None) -> None:
        noted(problem)
        _publish(call, envelope, receipt, state, terminal, problem)

    group = lane_group_of(call)
    if group is not None:  # ended in a lane: committed with the rows of the calls beside it
        group.add(history, record, committed_here)
        return
    # Ended on another thread (run inline by the thread waiting for it): committed and
    # announced right here, with whatever other threads write at the same moment.
    committed_here(history.write([record]))


def _publish(
    call: Call,
    envelope: Envelope,
    receipt: str,
    state: CallState,
    terminal: Event,
    problem: str | None,
) -> None:
    sheet = call.sheet
    if problem is not None:
        sheet.outcome.history_problem = problem
        sheet.outcome.notes.append(problem)
        envelope = envelope.replace(warnings=[*envelope.warnings, problem])
    sheet.outcome.envelope = envelope
    sheet.outcome.receipt = receipt
    sheet.phase.state = state
    sheet.control.phase = "ended"
    if sheet.log.subscribed_on_the_loop() and call_in_loop(
        sheet.loop, sheet.announce_end, envelope, terminal
    ):
        # Subscribers (a card) hear of the end on the loop, in order after the call's other
        # events, and before any waiter does: a card whose call wait() returned is final.
        return
    sheet.announce_end(envelope, terminal)


def record_of(
    call: Call,
    envelope: Envelope | None = None,
    receipt: str | None = None,
    state: CallState | None = None,
) -> CallRecord:
    """The history row of ``call`` (as it ends, or as it is now)."""
    sheet = call.sheet
    envelope = envelope if envelope is not None else sheet.outcome.envelope
    receipt = (receipt if receipt is not None else sheet.outcome.receipt) or ""
    error = None if envelope is None else envelope.error
    result = None if envelope is None else envelope.result
    truncated = bool(MARKER_RE.search(receipt)) or (
        isinstance(result, dict)
        and any(value is True for key, value in result.items() if key.endswith("truncated"))
    )
    replay_of = sheet.asked.replay_of
    raw_args, raw_args_note = kept_raw_args(call)
    arguments, arguments_note = kept_arguments(call)
    return CallRecord(
        call_id=call.id,
        model_call_id=call.model_call_id,
        parent_call_id=call.parent_id if replay_of is None else replay_of["replay_of"],
        run_id=call.run_id,
        message_id=call.message_id,
        tool=call.tool_name if isinstance(call.tool_name, str) else repr(call.tool_name),
        family=None if envelope is None else family_of(envelope).name,
        state=state or sheet.phase.state,
        status=None if envelope is None else envelope.status,
        kind=None if error is None else error.kind.value,
        retryable=None if error is None else error.retryable,
        summary_text=None if envelope is None else envelope.summary_text,
        elapsed_ms=sheet.times.clock.run * 1000.0,
        queued_ms=sheet.times.clock.queued * 1000.0,
        queued_at=sheet.times.queued_at,
        started_at=sheet.times.started_at,
        ended_at=sheet.times.ended_at,
        receipt_chars=len(receipt),
        truncated=truncated,
        killed_by=None if envelope is None else envelope.killed_by,
        terminated=envelope is not None and envelope.killed_by == "user",
        denied=error is not None and error.kind.value == "user_denied",
        timed_out=error is not None and error.kind.value == "timeout",
        injected=sheet.outcome.injected,
        dry_run=call.dry_run,
        raw_args=raw_args,
        arguments=arguments,
        coercions=[str(coercion) for coercion in forgiven(sheet.asked.coercions)],
        events=[
            _bounded(event.to_dict(), sheet.asked.arguments, arguments)
            for event in sheet.log.events
        ]
        + ([] if replay_of is None else [replay_of]),
        canonical=None if envelope is None else envelope.canonical(),
        wire=None,  # derived from "canonical" when the history is read
        receipt=receipt,
        artifacts=[] if envelope is None else [ref.path for ref in envelope.artifacts],
        warnings=([] if envelope is None else list(envelope.warnings))
        + sheet.outcome.notes
        + [note for note in (raw_args_note, arguments_note) if note is not None],
    )


def _bounded(event: dict[str, Any], arguments: Any, kept: Any) -> dict[str, Any]:
    """An event as the row keeps it: when it carries the call's ``arguments`` and the row
    keeps a preview of them (``kept``), the preview, not a second whole copy."""
    if kept is not arguments and event.get("arguments") is arguments:
        return {**event, "arguments": kept}
    return event
