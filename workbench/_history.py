"""The history: every call, recorded in SQLite as it ends, readable as a pandas DataFrame.

One writer thread owns all writes, so calls ending at once on different threads and loops never
contend or lose a row; readers flush it first, so what they read includes every ended call. The
file (``.workbench/history.sqlite`` by default) survives a kernel restart; ``":memory:"`` keeps
it in this process only.
"""

from __future__ import annotations

import json
import queue
import sqlite3
import threading
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pydantic_core

from workbench._envelope import Envelope

if TYPE_CHECKING:
    import pandas as pd

DEFAULT_PATH = Path(".workbench") / "history.sqlite"

# Column name → whether it holds JSON. The order is the DataFrame's column order.
COLUMNS: dict[str, bool] = {
    "call_id": False,
    "tool": False,
    "family": False,
    "state": False,
    "status": False,
    "kind": False,
    "retryable": False,
    "summary_text": False,
    "elapsed_ms": False,
    "queued_at": False,
    "started_at": False,
    "ended_at": False,
    "receipt_chars": False,
    "truncated": False,
    "killed_by": False,
    "terminated": False,
    "denied": False,
    "timed_out": False,
    "injected": False,
    "dry_run": False,
    "raw_args": True,
    "arguments": True,
    "coercions": True,
    "events": True,
    "canonical": True,
    "wire": False,
    "receipt": False,
    "artifacts": True,
    "warnings": True,
}
_BOOLEAN = ("retryable", "truncated", "terminated", "denied", "timed_out", "injected", "dry_run")

# Scalars get columns of their own (SQL can filter on them); the structured rest is stored as
# one JSON document per call, encoded in a single pass.
_SCALARS = tuple(
    name for name, is_json in COLUMNS.items() if not is_json and name not in ("wire", "receipt")
)
_DETAIL = tuple(name for name in COLUMNS if name not in _SCALARS)

_SCHEMA = f"""
CREATE TABLE IF NOT EXISTS calls (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    {", ".join(name if name != "call_id" else "call_id TEXT UNIQUE" for name in _SCALARS)},
    record TEXT
)
"""

_Job = Callable[[sqlite3.Connection], object]


Committed = Callable[[str | None], object]


class _Row:
    """The encoded values of one call's row, waiting for the writer, and who to tell once it is
    committed."""

    __slots__ = ("then", "values")

    def __init__(self, values: list[Any], then: Committed | None = None) -> None:
        self.values = values
        self.then = then


def _row_values(data: Mapping[str, Any]) -> list[Any]:
    # sqlite3 stores bools as 0/1 itself; _decode turns them back into bools.
    values = [data.get(name) for name in _SCALARS]
    values.append(_encode({name: data.get(name) for name in _DETAIL}))
    return values


_Item = _Row | _Job | None


_STORED = (*_SCALARS, "record")
_INSERT = (
    f"INSERT OR REPLACE INTO calls ({', '.join(_STORED)}) VALUES ({', '.join('?' * len(_STORED))})"
)
_SELECT = f"SELECT {', '.join(_STORED)} FROM calls"


def _encode(value: Any) -> str:
    return pydantic_core.to_json(value, fallback=repr, inf_nan_mode="null").decode()


class History:
    """The record of every call of a registry, in a real SQLite file (or ``:memory:``)."""

    def __init__(self, path: str | Path = DEFAULT_PATH) -> None:
        self.path: str | Path = path if str(path) == ":memory:" else Path(path)
        self._lock = threading.Lock()
        self._start_lock = threading.Lock()
        self._conn: sqlite3.Connection | None = None
        self._jobs: queue.Queue[_Item] = queue.Queue()
        self._writer: threading.Thread | None = None

    @property
    def in_memory(self) -> bool:
        """True for a ``:memory:`` history."""
        return str(self.path) == ":memory:"

    @property
    def directory(self) -> Path | None:
        """The directory of the history file (where artifacts go by default)."""
        return None if self.in_memory else Path(self.path).parent

    def _connection(self) -> sqlite3.Connection:
        if self._conn is None:
            if not self.in_memory:
                Path(self.path).parent.mkdir(parents=True, exist_ok=True)
            conn = sqlite3.connect(str(self.path), check_same_thread=False, timeout=30)
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=NORMAL")
            conn.executescript(_SCHEMA)
            self._conn = conn
        return self._conn

    def _submit(self, job: _Row | _Job) -> None:
        writer = self._writer
        if writer is None or not writer.is_alive():
            # Not self._lock: the writer holds that while it writes, and a call must not wait.
            with self._start_lock:
                if self._writer is None or not self._writer.is_alive():
                    self._writer = threading.Thread(
                        target=self._write_loop, name="workbench-history", daemon=True
                    )
                    self._writer.start()
        self._jobs.put(job)

    def _write_loop(self) -> None:
        while True:
            batch = [self._jobs.get()]
            # Group commit: whatever arrived while the previous transaction ran shares this one.
            while True:
                try:
                    batch.append(self._jobs.get_nowait())
                except queue.Empty:
                    break
            problem: str | None = None
            try:
                with self._lock:
                    conn = self._connection()
                    with conn:
                        self._write(conn, batch)
            except sqlite3.Error as exc:
                problem = f"the history row could not be written: {exc}"
            finally:
                for item in batch:
                    if isinstance(item, _Row) and item.then is not None:
                        item.then(problem)
                    self._jobs.task_done()
            if None in batch:
                return

    @staticmethod
    def _write(conn: sqlite3.Connection, batch: list[_Item]) -> None:
        # Consecutive rows go in as one executemany: each statement releases and retakes the
        # GIL, and a busy event loop makes every retake wait, so fewer statements matter.
        rows: list[list[Any]] = []
        for item in batch:
            if isinstance(item, _Row):
                rows.append(item.values)
                continue
            if rows:
                conn.executemany(_INSERT, rows)
                rows = []
            if item is not None:
                try:
                    item(conn)
                except Exception:
                    continue
        if rows:
            conn.executemany(_INSERT, rows)

    def append(self, row: Mapping[str, Any], then: Committed | None = None) -> None:
        """Queue one ended call's row; ``then(problem)`` runs on the writer thread once the row
        is committed (``problem`` is None) or could not be (a sentence saying why)."""
        try:
            values = _row_values(row)
        except Exception as exc:  # a broken row must never stop a call from ending
            values = _row_values({"warnings": [f"the history row could not be built: {exc!r}"]})
        self._submit(_Row(values, then))

    def record(self, row: Mapping[str, Any] | Callable[[], Mapping[str, Any]]) -> None:
        """Store one ended call (insert, or replace a row with the same call id).

        The row is encoded here, on the caller's thread: the writer thread then holds the GIL
        only for one ``executemany`` per batch, which measured far cheaper than building rows
        there (a second Python thread fighting a busy event loop for the GIL).
        """
        try:
            data = row() if callable(row) else row
            values = _row_values(data)
        except Exception as exc:  # a broken row must never stop a call from ending
            values = _row_values({"warnings": [f"the history row could not be built: {exc!r}"]})
        self._submit(_Row(values))

    def add_warning(self, call_id: str, warning: str) -> None:
        """Append a warning to a recorded call (e.g. a late result that was discarded)."""

        def job(conn: sqlite3.Connection) -> None:
            found = conn.execute("SELECT record FROM calls WHERE call_id = ?", (call_id,))
            current = found.fetchone()
            if current is None:
                return
            record = json.loads(current[0]) if current[0] else {}
            record["warnings"] = [*(record.get("warnings") or []), warning]
            conn.execute(
                "UPDATE calls SET record = ? WHERE call_id = ?", (_encode(record), call_id)
            )

        self._submit(job)

    def flush(self) -> None:
        """Wait until every recorded call is written."""
        if self._writer is not None:
            self._jobs.join()

    def _query(self, sql: str, params: tuple[Any, ...] = ()) -> list[dict[str, Any]]:
        self.flush()
        with self._lock:
            cursor = self._connection().execute(sql, params)
            names = [column[0] for column in cursor.description]
            return [_decode(dict(zip(names, row, strict=True))) for row in cursor.fetchall()]

    def rows(self) -> list[dict[str, Any]]:
        """Every recorded call, oldest first, JSON columns decoded."""
        return self._query(f"{_SELECT} ORDER BY seq")

    def get(self, call_id: str) -> dict[str, Any] | None:
        """One recorded call by id."""
        found = self._query(f"{_SELECT} WHERE call_id = ?", (call_id,))
        return found[0] if found else None

    def envelopes(self) -> list[Envelope]:
        """The canonical envelopes of every recorded call, oldest first."""
        return [Envelope.from_canonical(row["canonical"]) for row in self.rows()]

    def __iter__(self) -> Iterator[dict[str, Any]]:
        return iter(self.rows())

    def __len__(self) -> int:
        self.flush()
        with self._lock:
            return int(self._connection().execute("SELECT COUNT(*) FROM calls").fetchone()[0])

    def clear(self) -> None:
        """Forget every recorded call."""
        self._submit(lambda conn: conn.execute("DELETE FROM calls"))
        self.flush()

    def to_dataframe(self) -> pd.DataFrame:
        """One row per call: call_id, tool, status, kind, retryable, summary_text, elapsed_ms,
        started_at, receipt_chars, truncated, killed_by and the rest of the record."""
        import pandas as pd

        frame = pd.DataFrame(self.rows(), columns=list(COLUMNS))
        for name in ("queued_at", "started_at", "ended_at"):
            frame[name] = pd.to_datetime(frame[name], unit="s", utc=True)
        return frame

    def close(self) -> None:
        """Write what is pending and close the file."""
        self.flush()
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None

    def __repr__(self) -> str:
        return f"History({str(self.path)!r})"

    def _repr_mimebundle_(self, **kwargs: Any) -> dict[str, Any]:
        from workbench._call_display import widget_mimebundle

        return widget_mimebundle("HistoryView", self, {"text/plain": repr(self)}, **kwargs)

    def _ipython_display_(self) -> None:
        from workbench._call_display import display_widget

        display_widget("HistoryView", self, lambda: {"text/plain": repr(self)})


def _decode(stored: dict[str, Any]) -> dict[str, Any]:
    record = stored.pop("record", None)
    detail = json.loads(record) if isinstance(record, str) else {}
    row = {name: stored.get(name, detail.get(name)) for name in COLUMNS}
    for name in _SCALARS:
        value = row.get(name)
        if name in _BOOLEAN and value is not None:
            row[name] = bool(int(value))
        elif name in ("elapsed_ms", "queued_at", "started_at", "ended_at", "receipt_chars"):
            row[name] = None if value is None else float(value)
    canonical = row.get("canonical")
    if row.get("wire") is None and isinstance(canonical, dict):
        # Not stored: the wire string is derived from the canonical record, exactly as the call
        # derived it, so it is built when read rather than on every call's way out.
        row["wire"] = Envelope.from_canonical(canonical).to_wire()
    chars = row.get("receipt_chars")
    if chars is not None:
        row["receipt_chars"] = int(chars)
    return row
