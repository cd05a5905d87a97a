"""The history's SQLite table: one column per scalar field of a row, then its JSON document.

A file written by an older workbench gets the columns it lacks (they read as null); the indexes
that keyset pages and filter values seek in are made once and kept by SQLite.
"""

from __future__ import annotations

import sqlite3
from typing import Any

from workbench.history.row import FIELDS, SCALARS, STORED, mend

INSERT = (
    f"INSERT OR IGNORE INTO calls ({', '.join(STORED)}) VALUES ({', '.join('?' * len(STORED))})"
)
"""Adds one row; one whose id is taken is left out (``_insert`` says what becomes of it)."""
SELECT = f"SELECT seq, {', '.join(STORED)} FROM calls"
SCHEMA = f"""
CREATE TABLE IF NOT EXISTS calls (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    {", ".join("call_id TEXT UNIQUE" if name == "call_id" else name for name in SCALARS)},
    record TEXT
)
"""
FILTERABLE = ("tool", "status", "kind")
"""The columns a page of rows can be filtered on (each has an index of its own)."""

_SQL_TYPES = {"text": "TEXT", "bool": "INTEGER", "real": "REAL", "integer": "INTEGER"}


def prepare(conn: sqlite3.Connection) -> None:
    """The table, the columns an older file lacks, and the indexes (each made once)."""
    conn.executescript(SCHEMA)
    present = {row[1] for row in conn.execute("PRAGMA table_info(calls)")}
    for name in SCALARS:
        if name not in present:
            conn.execute(f"ALTER TABLE calls ADD COLUMN {name} {_SQL_TYPES[FIELDS[name]]}")
    if "record" not in present:
        conn.execute("ALTER TABLE calls ADD COLUMN record TEXT")
    conn.commit()
    for column in FILTERABLE:
        conn.execute(f"CREATE INDEX IF NOT EXISTS calls_by_{column} ON calls ({column})")


def fetch(conn: sqlite3.Connection, sql: str, params: tuple[Any, ...]) -> list[dict[str, Any]]:
    """The rows of one query as dicts; a text that is not UTF-8 is read with replacement
    characters (and shows as ``Mended``) instead of failing the whole read."""
    try:
        cursor = conn.execute(sql, params)
        rows = cursor.fetchall()
    except sqlite3.OperationalError as exc:
        if getattr(exc, "sqlite_errorcode", None) is not None:
            raise
        # Raised by Python's sqlite3 itself, not SQLite: a text that does not decode.
        conn.text_factory = mend
        try:
            cursor = conn.execute(sql, params)
            rows = cursor.fetchall()
        finally:
            conn.text_factory = str
    names = [column[0] for column in cursor.description]
    return [dict(zip(names, row, strict=True)) for row in rows]
