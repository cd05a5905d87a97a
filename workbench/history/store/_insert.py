"""Writing rows and updates so that no row ever replaces another, and none is stored twice.

A call's id is the history's key, and two writers (two processes, a forked worker, a spill
written next to rows committed since) may hand over rows under one id. A row already there as
given, or since updated with more warnings, is the same row written again: nothing happens. A
different row under a taken id is another call's: it is stored under a fresh id of its own,
with a warning saying which id it was given and why, and the caller is told.
"""

from __future__ import annotations

import functools
import json
import secrets
import sqlite3
from collections.abc import Sequence
from typing import Any

from workbench.history.row import KIND_LIST, STORED, seal, unsealed, with_warnings
from workbench.history.store._schema import INSERT

KEY = 0
"""Where the call id sits among a row's stored values (the first scalar column)."""

ROWS_PER_STATEMENT = 64
"""Rows one ``INSERT`` adds at most. ``sqlite3`` gives up the interpreter lock around each step
of a statement, and the writer's thread then waits to take it back from the calls running
Python meanwhile: ``executemany`` steps once a row, one ``INSERT`` of many rows once."""

ROW, WARN = "row", "warn"
"""What an entry is: ``[ROW, *stored values]`` adds a row, ``[WARN, call id, text]`` adds a
warning to a stored row (a late result discarded, a receipt edited, a problem with its row)."""

_SELECT_ONE = f"SELECT {', '.join(STORED)} FROM calls WHERE call_id = ?"


def _rows_per_statement(conn: sqlite3.Connection) -> int:
    """``ROWS_PER_STATEMENT``, or fewer where this SQLite takes fewer bound values."""
    return max(
        1,
        min(ROWS_PER_STATEMENT, conn.getlimit(sqlite3.SQLITE_LIMIT_VARIABLE_NUMBER) // len(STORED)),
    )


@functools.lru_cache(maxsize=ROWS_PER_STATEMENT)
def _insert_many(count: int) -> str:
    """``INSERT`` of ``count`` rows in one statement, in the order given."""
    head, _, one = INSERT.partition(" VALUES ")
    return f"{head} VALUES {', '.join([one] * count)}"


def write_entries(conn: sqlite3.Connection, entries: Sequence[list[Any]]) -> dict[int, str]:
    """Write ``entries`` (rows and warnings, in order) in the caller's transaction; returns, by
    index into ``entries``, the sentence for each row stored under a fresh id because another
    row held its own (see ``insert_rows``)."""
    taken: dict[int, str] = {}
    start = 0
    while start < len(entries):
        end = start
        while end < len(entries) and entries[end][0] == ROW:
            end += 1
        if end > start:
            found = insert_rows(conn, [entry[1:] for entry in entries[start:end]])
            taken.update((start + index, sentence) for index, sentence in found.items())
            start = end
            continue
        _, call_id, warning = entries[start]
        add_warning(conn, str(call_id), str(warning))
        start += 1
    return taken


def insert_rows(conn: sqlite3.Connection, rows: Sequence[list[Any]]) -> dict[int, str]:
    """Insert ``rows`` (each the stored values ``encode`` gives) in the caller's transaction.

    Returns, by index into ``rows``, the sentence for each row whose id another row already
    held: that row is stored under a fresh id, re-sealed, its warnings saying so. Rows already
    stored (as given, or updated since) are left as they are and not named."""
    if not rows:
        return {}
    step = _rows_per_statement(conn)
    landed = 0
    for start in range(0, len(rows), step):
        chunk = rows[start : start + step]
        landed += conn.execute(_insert_many(len(chunk)), [v for row in chunk for v in row]).rowcount
    if landed == len(rows):
        return {}  # every row landed: the common case costs one comparison
    taken: dict[int, str] = {}
    for index, row in enumerate(rows):
        found = conn.execute(_SELECT_ONE, (row[KEY],)).fetchone()
        if found is not None and same_row(list(found), row):
            continue  # this row itself (written now, or written before)
        fresh = f"{row[KEY]}~{secrets.token_hex(4)}"
        sentence = (
            f"the id {row[KEY]} was already taken in the history by another call's row; this "
            f"call's row was stored as {fresh} and the other row was left as it was"
        )
        conn.execute(INSERT, rekeyed(row, fresh, sentence))
        taken[index] = sentence
    return taken


def same_row(stored: list[Any], given: list[Any]) -> bool:
    """True when the stored row is ``given``: identical, or ``given`` with warnings added
    since (its scalar values equal, its document equal but for more warnings)."""
    if stored[-1] == given[-1]:
        return True
    if stored[:-1] != given[:-1]:
        return False
    then, now = _without_warnings(given[-1]), _without_warnings(stored[-1])
    if then is None or now is None or then[0] != now[0]:
        return False
    return now[1][: len(then[1])] == then[1]


def _without_warnings(document: Any) -> tuple[dict[str, Any], list[Any]] | None:
    """A sealed document without its check and warnings, and its warnings; None if unreadable."""
    opened = unsealed(document)
    if opened is None:
        return None
    try:
        detail = json.loads(opened[0])
    except (ValueError, RecursionError):
        return None
    if not isinstance(detail, dict):
        return None
    warnings = detail.pop("warnings", [])
    return detail, warnings if isinstance(warnings, list) else []


def add_warning(conn: sqlite3.Connection, call_id: str, warning: str) -> bool:
    """Add ``warning`` to the stored row of ``call_id`` (its check sealed again over the new
    document), in the caller's transaction; once only. False when there is no such row."""
    current = conn.execute(_SELECT_ONE, (call_id,)).fetchone()
    if current is None:
        return False
    held = _without_warnings(current[-1])
    if held is not None and warning in held[1]:
        return True  # written once already (an update written again)
    document = seal(KIND_LIST, current[:-1], with_warnings(current[-1], [warning]))
    conn.execute("UPDATE calls SET record = ? WHERE call_id = ?", (document, call_id))
    return True


def rekeyed(row: list[Any], call_id: str, warning: str) -> list[Any]:
    """``row`` under ``call_id``, ``warning`` added to its warnings, sealed again."""
    scalars = list(row[:-1])
    scalars[KEY] = call_id
    return [*scalars, seal(KIND_LIST, scalars, with_warnings(row[-1], [warning]))]
