"""The end of every call, on whichever thread ends it: the receipt, the committed history row,
then the announcement. Nobody learns that a call ended before its row is kept."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from workbench.declare import structured_note
from workbench.envelope import MARKER_RE, Envelope
from workbench.families import fallback_receipt, family_of, render
from workbench.history import CallRecord
from workbench.runtime._commit import ANNOUNCER, COMMITTER, lane_group_of
from workbench.runtime._events import Event, EventType
from workbench.runtime._loop import call_in_loop, on_loop_thread
from workbench.runtime._raw_args import kept_raw_args
from workbench.runtime._tasks import driving

if TYPE_CHECKING:
    from workbench.runtime._call import Call
    from workbench.runtime._progress import CallState

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
    sink = call.progress.sink_if_made  # None when nothing asked for one: no artifacts to list
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
        call.progress.notes.append(f"rendering failed: {exc!r}")
        receipt = fallback_receipt(envelope)
    note = structured_note(call.spec, envelope, receipt, call.registry.artifacts.resolve)
    if note is not None:
        call.progress.notes.append(note)
    _finish(call, envelope, receipt)


def _finish(call: Call, envelope: Envelope, receipt: str) -> None:
    """Commit the call's row (its terminal event included), then announce the end on the
    runtime loop."""
    progress = call.progress
    if progress.finished:
        return
    progress.ended_at = time.time()
    progress.clock.end()
    state = final_state(envelope)
    for spool in progress.streams.values():
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
    progress.events.append(terminal)
    record = record_of(call, envelope, receipt, state)
    history = call.registry.history
    loop = progress.loop

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
    progress = call.progress
    if problem is not None:
        progress.history_problem = problem
        progress.notes.append(problem)
        envelope = envelope.replace(warnings=[*envelope.warnings, problem])
    progress.envelope = envelope
    progress.receipt = receipt
    progress.state = state
    progress.control.phase = "ended"
    if progress.subscribed_on_the_loop() and call_in_loop(
        progress.loop, progress.announce_end, envelope, terminal
    ):
        # Subscribers (a card) hear of the end on the loop, in order after the call's other
        # events, and before any waiter does: a card whose call wait() returned is final.
        return
    progress.announce_end(envelope, terminal)


def record_of(
    call: Call,
    envelope: Envelope | None = None,
    receipt: str | None = None,
    state: CallState | None = None,
) -> CallRecord:
    """The history row of ``call`` (as it ends, or as it is now)."""
    progress = call.progress
    envelope = envelope if envelope is not None else progress.envelope
    receipt = (receipt if receipt is not None else progress.receipt) or ""
    error = None if envelope is None else envelope.error
    result = None if envelope is None else envelope.result
    truncated = bool(MARKER_RE.search(receipt)) or (
        isinstance(result, dict)
        and any(value is True for key, value in result.items() if key.endswith("truncated"))
    )
    replay_of = progress.replay_of
    raw_args, raw_args_note = kept_raw_args(call)
    return CallRecord(
        call_id=call.id,
        model_call_id=call.model_call_id,
        parent_call_id=call.parent_id if replay_of is None else replay_of["replay_of"],
        run_id=call.run_id,
        message_id=call.message_id,
        tool=call.tool_name if isinstance(call.tool_name, str) else repr(call.tool_name),
        family=None if envelope is None else family_of(envelope).name,
        state=state or progress.state,
        status=None if envelope is None else envelope.status,
        kind=None if error is None else error.kind.value,
        retryable=None if error is None else error.retryable,
        summary_text=None if envelope is None else envelope.summary_text,
        elapsed_ms=progress.clock.run * 1000.0,
        queued_ms=progress.clock.queued * 1000.0,
        queued_at=progress.queued_at,
        started_at=progress.started_at,
        ended_at=progress.ended_at,
        receipt_chars=len(receipt),
        truncated=truncated,
        killed_by=None if envelope is None else envelope.killed_by,
        terminated=envelope is not None and envelope.killed_by == "user",
        denied=error is not None and error.kind.value == "user_denied",
        timed_out=error is not None and error.kind.value == "timeout",
        injected=progress.injected,
        dry_run=call.dry_run,
        raw_args=raw_args,
        arguments=progress.arguments,
        coercions=[str(coercion) for coercion in progress.coercions],
        events=[event.to_dict() for event in progress.events]
        + ([] if replay_of is None else [replay_of]),
        canonical=None if envelope is None else envelope.canonical(),
        wire=None,  # derived from "canonical" when the history is read
        receipt=receipt,
        artifacts=[] if envelope is None else [ref.path for ref in envelope.artifacts],
        warnings=([] if envelope is None else list(envelope.warnings))
        + progress.notes
        + ([] if raw_args_note is None else [raw_args_note]),
    )
