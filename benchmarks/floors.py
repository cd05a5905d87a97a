"""What SQLite alone costs for the rows workbench keeps: the floor under the goals of the call
path and of the import, measured on this machine in the run that measures them.

Each floor re-inserts rows a real history holds (the values already encoded, nothing of
workbench's Python in the timed loop) into a fresh table made by the history's own schema and
indexes (the unique call id, and those the history view filters by), with its own ``INSERT``
and pragmas:

- ``commit_us``: one row per transaction, on disk (WAL, ``synchronous=NORMAL``), as a call
  commits its row before it is seen to end. No such call costs less.
- ``insert_calls_per_s``: rows 64 to a transaction, as lanes and the import commit them, on
  disk or in memory (the import's default history). No path that keeps a row per call goes
  faster.

A goal below its floor cannot be met by any change to the call path or the readers, only by
keeping rows another way.
"""

from __future__ import annotations

import sqlite3
import tempfile
import time
from pathlib import Path
from typing import Any

from workbench.history.row import STORED as _STORED
from workbench.history.store import INSERT as _INSERT
from workbench.history.store import prepare

BATCH = 64
"""Rows per transaction in ``insert_calls_per_s``: the lanes' and the import's group size."""


def stored_rows(history_path: Path, limit: int) -> list[list[Any]]:
    """Up to ``limit`` rows of the history at ``history_path``, as stored (every column)."""
    with sqlite3.connect(history_path) as conn:
        query = f"SELECT {', '.join(_STORED)} FROM calls LIMIT ?"
        return [list(row) for row in conn.execute(query, (limit,))]


def _table(path: str) -> sqlite3.Connection:
    conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    if path != ":memory:":
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA synchronous=NORMAL")
    prepare(conn)  # the history's own table: every index it keeps is written by every commit
    return conn


def _renamed(rows: list[list[Any]], count: int) -> list[list[Any]]:
    """``count`` rows cycling through ``rows``, each with a call id of its own."""
    key = _STORED.index("call_id")
    made = []
    for index in range(count):
        row = list(rows[index % len(rows)])
        row[key] = f"floor_{index}"
        made.append(row)
    return made


def commit_us(rows: list[list[Any]], count: int = 2_000, rounds: int = 3) -> float:
    """Microseconds to commit one row per transaction on disk, best of ``rounds``."""
    best = float("inf")
    for _ in range(rounds):
        with tempfile.TemporaryDirectory() as directory:
            conn = _table(str(Path(directory) / "floor.sqlite"))
            try:
                batch = _renamed(rows, count)
                started = time.perf_counter()
                for row in batch:
                    conn.execute("BEGIN")
                    conn.execute(_INSERT, row)
                    conn.execute("COMMIT")
                best = min(best, (time.perf_counter() - started) / count * 1e6)
            finally:
                conn.close()
    return best


def insert_calls_per_s(
    rows: list[list[Any]], count: int = 20_000, *, on_disk: bool, rounds: int = 3
) -> float:
    """Rows per second inserted ``BATCH`` to a transaction, best of ``rounds``."""
    best = float("inf")
    for _ in range(rounds):
        with tempfile.TemporaryDirectory() as directory:
            conn = _table(str(Path(directory) / "floor.sqlite") if on_disk else ":memory:")
            try:
                batch = _renamed(rows, count)
                started = time.perf_counter()
                for start in range(0, count, BATCH):
                    conn.execute("BEGIN")
                    conn.executemany(_INSERT, batch[start : start + BATCH])
                    conn.execute("COMMIT")
                best = min(best, time.perf_counter() - started)
            finally:
                conn.close()
    return count / best
