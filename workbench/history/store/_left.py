"""What others left behind, written into SQLite by a history's first connection: the spills of
processes that ended before SQLite took their rows (``kill -9`` included), and the files the
previous version kept beside the history. Each file is written in one transaction, read a
chunk of entries at a time; one SQLite will not take yet stays for the next open.
"""

from __future__ import annotations

import itertools
import sqlite3
from collections.abc import Collection, Iterable, Iterator
from pathlib import Path
from typing import Any

from workbench.history.row import STORED, reason
from workbench.history.spill import Source, legacy, orphans
from workbench.history.store._insert import ROW, WARN, write_entries
from workbench.history.store._problems import Problems

BATCH = 500
"""Entries written a statement group at a time."""


def write_left(
    conn: sqlite3.Connection, path: Path, own: Collection[Path], problems: Problems
) -> int:
    """Write every spill other processes left for the history at ``path`` (``own``: this
    process's spill files, never taken) and what the previous version left, each file in one
    transaction, then retire it; everything found wrong is named in ``problems``. Returns the
    entries written."""
    found, refused = orphans(path, own)
    old, refused_too = legacy(path)
    for sentence in refused + refused_too:
        problems.add("replay", f"history: {sentence}")
    written = 0
    sources: list[Source] = [*found, *old]
    for source in sources:
        count = 0
        try:
            with conn:
                for chunk in chunks(_well_formed(source.entries(), source.problems), BATCH):
                    for index, sentence in write_entries(conn, chunk).items():
                        problems.add("replay", f"history: {sentence}", (str(chunk[index][1]),))
                    count += len(chunk)
        except sqlite3.Error as exc:
            source.release()
            problems.add(
                "replay",
                f"history: {source.name} (left by a process that ended) could not be written "
                f"yet ({reason(exc)}); it stays for the next open",
            )
            continue
        written += count
        source.retire()
        for sentence in source.problems:
            problems.add("replay", f"history: {sentence}")
    return written


def _well_formed(entries: Iterable[list[Any]], problems: list[str]) -> Iterator[list[Any]]:
    """The entries that are a whole row or update; each other one is named damaged."""
    for entry in entries:
        if (entry[0] == ROW and len(entry) == len(STORED) + 1 and isinstance(entry[1], str)) or (
            entry[0] == WARN and len(entry) == 3
        ):
            yield entry
        else:
            problems.append(
                f"an entry is damaged (not a whole row or update: {str(entry)[:80]}); it was "
                "not written"
            )


def chunks(entries: Iterable[list[Any]], size: int) -> Iterator[list[list[Any]]]:
    """``entries`` in lists of ``size`` (the last shorter)."""
    iterator = iter(entries)
    while chunk := list(itertools.islice(iterator, size)):
        yield chunk
