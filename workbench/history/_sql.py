"""DuckDB SQL over a history's SQLite file: ``history.sql(query)``.

The rows stream from SQLite in batches into a DuckDB table ``calls`` (of the columns the query
names: ``seq``, the scalar columns, the row's JSON document ``record``); DuckDB spills to a
temporary directory past its memory limit, so a history larger than memory can be queried. The
answer comes back as a DataFrame. DuckDB's JSON functions read ``record``
(``record->>'$.receipt'``).
"""

from __future__ import annotations

import contextlib
import re
import sqlite3
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from workbench._extras import require
from workbench.history._duckdb import TABLE, QueryError, connect, run_query
from workbench.history.row import FIELDS, SCALARS

if TYPE_CHECKING:
    import pandas as pd

    from workbench.history._history import History

BATCH_ROWS = 50_000
COLUMNS = ("seq", *SCALARS, "record")
"""Every column of the table ``calls`` that ``history.sql`` offers."""
_KINDS = {"seq": "integer", "record": "text", **FIELDS}
_COUNT_STAR = re.compile(r"\(\s*\*\s*\)")


def columns_named(query: str) -> list[str]:
    """The columns a query can read: those it names (a word match), or every scalar column
    when it has a ``*`` that is not ``count(*)``; ``record`` only when named. Copying only
    these into DuckDB is what keeps a query over a large history quick."""
    named = [name for name in COLUMNS if re.search(rf"\b{name}\b", query, re.IGNORECASE)]
    if "*" in _COUNT_STAR.sub("", query):
        named = [name for name in COLUMNS if name != "record" or name in named]
    return named or ["seq"]


def _schema(columns: list[str]) -> Any:
    pa = require("pyarrow", "history.sql")
    types = {"text": pa.string(), "bool": pa.bool_(), "real": pa.float64(), "integer": pa.int64()}
    return pa.schema([pa.field(name, types[_KINDS[name]]) for name in columns])


def _column(kind: str, values: list[Any]) -> list[Any]:
    if kind == "bool":
        return [None if value is None else bool(value) for value in values]
    if kind == "real":
        return [None if value is None else float(value) for value in values]
    if kind == "integer":
        return [None if value is None else int(value) for value in values]
    return [value if value is None or isinstance(value, str) else str(value) for value in values]


def _batches(rows: Iterator[list[tuple[Any, ...]]], layout: Any) -> Iterator[Any]:
    pa = require("pyarrow", "history.sql")
    kinds = [_KINDS[name] for name in layout.names]
    for chunk in rows:
        columns = list(zip(*chunk, strict=True))
        arrays = [
            pa.array(_column(kind, list(values)), type=field.type)
            for kind, values, field in zip(kinds, columns, layout, strict=True)
        ]
        yield pa.RecordBatch.from_arrays(arrays, schema=layout)


def _chunks(cursor: sqlite3.Cursor) -> Iterator[list[tuple[Any, ...]]]:
    while True:
        chunk = cursor.fetchmany(BATCH_ROWS)
        if not chunk:
            return
        yield chunk


@contextlib.contextmanager
def _stored(history: History, columns: list[str]) -> Iterator[Iterator[list[tuple[Any, ...]]]]:
    """The history's rows in chunks: from a read-only connection of their own for a file
    (the writer is never held up), else from the history's connection."""
    history.flush()
    select = f"SELECT {', '.join(columns)} FROM calls ORDER BY seq"
    if history.in_memory or history.health().held_rows or not Path(history.path).exists():
        stored = history.reader.stored_rows()  # rows held outside SQLite are read this way too
        rows = [tuple(row.get(name) for name in columns) for row in stored]
        yield iter([rows[start : start + BATCH_ROWS] for start in range(0, len(rows), BATCH_ROWS)])
        return
    uri = Path(history.path).resolve().as_uri() + "?mode=ro"
    # DuckDB pulls the batches from threads of its own.
    with contextlib.closing(sqlite3.connect(uri, uri=True, check_same_thread=False)) as conn:
        yield _chunks(conn.execute(select))


def history_sql(history: History, query: str, *, memory_limit: str | None = None) -> pd.DataFrame:
    """Run DuckDB ``query`` over the table ``calls`` of ``history``; see ``History.sql``."""
    pa = require("pyarrow", "history.sql")
    if not isinstance(query, str) or not query.strip():
        raise QueryError(f"give an SQL query over the table {TABLE!r} (history {history.path})")
    columns = columns_named(query)
    layout = _schema(columns)
    with tempfile.TemporaryDirectory(prefix="workbench-sql-") as scratch:
        conn = connect(memory_limit)
        try:
            conn.execute(f"SET temp_directory = '{scratch}'")
            with _stored(history, columns) as chunks:
                reader = pa.RecordBatchReader.from_batches(layout, _batches(chunks, layout))
                conn.register("history_rows", reader)
                conn.execute(f"CREATE TABLE {TABLE} AS SELECT * FROM history_rows")
                conn.unregister("history_rows")
            return run_query(conn, query, f"history {history.path}", COLUMNS)
        finally:
            conn.close()
