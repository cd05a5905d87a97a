"""Loading transcripts: one file (``load``), its parse alone (``parse``), or many files into a
Parquet dataset (``load_many``)."""

from __future__ import annotations

import warnings
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from workbench.history import CallRecord
from workbench.study import Dataset
from workbench.study import load_many as _load_many
from workbench.transcripts._build import TranscriptHistory, build, records
from workbench.transcripts._formats import FORMATS, Format, detect, format_named, read
from workbench.transcripts._huge import HugeResults
from workbench.transcripts._parsed import Parsed, TranscriptError, Unreadable
from workbench.transcripts._rules import (
    CustomRule,
    RuleCheck,
    as_rules,
)
from workbench.transcripts._source import Opened, Source, open_source


class TranscriptWarning(UserWarning):
    """Part of a transcript could not be imported; ``history.unreadable`` lists it."""


def detect_format(path_or_object: Any) -> str:
    """The format ``load`` would read ``path_or_object`` as."""
    return detect(Opened(open_source(path_or_object)))


def parse(path_or_object: Any, format: Format | str | None = None) -> tuple[str, Parsed, Source]:
    """The normalised calls of a transcript, before they become history rows."""
    name, parsed, source = _parse(path_or_object, format)
    parsed.calls = list(parsed.calls)
    return name, parsed, source


def _parse(path_or_object: Any, format: Format | str | None) -> tuple[str, Parsed, Source]:
    """``parse``, where the calls of a streamed file come one by one as it is read (a
    generator that ``build`` consumes). The source's request and response objects are found
    once (``Opened``), for detection and the reader alike."""
    source = open_source(path_or_object)
    opened = Opened(source)
    named = format_named(format) if isinstance(format, str) else None
    if format is None:
        try:
            name = detect(opened)
        except TranscriptError:
            if not source.read_by_parts:
                raise
            # Detection saw the first messages only: it looks at all of them before it says no.
            opened = opened.whole()
            name = detect(opened)
    elif named is not None:
        name = named
    else:
        raise TranscriptError(
            source.name, "format=", f"unknown format {format!r}", f"one of {', '.join(FORMATS)}"
        )
    parsed = read(name, opened)
    parsed.unreadable[:0] = source.bad_lines
    return name, parsed, source


def load(
    path_or_object: Any,
    format: Format | str | None = None,
    *,
    history: str | Path | None = None,
    rules: Iterable[CustomRule | tuple[str, RuleCheck]] | None = None,
) -> TranscriptHistory:
    """A history of the tool calls in a transcript (a path, or the list or dict of a run).

    ``format`` is one of ``FORMATS``, or None to detect it. ``history`` is None or
    ``":memory:"`` to keep the rows in this process, or a path to write them to a SQLite file
    (rows already there are kept). ``rules`` are ``(name, check)`` pairs tried, in order,
    before the rules ``add_rule`` added and the built-in ones: ``check(receipt, tool)`` returns
    the envelope the receipt stands for, or None. Raises ``TranscriptError`` when nothing can
    be read.

    Examples:
        >>> messages = [
        ...     {"role": "user", "content": "What is 2 + 3?"},
        ...     {"role": "assistant", "content": None, "tool_calls": [{"id": "call_1",
        ...         "type": "function",
        ...         "function": {"name": "add", "arguments": '{"a": 2, "b": 3}'}}]},
        ...     {"role": "tool", "tool_call_id": "call_1", "content": "5"},
        ... ]
        >>> history = load(messages)
        >>> history.format, len(history)
        ('openai_chat', 1)
        >>> row = history.records()[0]
        >>> row.tool, row.arguments, row.receipt, row.model_call_id
        ('add', {'a': 2, 'b': 3}, '5', 'call_1')
    """
    checks = as_rules(rules)
    name, parsed, source = _parse(path_or_object, format)
    result = build(
        parsed,
        format=name,
        source=source.name,
        fingerprint=source.fingerprint,
        history=history,
        rules=checks,
    )
    _warn_unreadable(source.name, len(result), result.unreadable, stacklevel=3)
    return result


def _warn_unreadable(
    source: str, calls: int, unreadable: list[Unreadable], stacklevel: int
) -> None:
    """The ``TranscriptWarning`` that names the parts of a file that could not be imported."""
    if unreadable:
        listed = "; ".join(str(item) for item in unreadable[:3])
        more = f" and {len(unreadable) - 3} more" if len(unreadable) > 3 else ""
        warnings.warn(
            f"{source}: {calls} call(s) imported, {len(unreadable)} "
            f"part(s) could not be read (listed in .unreadable): {listed}{more}",
            TranscriptWarning,
            stacklevel=stacklevel,
        )


def load_many(
    paths_or_glob: str | Path | Iterable[str | Path],
    *,
    out: str | Path,
    client: Any = None,
    format: Format | str | None = None,
) -> Dataset:
    """Import many runs into one Parquet dataset at ``out``, one partition ``run=<key>/`` per
    file, each file read by ``load`` (``format`` as there).

    ``paths_or_glob``: a glob (``"runs/**/*.eval"``), a directory, a file or a list of them.
    ``client``: a ``dask.distributed.Client`` spreads the files over its cluster's workers
    (``out`` must be a directory they can all write); None imports them here, one by one.
    Returns ``wb.open_dataset(out)``; its ``runs`` lists each file, with the ``error`` of one
    that could not be read at all. Needs the ``study`` extra.
    """
    return _load_many(paths_or_glob, out=out, client=client, format=format, loader=_load_one)


class _RunRecords:
    """One file for ``load_many``: its rows as records, built as they are asked for (never
    a history), and the warning ``load`` would give once they are written."""

    def __init__(self, path: Path, format: str | None) -> None:
        self._checks = as_rules(None)
        self.format, self._parsed, self._source = _parse(path, format)

    @property
    def unreadable(self) -> list[Unreadable]:
        """The parts that could not be imported (complete once ``records`` is consumed)."""
        return self._parsed.unreadable

    def records(self) -> Iterator[CallRecord]:
        """Every call's row, in order, as ``load`` would store it in a history in memory."""
        return records(
            self._parsed,
            format=self.format,
            fingerprint=self._source.fingerprint,
            huge=HugeResults(None),
            rules=self._checks,
        )

    def finish(self, calls: int) -> None:
        """Warn, as ``load`` does, when part of the file could not be imported."""
        _warn_unreadable(self._source.name, calls, self._parsed.unreadable, stacklevel=3)


def _load_one(path: Path, format: str | None) -> _RunRecords:
    return _RunRecords(path, format)
