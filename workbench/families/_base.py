"""What every tool family provides, and what a projector is handed.

A family owns the road from a tool's complete output to what a model reads:
``project`` turns complete output into a bounded canonical envelope (writing large fields to
artifacts), ``render`` turns a canonical envelope into the receipt string, and ``compact``
shrinks an old envelope one step further when a history must fit a budget. All three are
deterministic: the same input and budgets give the same output.

Receipt conventions shared by every family: previews are head and tail with the explicit cut
marker of ``workbench.envelope._truncate``; a cut field names its artifact and how to read more
(``artifact_note``); warnings come last, one ``warning: ...`` line each (``finish``).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import IntEnum
from pathlib import Path
from typing import Any, ClassVar, Protocol

from workbench.envelope import Envelope, Preview, cut_marker, preview, truncate_for_model
from workbench.output import ArtifactSink, Spool, strip_ansi


@dataclass(frozen=True)
class Budgets:
    """Budgets, in characters, that bound canonical results and receipts (each family
    owns the budget of its own fields).

    ``stdout_chars`` / ``stderr_chars`` bound command previews, ``initial_output_chars`` a
    background command's first output, ``log_chars`` a job's log in ``process`` results;
    ``text_chars``, ``json_chars`` and ``file_chars`` their families' fields; ``listing_limit``
    counts entries; ``receipt_chars`` is the last bound of any receipt. ``compact_preview_chars``
    is what compaction leaves of an old preview (step 2) and the size past which it drops a
    failure's detail (step 3).
    """

    stdout_chars: int = 8_000
    stderr_chars: int = 4_000
    text_chars: int = 20_000
    json_chars: int = 20_000
    file_chars: int = 20_000
    listing_limit: int = 200
    receipt_chars: int = 50_000
    initial_output_chars: int = 2_000
    log_chars: int = 4_000
    compact_preview_chars: int = 400


DEFAULT_BUDGETS = Budgets()


@dataclass
class Completed:
    """The complete output of one call, as the runtime hands it to a family's projector."""

    tool_name: str
    value: Any
    sink: ArtifactSink
    streams: Mapping[str, Spool] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    call_id: str | None = None


class CompleteOutput:
    """Base of the typed complete outputs a tool body may return (``CommandOutput``,
    ``CompleteListing``, ...): each names the family that projects it, whatever family the tool
    declared, so one tool can produce results of two families (``file_read``)."""

    family: ClassVar[str]


class Family(Protocol):
    """A tool family: projector, renderer and compactor of one kind of result."""

    name: ClassVar[str]

    def project(self, completed: Completed, budgets: Budgets) -> Envelope:
        """Complete output → bounded canonical envelope (success or error)."""
        ...

    def render(self, envelope: Envelope, budgets: Budgets) -> str:
        """Canonical envelope → the receipt a model reads."""
        ...

    def compact(self, envelope: Envelope, step: int, budgets: Budgets) -> Envelope | None:
        """One compaction step (1 to 4, see ``wb.compact``) applied to an old envelope of this
        family, or None when the step does not apply to it."""
        ...


class CompactStep(IntEnum):
    """The compaction steps, in the order ``wb.compact`` tries them across a whole history.

    Each family's ``compact`` decides what a step means for its records; a family to which a
    step does not apply returns None. Every step only shortens or removes fields (it never
    re-expands from an artifact), keeps ``tool_name``, ``status``, ``summary_text``, the error's
    kind, message, hint and retryability, handles and artifact references, and is idempotent:
    applying it to its own output returns None.
    """

    COLLAPSE_LISTINGS = 1
    """A listing becomes the one line ``<N> entries in <path>``."""
    SHRINK_PREVIEWS = 2
    """Command and file previews (and a stopped command's output in ``error.details``) keep a
    short head and tail with the cut marker."""
    DROP_TO_ARTIFACTS = 3
    """A field whose complete value an artifact (or the file itself) holds is dropped in favour
    of that reference; a failure's large details are dropped."""
    COLLAPSE_TO_LINE = 4
    """A success becomes the one line ``tool_name: summary_text`` (with its handles and artifact
    paths)."""

    @property
    def rule(self) -> str:
        """The step's name as the history of a compaction records it: ``shrink_previews``."""
        return self.name.lower()


def stream_preview(spool: Spool, max_chars: int) -> Preview:
    """A head-and-tail preview of a stream, reading only its ends when it is large."""
    return ends_preview(spool.size, spool.head, spool.tail, max_chars)


def file_preview(path: Path, size: int, max_chars: int) -> Preview:
    """A head-and-tail preview of the first ``size`` bytes of a file (an append-only log read
    as it was at a moment), reading only its ends when it is large."""

    def head(limit: int) -> bytes:
        with path.open("rb") as handle:
            return handle.read(min(limit, size))

    def tail(limit: int) -> bytes:
        with path.open("rb") as handle:
            handle.seek(max(0, size - limit))
            return handle.read(min(limit, size))

    return ends_preview(size, head, tail, max_chars)


def ends_preview(
    size: int, head: Callable[[int], bytes], tail: Callable[[int], bytes], max_chars: int
) -> Preview:
    """A head-and-tail preview of ``size`` bytes of UTF-8 text given readers of its ends."""
    window = 2 * max_chars + 1024
    if size <= 2 * window:
        return preview(head(size).decode("utf-8", "replace"), max_chars)
    first = head(window).decode("utf-8", "replace")
    last = tail(window).decode("utf-8", "replace")
    # Keep whole lines only: the window edges may fall mid-line.
    first = first[: first.rfind("\n") + 1] if "\n" in first else first
    last = last[last.find("\n") + 1 :] if "\n" in last else last
    return preview(f"{first}{cut_marker(0, 0)}\n{last}", max_chars)


def base_envelope(completed: Completed) -> Envelope:
    """The tool's value as a success envelope (an envelope it returned is kept as it is)."""
    value = completed.value
    if isinstance(value, Envelope):
        return value
    return Envelope(
        tool_name=completed.tool_name, status="success", result=value, call_id=completed.call_id
    )


def merged_warnings(*groups: Iterable[str]) -> tuple[str, ...]:
    """Warnings from several sources, in order, each once."""
    seen: dict[str, None] = {}
    for group in groups:
        for warning in group:
            seen.setdefault(warning, None)
    return tuple(seen)


def artifact_path(envelope: Envelope, index: Any) -> str | None:
    """The path of the artifact a result field refers to by index, if it exists."""
    if (
        isinstance(index, int)
        and not isinstance(index, bool)
        and 0 <= index < len(envelope.artifacts)
    ):
        return envelope.artifacts[index].path
    return None


def artifact_note(
    what: str, path: str | None, size: Any = None, unit: str = "bytes", kept: Any = None
) -> str:
    """The line under a cut preview that names the complete value and how to read it; when
    the artifact holds less than was produced (``kept`` bytes), it says so instead of "full"."""
    counted = isinstance(size, int) and not isinstance(size, bool)
    sized = f" ({size} {unit})" if counted else ""
    if path is None:
        return f"[{what}{sized} was cut; the complete value was not kept]"
    if isinstance(kept, int) and not isinstance(kept, bool):
        # ``kept`` is in bytes, whatever unit ``size`` counts.
        of = f" of {size} bytes" if counted and unit == "bytes" else " bytes of it"
        return f"partial {what} (only {kept}{of} kept): {path} (read more with artifact_read)"
    return f"full {what}{sized}: {path} (read more with artifact_read)"


def stream_artifact_note(envelope: Envelope, fields: Mapping[str, Any], stream: str) -> str:
    """``artifact_note`` for one stream of a command whose ``fields`` name its artifact, size
    and what was kept (``stdout_artifact``, ``stdout_bytes``, ``stdout_kept_bytes``)."""
    return artifact_note(
        stream,
        artifact_path(envelope, fields.get(f"{stream}_artifact")),
        fields.get(f"{stream}_bytes"),
        kept=fields.get(f"{stream}_kept_bytes"),
    )


def with_kept(
    envelope: Envelope,
    completed: Completed,
    result: dict[str, Any],
    field: str,
    warnings: Sequence[str],
) -> Envelope:
    """``envelope`` with its cut ``result``, whose ``field`` (``text_artifact``) names the
    artifact holding the whole value; every artifact of the call is listed, and when the disk
    kept less of that one than was produced, ``text_kept_bytes`` says how much."""
    short = completed.sink.shortfall(result[field])
    if short is not None:
        result[field.removesuffix("_artifact") + "_kept_bytes"] = short.kept
    return envelope.replace(result=result, artifacts=completed.sink.refs, warnings=warnings)


def finish(lines: Iterable[str], envelope: Envelope, budgets: Budgets) -> str:
    """Join receipt lines, append the envelope's warnings, strip terminal escape sequences (a
    model reads text, not colours; the artifacts keep them) and bound the whole receipt."""
    body = [*lines, *(f"warning: {warning}" for warning in envelope.warnings)]
    return truncate_for_model(strip_ansi("\n".join(body)), budgets.receipt_chars)


def count(number: int, noun: str, plural: str | None = None) -> str:
    """``1 entry`` / ``3 entries``."""
    return f"{number} {noun if number == 1 else plural or noun + 's'}"


def has_kind(result: Any, kind: str) -> bool:
    """True for a result whose ``kind`` is ``kind``. Canonical results are plain JSON, so the
    cheap exact ``dict`` check is enough."""
    return isinstance(result, dict) and result.get("kind") == kind


def as_mapping(value: Any) -> Mapping[str, Any] | None:
    """``value`` when it is a mapping with string keys, else None."""
    return value if isinstance(value, Mapping) else None


# ── compaction helpers shared by the families' compactors ─────────────────────────────────
ARTIFACT_ONLY = cut_marker(0, 0) + "\n"
"""What a preview becomes when it is dropped in favour of its artifact: the cut marker alone,
so receipts still say the output was cut and name where the complete value is."""

_HANDLE_KEYS = frozenset({"id", "pid", "handle", "log_file"})


def is_artifact_index(key: str, value: Any) -> bool:
    """True for an artifact reference field: ``stdout_artifact: 0`` (an index into the
    envelope's artifacts)."""
    return key.endswith("_artifact") and isinstance(value, int) and not isinstance(value, bool)


def is_handle(key: str) -> bool:
    """True for a field naming something a later call can address: a task, process or log."""
    return key in _HANDLE_KEYS or key.endswith(("_id", "_handle"))


def references(result: Any) -> dict[str, Any]:
    """A result's top-level handles and artifact references, in their order: what compaction
    keeps of it whatever the budget."""
    if not isinstance(result, Mapping):
        return {}
    return {
        key: value
        for key, value in result.items()
        if isinstance(key, str) and (is_handle(key) or is_artifact_index(key, value))
    }


def shrink(text: Any, max_chars: int) -> str | None:
    """A short head-and-tail of ``text``, or None when that would not make it shorter."""
    if not isinstance(text, str):
        return None
    cut = preview(text, max_chars).text
    return cut if len(cut) < len(text) else None


def drop(text: Any) -> str | None:
    """``ARTIFACT_ONLY`` in place of ``text``, or None when that would not make it shorter."""
    if not isinstance(text, str) or len(text) <= len(ARTIFACT_ONLY):
        return None
    return ARTIFACT_ONLY


def with_result(envelope: Envelope, result: Any, *, keep_warnings: bool = True) -> Envelope:
    """A copy of a success with a new result (and optionally no warnings).

    Compactors only shorten data that was validated once already, so the copy skips validation:
    compacting a long history stays cheap.
    """
    update: dict[str, Any] = {"result": result}
    if not keep_warnings:
        update["warnings"] = ()
    return envelope.model_copy(update=update)


def _shown(value: Any) -> str:
    if isinstance(value, str) and "\n" not in value:
        return value
    return json.dumps(value, ensure_ascii=False)


def _mentions(text: str, shown: str) -> bool:
    """True when ``shown`` occurs in ``text`` as a whole word or path (``42`` is not in ``4242``).

    A scan rather than a regex: each handle is a new pattern, and compiling one per collapsed
    record dominated the cost of compacting a long history."""
    if not shown:
        return False
    start = text.find(shown)
    while start != -1:
        end = start + len(shown)
        if not (start and _joins(text[start - 1])) and not (end < len(text) and _joins(text[end])):
            return True
        start = text.find(shown, start + 1)
    return False


def _joins(char: str) -> bool:
    return char.isalnum() or char in "_/.-"


def summary_line(envelope: Envelope, kept: Mapping[str, Any]) -> str:
    """``tool_name: summary_text``, then the kept handles and artifact paths the line does not
    already mention: ``shell_exec: command promoted to background task 42 (log_file: /x.log)``.
    """
    line = f"{envelope.tool_name or 'tool'}: {envelope.summary_text}"
    extras: list[str] = []
    for key, value in kept.items():
        if is_artifact_index(key, value):
            path = artifact_path(envelope, value)
            if path is None:
                continue
            label, shown = key.removesuffix("_artifact"), path
        else:
            label, shown = key, _shown(value)
        if not _mentions(" ".join([line, *extras]), shown):
            extras.append(f"{label}: {shown}")
    return f"{line} ({'; '.join(extras)})" if extras else line


PreviewField = tuple[str, str, bool]
"""A preview's key, its truncation flag's key, and whether an artifact holds its complete value."""


def reduce_previews(
    data: Mapping[str, Any],
    fields: Iterable[PreviewField],
    *,
    max_chars: int | None = None,
    drop_backed: bool = False,
) -> dict[str, Any] | None:
    """``data`` with its previews reduced, or None when none changed: with ``drop_backed`` a
    preview an artifact backs becomes ``ARTIFACT_ONLY``; with ``max_chars`` any other is cut to
    a head and tail. A reduced preview's flag is set, since it no longer holds the value whole.
    """
    changed: dict[str, Any] | None = None
    for key, flag, backed in fields:
        text = data.get(key)
        if drop_backed and backed:
            reduced = drop(text)
        elif max_chars is not None:
            reduced = shrink(text, max_chars)
        else:
            reduced = None
        if reduced is None:
            continue
        changed = dict(data) if changed is None else changed
        changed[key] = reduced
        changed[flag] = True
    return changed


KIND = "compacted"


def collapse(envelope: Envelope, family: str, line: str, kept: Mapping[str, Any]) -> Envelope:
    """``envelope`` as a collapsed record of ``family`` reading ``line``, keeping ``kept``."""
    result = {"kind": KIND, "family": family, "line": line}
    result.update((key, value) for key, value in kept.items() if key not in result)
    return with_result(envelope, result, keep_warnings=False)
