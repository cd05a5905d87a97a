"""Failures of any tool: the receipt a model reads when a call did not succeed.

The receipt gives the kind, the message, the offending field and what was expected, a recovery
hint, who stopped the call, and whether a retry may help. A call that was stopped (``killed_by``
set: Terminate, a time budget, an idle timeout) keeps the output it produced: a bounded preview
in ``error.details`` (``stdout_preview``, ``stdout_bytes``) and, when the preview was cut, the
complete stream as an artifact (``stdout_truncated: true``, ``stdout_artifact: 0``).

Receipt::

    Error (timeout): `shell_exec` printed nothing for 2 s (idle timeout) and was stopped
    hint: ...
    killed_by: idle_timeout
    retry may help
    stdout before it stopped:
    <preview>
    full stdout (123456 bytes): <path> (read more with artifact_read)

Compaction touches ``error.details`` only: step 2 cuts the output previews to a short head and
tail, step 3 drops a preview its artifact backs (the cut marker and the artifact line remain) and
any other large detail, keeping handles and artifact references.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, ClassVar

from workbench.envelope import Envelope, escape_surrogates
from workbench.families import _base
from workbench.output import ArtifactSink, Spool

KEPT_STREAMS = ("stdout", "stderr", "log")


class FailureFamily:
    """Error envelopes; rendered as kind, message, field, expected, hint and retryability."""

    name: ClassVar[str] = "failure"

    def project(self, completed: _base.Completed, budgets: _base.Budgets) -> Envelope:
        value = completed.value
        if not isinstance(value, Envelope) or value.error is None:
            raise TypeError("the failure family projects failure envelopes only")
        envelope = value
        if envelope.killed_by is not None:
            envelope = attach_output(envelope, completed.streams, completed.sink, budgets)
        warnings = _base.merged_warnings(envelope.warnings, completed.warnings)
        return envelope if warnings == envelope.warnings else envelope.replace(warnings=warnings)

    def render(self, envelope: Envelope, budgets: _base.Budgets) -> str:
        error = envelope.error
        if error is None:
            raise TypeError("the failure family renders failure envelopes only")
        lines = [f"Error ({error.kind.value}): {error.message}"]
        if error.field is not None:
            lines.append(f"field: {error.field}")
        if error.expected is not None:
            lines.append(f"expected: {error.expected}")
        if error.recovery_hint is not None:
            lines.append(f"hint: {error.recovery_hint}")
        if envelope.killed_by is not None:
            lines.append(f"killed_by: {envelope.killed_by}")
        lines.append("retry may help" if error.retryable else "do not retry unchanged")
        details = error.details or {}
        for stream in KEPT_STREAMS:
            preview = details.get(f"{stream}_preview")
            if isinstance(preview, str) and preview:
                lines.append(f"{stream} before it stopped:\n{preview.rstrip()}")
                if details.get(f"{stream}_truncated"):
                    lines.append(_base.stream_artifact_note(envelope, details, stream))
        return _base.finish(lines, envelope, budgets)

    def compact(self, envelope: Envelope, step: int, budgets: _base.Budgets) -> Envelope | None:
        """Only ``error.details`` is ever compacted (kind, message, hint and
        retryability are kept whatever the budget). Step 2 cuts the kept output previews to a
        short head and tail; step 3 replaces a preview an artifact backs by the cut marker and
        drops any other detail whose JSON is longer than ``compact_preview_chars``, naming it in
        ``details["dropped_details"]``; handles and ``*_artifact`` references always stay. A
        failure is never collapsed to one line."""
        error = envelope.error
        if error is None or not error.details:
            return None
        details = error.details
        fields = [
            (
                f"{stream}_preview",
                f"{stream}_truncated",
                _base.artifact_path(envelope, details.get(f"{stream}_artifact")) is not None,
            )
            for stream in KEPT_STREAMS
        ]
        if step == _base.CompactStep.SHRINK_PREVIEWS:
            changed = _base.reduce_previews(
                details, fields, max_chars=budgets.compact_preview_chars
            )
        elif step == _base.CompactStep.DROP_TO_ARTIFACTS:
            changed = _base.reduce_previews(
                details, fields, max_chars=budgets.compact_preview_chars, drop_backed=True
            )
            changed = _drop_large(changed or details, budgets.compact_preview_chars) or changed
        else:
            return None
        if changed is None:
            return None
        return envelope.model_copy(update={"error": error.model_copy(update={"details": changed})})


_PREVIEW_KEYS = frozenset(f"{stream}_preview" for stream in KEPT_STREAMS)
DROPPED_DETAILS = "dropped_details"


def _drop_large(details: Mapping[str, Any], max_chars: int) -> dict[str, Any] | None:
    """``details`` without the values whose JSON exceeds ``max_chars`` (previews, handles and
    artifact references excepted), their keys listed under ``dropped_details``; None when none
    is that large."""
    large = [
        key
        for key, value in details.items()
        if not (key in _PREVIEW_KEYS and isinstance(value, str))
        and key != DROPPED_DETAILS
        and not _base.is_handle(key)
        and not _base.is_artifact_index(key, value)
        and len(json.dumps(value, ensure_ascii=False, default=repr)) > max_chars
    ]
    if not large:
        return None
    kept = {key: value for key, value in details.items() if key not in large}
    already = kept.get(DROPPED_DETAILS)
    kept[DROPPED_DETAILS] = [*(already if isinstance(already, list) else []), *large]
    return kept


def attach_output(
    envelope: Envelope, streams: Mapping[str, Spool], sink: ArtifactSink, budgets: _base.Budgets
) -> Envelope:
    """Keep what a stopped call printed: previews and sizes in ``error.details``, complete
    streams as artifacts referenced by index (``stdout_artifact: 0``) when a preview was cut.
    Attaching twice changes nothing."""
    error = envelope.error
    if error is None or not any(spool.size for spool in streams.values()):
        return envelope
    details = dict(error.details or {})
    for stream in sorted(streams, key=_stream_order):
        spool = streams[stream]
        if not spool.size or f"{stream}_preview" in details:
            continue
        budget = budgets.stderr_chars if stream == "stderr" else budgets.stdout_chars
        cut = _base.stream_preview(spool, budget)
        details[f"{stream}_preview"] = cut.text
        details[f"{stream}_bytes"] = spool.size
        if cut.truncated:
            details[f"{stream}_truncated"] = True
            index = details[f"{stream}_artifact"] = spool.artifact()
            short = sink.shortfall(index)
            if short is not None:
                details[f"{stream}_kept_bytes"] = short.kept
    return envelope.replace(
        error=error.model_copy(update={"details": details}),
        artifacts=sink.refs,
        warnings=_base.merged_warnings(envelope.warnings, short_artifacts(sink)),
    )


def short_artifacts(sink: ArtifactSink) -> list[str]:
    """A warning for each artifact of a call that holds less than was produced."""
    return [shortfall.sentence() for shortfall in sink.shortfalls()]


def _stream_order(stream: str) -> tuple[int, str]:
    return (KEPT_STREAMS.index(stream) if stream in KEPT_STREAMS else len(KEPT_STREAMS), stream)


def fallback_receipt(envelope: Envelope) -> str:
    """A receipt that cannot fail, for when a family's renderer did."""
    if envelope.error is not None:
        return escape_surrogates(f"Error ({envelope.error.kind.value}): {envelope.error.message}")
    return escape_surrogates(envelope.summary_text)
