"""Inserting rows so that no row ever replaces another.

A call's id is the history's key, and two writers (two processes, a forked worker, a journal
replayed next to rows committed since) may hand over rows under one id. A row that is already
there, byte for byte, is the same row written twice: nothing happens. A different row under a
taken id is the other call's: it is stored under a fresh id of its own, with a warning saying
which id it was given and why, and the caller is told.
"""

from __future__ import annotations

import functools
import secrets
import sqlite3
from collections.abc import Sequence
from typing import Any

from workbench.history._codec import INSERT, KIND_LIST, STORED
from workbench.history._salvage import seal, with_warnings

KEY = 0
"""Where the call id sits among a row's stored values (the first scalar column)."""

ROWS_PER_STATEMENT = 64
"""Rows one ``INSERT`` adds at most. ``sqlite3`` gives up the interpreter lock around each step
of a statement, and the writer's thread then waits to take it back from the calls running
Python meanwhile: ``executemany`` steps once a row, one ``INSERT`` of many rows once."""


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


def insert_rows(conn: sqlite3.Connection, rows: Sequence[list[Any]]) -> dict[int, str]:
    """Insert ``rows`` (each the stored values ``encode`` gives) in the caller's transaction.

    Returns, by index into ``rows``, the sentence for each row whose id another row already
    held: that row is stored under a fresh id, re-sealed, its warnings saying so. Rows already
    stored exactly as given are left as they are (and are not named)."""
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
        found = conn.execute("SELECT record FROM calls WHERE call_id = ?", (row[KEY],)).fetchone()
        if found is not None and found[0] == row[-1]:
            continue  # this row itself (written now, or written before, identical)
        fresh = f"{row[KEY]}~{secrets.token_hex(4)}"
        sentence = (
            f"the id {row[KEY]} was already taken in the history by another call's row; this "
            f"call's row was stored as {fresh} and the other row was left as it was"
        )
        conn.execute(INSERT, rekeyed(row, fresh, sentence))
        taken[index] = sentence
    return taken


def rekeyed(row: list[Any], call_id: str, warning: str) -> list[Any]:
    """``row`` under ``call_id``, ``warning`` added to its warnings, sealed again."""
    scalars = list(row[:-1])
    scalars[KEY] = call_id
    return [*scalars, seal(KIND_LIST, scalars, with_warnings(row[-1], [warning]))]
