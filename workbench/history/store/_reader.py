"""Reading a history back, whole or a part at a time, without ever failing as a whole.

A row whose stored document cannot be read is returned as far as it can be (or left out where
a whole envelope is needed) and named in the history's problems. Every committed row is in
SQLite, so any reader in any process sees it; rows this process holds outside SQLite for now
(its spill, or memory) are read too by ``stored_rows`` and ``count``, in this process only.
Views, pages and studies read through here (``execute``, ``batches``, ``stored_rows``):
nothing outside this package touches the lock or the connection.
"""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from workbench.envelope import Envelope
from workbench.history.row import STORED, CallRecord, decode, reason, unanswered
from workbench.history.store._database import Database
from workbench.history.store._problems import Problems
from workbench.history.store._schema import SELECT, fetch
from workbench.history.store._writer import Writer


class HistoryReader:
    """The read side of one history (``history.reader``)."""

    def __init__(self, database: Database, writer: Writer, problems: Problems) -> None:
        self._database = database
        self._writer = writer
        self._problems = problems
        self._decode_named: set[str] = set()

    # ── for views and studies: SQL over the stored columns ───────────────────────────────
    def execute(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        """The rows of one SQL statement over the table ``calls`` (``seq``, the scalar
        columns, ``record``), as stored; raises ``sqlite3.Error`` or ``OSError`` when the file
        cannot be read. What was handed to the writer is committed first; rows held outside
        SQLite (``waiting``) are not among them."""
        self._writer.settle()
        database = self._database
        with database.lock:
            return database.connection().execute(sql, params).fetchall()

    def batches(self, sql: str, size: int) -> Iterator[list[tuple[Any, ...]]]:
        """The rows of one SQL statement in chunks of ``size``, the history held for the
        whole read; raises ``sqlite3.Error`` when SQLite cannot produce a row. What was
        handed to the writer is committed first."""
        self._writer.settle()
        database = self._database
        with database.lock:
            cursor = database.connection().execute(sql)
            while True:
                chunk = cursor.fetchmany(size)
                if not chunk:
                    return
                yield chunk

    @property
    def waiting(self) -> int:
        """How many rows this process holds outside SQLite (in its spill or in memory)."""
        with self._database.lock:
            return self._writer.held.row_count()

    def stored_rows(self, where: str = "", params: tuple[Any, ...] = ()) -> list[dict[str, Any]]:
        """Every stored row (``seq`` and the stored columns), oldest first, those held outside
        SQLite last; a file SQLite reports damaged while this process holds it alone is moved
        aside and salvaged first, a file it cannot write is read as it is."""
        self._writer.flush()
        database = self._database
        with database.lock:
            try:
                found = fetch(database.connection(), f"{SELECT} {where} ORDER BY seq", params)
            except (sqlite3.Error, OSError) as exc:
                failure: BaseException = exc
                try:
                    if database.is_corrupt(exc) and database.recover(exc):
                        return self.stored_rows(where, params)
                except (sqlite3.Error, OSError) as again:
                    failure = again
                database.drop()
                found = self._read_only_rows(where, params, failure)
            held = self._writer.held.rows()
        if not held:
            return found
        have = {row.get("call_id") for row in found}
        return found + [row for row in held if row.get("call_id") not in have]

    def _read_only_rows(
        self, where: str, params: tuple[Any, ...], failure: BaseException
    ) -> list[dict[str, Any]]:
        """Read a file that cannot be opened for writing (a read-only directory or disk)."""
        path = self._database.path
        if not self._database.in_memory and Path(path).exists():
            try:
                uri = Path(path).resolve().as_uri() + "?mode=ro&immutable=1"
                with contextlib.closing(sqlite3.connect(uri, uri=True)) as conn:
                    present = {row[1] for row in conn.execute("PRAGMA table_info(calls)")}
                    columns = [
                        f"{name} AS {name}" if name in present else f"NULL AS {name}"
                        for name in ("seq", *STORED)
                    ]
                    return fetch(
                        conn, f"SELECT {', '.join(columns)} FROM calls {where} ORDER BY seq", params
                    )
            except sqlite3.Error as exc:
                failure = exc
        self._problems.add("decode", f"history could not be read ({reason(failure)})")
        return []

    # ── for people: rows, records, envelopes ─────────────────────────────────────────────
    def decoded(self, stored: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """Stored rows as ``CallRecord``-shaped dicts; each that cannot be read whole is
        named in the problems (once)."""
        rows = []
        for item in stored:
            row, problem = decode(item)
            if problem is not None:
                self._name_bad_row(row, problem)
            rows.append(row)
        return rows

    def _name_bad_row(self, row: Mapping[str, Any], problem: str) -> None:
        key = f"{row.get('call_id')}: {problem}"
        if key not in self._decode_named:
            self._decode_named.add(key)
            self._problems.add(
                "decode",
                f"history row {row.get('call_id')!r} ({row.get('tool')}) {problem}",
                (str(row.get("call_id")),),
            )

    def rows(self) -> list[dict[str, Any]]:
        """Every recorded call, oldest first, with the fields of ``CallRecord``."""
        return self.decoded(self.stored_rows())

    def records(self) -> list[CallRecord]:
        """Every recorded call as a ``CallRecord``, oldest first."""
        return [CallRecord.from_mapping(row) for row in self.rows()]

    def get(self, call_id: str) -> dict[str, Any] | None:
        """One recorded call by workbench's id (or, failing that, the latest call a model sent
        with that id)."""
        found = self.stored_rows("WHERE call_id = ?", (call_id,))
        found = [row for row in found if row.get("call_id") == call_id]
        if not found:
            found = self.stored_rows("WHERE model_call_id = ?", (call_id,))
            found = [row for row in found if row.get("model_call_id") == call_id][-1:]
        return self.decoded(found)[0] if found else None

    def envelopes(self) -> list[Envelope]:
        """The canonical envelopes of every recorded call, oldest first (see
        ``History.envelopes``)."""
        envelopes = []
        for row in self.rows():
            canonical = row.get("canonical")
            if canonical is None and unanswered(row):
                envelopes.append(
                    Envelope(
                        tool_name=str(row.get("tool") or ""),
                        status="success",
                        summary_text="no result in the transcript",
                        result={"text": ""},
                        call_id=row.get("model_call_id") or row.get("call_id"),
                    )
                )
                continue
            try:
                if not isinstance(canonical, dict):
                    raise ValueError("it has no canonical record")
                envelopes.append(Envelope.from_canonical(canonical))
            except (ValueError, RecursionError) as exc:
                self._name_bad_row(row, f"was left out: {reason(exc)}")
        return envelopes

    def count(self) -> int:
        """How many calls are recorded (with those this process holds outside SQLite)."""
        self._writer.flush()
        try:
            with self._database.lock:
                stored = self._database.connection().execute("SELECT COUNT(*) FROM calls")
                return int(stored.fetchone()[0]) + self._writer.held.row_count()
        except (sqlite3.Error, OSError):
            return len(self.stored_rows())  # counted from what can be read, naming the problem
