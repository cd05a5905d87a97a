"""What every tool family provides, and what a projector is handed.

A family owns the road from a tool's complete output to what a model reads (seed 001):
``project`` turns complete output into a bounded canonical envelope (writing large fields to
artifacts), ``render`` turns a canonical envelope into the receipt string, and ``compact``
shrinks an old envelope one step further when a history must fit a budget. All three are
deterministic: the same input and policy give the same output.

Receipt conventions shared by every family: previews are head and tail with the explicit cut
marker of ``workbench._truncate``; a cut field names its artifact and how to read more
(``artifact_note``); warnings come last, one ``warning: ...`` line each (``finish``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Protocol

from workbench._artifacts import ArtifactSink
from workbench._envelope import Envelope
from workbench._spool import Spool
from workbench._truncate import Preview, cut_marker, preview, truncate_for_model


@dataclass(frozen=True)
class Policy:
    """Budgets, in characters, that bound canonical results and receipts (seed 001 Budget
    Ownership: each family owns the budget of its own fields).

    ``stdout_chars`` / ``stderr_chars`` bound command previews, ``initial_output_chars`` a
    background command's first output, ``log_chars`` a job's log in ``process`` results;
    ``text_chars``, ``json_chars`` and ``file_chars`` their families' fields; ``listing_limit``
    counts entries; ``receipt_chars`` is the last bound of any receipt.
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


DEFAULT_POLICY = Policy()


@dataclass
class Completed:
    """The complete output of one call, as the runtime hands it to a family's projector."""

    tool_name: str
    value: Any
    sink: ArtifactSink
    streams: Mapping[str, Spool] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)


class CompleteOutput:
    """Base of the typed complete outputs a tool body may return (``CommandOutput``,
    ``CompleteListing``, ...): each names the family that projects it, whatever family the tool
    declared, so one tool can produce results of two families (``file_read``)."""

    family: ClassVar[str]


class Family(Protocol):
    """A tool family: projector, renderer and compactor of one kind of result."""

    name: ClassVar[str]

    def project(self, completed: Completed, policy: Policy) -> Envelope:
        """Complete output → bounded canonical envelope (success or error)."""
        ...

    def render(self, envelope: Envelope, policy: Policy) -> str:
        """Canonical envelope → the receipt a model reads."""
        ...

    def compact(self, envelope: Envelope, step: int, policy: Policy) -> Envelope | None:
        """One compaction step (1 to 4, see ``wb.compact``) applied to an old envelope of this
        family, or None when the step does not apply to it."""
        ...


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
    return Envelope(tool_name=completed.tool_name, status="success", result=value)


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


def artifact_note(what: str, path: str | None, size: Any = None, unit: str = "bytes") -> str:
    """The line under a cut preview that names the complete value and how to read it."""
    sized = f" ({size} {unit})" if isinstance(size, int) and not isinstance(size, bool) else ""
    if path is None:
        return f"[{what}{sized} was cut; the complete value was not kept]"
    return f"full {what}{sized}: {path} (read more with artifact_read)"


def finish(lines: Iterable[str], envelope: Envelope, policy: Policy) -> str:
    """Join receipt lines, append the envelope's warnings, and bound the whole receipt."""
    body = [*lines, *(f"warning: {warning}" for warning in envelope.warnings)]
    return truncate_for_model("\n".join(body), policy.receipt_chars)


def count(number: int, noun: str, plural: str | None = None) -> str:
    """``1 entry`` / ``3 entries``."""
    return f"{number} {noun if number == 1 else plural or noun + 's'}"


def as_mapping(value: Any) -> Mapping[str, Any] | None:
    """``value`` when it is a mapping with string keys, else None."""
    return value if isinstance(value, Mapping) else None
