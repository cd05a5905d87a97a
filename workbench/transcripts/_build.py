"""Imported calls into history rows, and the history that holds them.

Each ``ImportedCall`` becomes one ``CallRecord``: the arguments as sent (``raw_args``) and as
parsed, the receipt exactly as the model received it, the envelope the rules recognised (its
canonical record), timing when the transcript has it, and the run's own ids. What the import
itself learned (the format, the rule, where in the file, the preflight verdict on the
arguments) is the row's ``transcript.imported`` event.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from workbench.envelope import MARKER_RE
from workbench.families import ReceiptDiff, compare_receipts, family_name_of_record
from workbench.history import CallRecord, History
from workbench.preflight import Preflight, PreflightResult
from workbench.transcripts._huge import HUGE_CHARS, HugeResults
from workbench.transcripts._parsed import ImportedCall, Parsed, Unreadable, list_or_empty
from workbench.transcripts._rules import CustomRule, Rule, recognise_record
from workbench.transcripts._verdicts import Preflights

if TYPE_CHECKING:
    import pandas as pd

IMPORTED = "transcript.imported"
"""The type of the event that says how a row was imported."""

STATE = "imported"
"""The ``state`` of an imported row (it ran elsewhere, not in this process)."""

WRITE_AHEAD = 64
"""Rows an import holds before it encodes and commits them together (one transaction, one
``executemany``, on the importing thread), so that memory stays bounded however large the
transcript."""

# Markers other harnesses put where they cut a tool's output, besides workbench's own.
_CUT = re.compile(
    r"[\[(<][^\]\)>\n]{0,60}\btruncat|\btruncated\b[^\n]{0,20}[\])>]"
    r"|\btruncated (?:version|output)\b|\btoo long to be displayed\b",
    re.I,
)


def _cut(receipt: str) -> bool:
    """True when the receipt carries a mark of having been cut (workbench's or another's)."""
    # Every mark holds one of these words: most receipts are ruled out without a regex.
    folded = receipt.casefold()
    if "truncat" not in folded and "too long to be displayed" not in folded:
        return False
    return bool(MARKER_RE.search(receipt) or _CUT.search(receipt))


class TranscriptHistory(History):
    """A history whose rows are a real run's tool calls (``wb.transcripts.load``).

    It is a ``History`` (the history view, inspector and ``wb.compact`` read it unchanged)
    with what the transcript adds: ``format``, ``source`` (the file or ``<object>``),
    ``tools`` (name → the input schema the model was given), and ``unreadable``, the parts
    that could not be imported, each with its line or message index and why.
    """

    def __init__(
        self,
        path: str | Path | None,
        *,
        format: str,
        source: str,
        tools: Mapping[str, dict[str, Any]],
        unreadable: list[Unreadable],
    ) -> None:
        super().__init__(path)
        self.format = format
        self.source = source
        self.tools: dict[str, dict[str, Any]] = dict(tools)
        self.unreadable: list[Unreadable] = list(unreadable)

    def compare(self, call_id: str) -> ReceiptDiff:
        """The receipt the model saw for a call beside workbench's rendering of its envelope."""
        return compare_receipts(self._row(call_id))

    def schema(self, call_id: str) -> dict[str, Any] | None:
        """The input schema the model was given for a call's tool (None when the transcript
        has no definition for it)."""
        row = self._row(call_id)
        return self.tools.get(str(row.get("tool")))

    def preflight(self, call_id: str) -> PreflightResult | None:
        """Workbench's preflight of a call's arguments, as the model sent them, against the
        schema in the transcript (None when it has none)."""
        row = self._row(call_id)
        checker = Preflights(self.tools).checker(str(row.get("tool")))
        if not isinstance(checker, Preflight):
            return None
        arguments = row.get("arguments")
        return checker(arguments if arguments is not None else row.get("raw_args"))

    def _row(self, call_id: str) -> dict[str, Any]:
        row = self.get(call_id)
        if row is None:
            raise KeyError(f"no imported call {call_id!r} in {self.source}")
        return row

    def failures(self) -> pd.DataFrame:
        """The rows whose result was a failure, by any rule."""
        frame = self.to_dataframe()
        return frame[frame["status"] == "error"]

    def to_dataframe(self, *, tokens: str | None = "openai") -> pd.DataFrame:
        """The history's DataFrame (``tokens`` as there) plus ``rule`` (which rule recognised
        the result) and ``preflight`` (the verdict on the model's arguments), read from each
        row's import event."""
        frame = super().to_dataframe(tokens=tokens)
        imported = [_imported_event(events) for events in frame["events"]]
        position = list(frame.columns).index("message_id") + 1
        frame.insert(position, "rule", [event.get("rule") for event in imported])
        frame.insert(position + 1, "preflight", [event.get("preflight") for event in imported])
        return frame

    def __repr__(self) -> str:
        unreadable = f", {len(self.unreadable)} unreadable" if self.unreadable else ""
        return f"TranscriptHistory({self.source!r}, format={self.format!r}{unreadable})"


def _imported_event(events: Any) -> dict[str, Any]:
    for event in list_or_empty(events):
        if isinstance(event, dict) and event.get("type") == IMPORTED:
            return event
    return {}


def rule_of(row: Mapping[str, Any]) -> str | None:
    """Which rule recognised an imported row's result (None for a row not imported)."""
    rule = _imported_event(row.get("events")).get("rule")
    return rule if isinstance(rule, str) else None


def record_of(
    call: ImportedCall,
    *,
    index: int,
    run_id: str,
    format: str,
    preflights: Preflights,
    rules: tuple[CustomRule, ...] = (),
    huge: HugeResults | None = None,
) -> CallRecord:
    """The history row of one imported call; a result longer than ``HUGE_CHARS`` is kept
    in ``huge`` (an artifact file), and its row holds a preview of it."""
    run = call.run_id or run_id
    warnings = list(call.notes)
    if call.args_problem is not None:
        warnings.append(f"arguments: {call.args_problem}")
    verdict, coercions, problem = preflights.verdict(call)
    event: dict[str, Any] = {
        "type": IMPORTED,
        "at": call.ended_at or call.started_at,
        "format": format,
        "where": call.where,
        "result_where": call.result_where,
        "result_message_id": call.result_message_id,
        "preflight": verdict,
    }
    if problem is not None:
        event["preflight_problem"] = problem
    elapsed = (
        round((call.ended_at - call.started_at) * 1000.0, 3)
        if call.ended_at is not None and call.started_at is not None
        else None
    )
    common: dict[str, Any] = {
        "call_id": f"{run}:{index}",
        "tool": call.tool,
        "state": STATE,
        "model_call_id": call.model_call_id,
        "run_id": run,
        "message_id": call.message_id,
        "raw_args": call.raw_args,
        "arguments": call.arguments,
        "coercions": coercions,
        "started_at": call.started_at,
        "ended_at": call.ended_at,
        "elapsed_ms": elapsed,
        "executed_by": call.executed_by,
        "events": [event],
    }
    if call.receipt is None:
        event["rule"] = Rule.NO_RESULT.value
        warnings.append("the transcript holds no result for this call")
        return CallRecord(**common, receipt="", receipt_chars=0, warnings=warnings)
    receipt, receipt_chars = call.receipt, len(call.receipt)
    if huge is not None and receipt_chars > HUGE_CHARS:
        receipt, common["artifacts"], note = huge.keep(receipt, common["call_id"])
        warnings.append(note)
    canonical, rule, problems = recognise_record(
        receipt,
        tool=call.tool,
        flagged_error=call.flagged_error,
        call_id=call.model_call_id,
        rules=rules,
    )
    event["rule"] = str(rule)
    warnings.extend(problems)
    error = canonical["error"]
    kind = None if error is None else error["kind"]
    return CallRecord(
        **common,
        family=family_name_of_record(canonical),
        status=canonical["status"],
        kind=kind,
        retryable=None if error is None else error["retryable"],
        summary_text=canonical["summary_text"],
        receipt_chars=receipt_chars,
        truncated=_cut(receipt),
        killed_by=canonical.get("killed_by"),
        timed_out=kind == "timeout",
        denied=kind == "user_denied",
        canonical=canonical,
        receipt=receipt,
        warnings=[*canonical["warnings"], *warnings],
    )


def records(
    parsed: Parsed,
    *,
    format: str,
    fingerprint: str,
    huge: HugeResults,
    rules: tuple[CustomRule, ...] = (),
) -> Iterator[CallRecord]:
    """The history row of every parsed call, in order, one at a time (a streamed reader's
    calls are read as they are asked for); ``rules`` are tried before the built-in ones."""
    run_id = parsed.run_id or f"{format}-{fingerprint}"
    row = functools.partial(
        record_of,
        run_id=run_id,
        format=format,
        preflights=Preflights(parsed.tools),
        rules=rules,
        huge=huge,
    )
    counters: dict[str, int] = {}
    for call in parsed.calls:
        run = call.run_id or run_id
        index = counters.get(run, 0)
        counters[run] = index + 1
        yield row(call, index=index)


def build(
    parsed: Parsed,
    *,
    format: str,
    source: str,
    fingerprint: str,
    history: str | Path | None,
    rules: tuple[CustomRule, ...] = (),
) -> TranscriptHistory:
    """A ``TranscriptHistory`` (in memory, or at ``history``) holding every parsed call;
    ``rules`` are tried before the built-in ones."""
    target = TranscriptHistory(
        history,
        format=format,
        source=source,
        tools=parsed.tools,
        unreadable=parsed.unreadable,
    )
    huge = HugeResults(target.directory)
    batch: list[CallRecord] = []
    for record in records(parsed, format=format, fingerprint=fingerprint, huge=huge, rules=rules):
        batch.append(record)
        if len(batch) >= WRITE_AHEAD:
            target.write(batch)  # a row SQLite will not take is held, and named in target.problems
            batch = []
    target.write(batch)
    # a streamed reader finds tools and unreadable parts as it goes
    target.tools = dict(parsed.tools)
    target.unreadable = list(parsed.unreadable)
    target.flush()
    return target
