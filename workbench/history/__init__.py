"""The history: every call, recorded as it ends, readable as a table.

``History`` keeps one row per call (a ``CallRecord``) in a real SQLite file or in memory. A
call's row is committed before anyone learns that the call ended; a write that fails is
journaled beside the file and replayed; a damaged file is moved aside and salvaged row by row.
Rows are read whole (``rows``, ``to_dataframe``), a page at a time for views (``HistoryPages``)
or through DuckDB SQL (``sql``).
"""

from __future__ import annotations

from workbench.history._duckdb import TABLE, QueryError, connect, run_query
from workbench.history._pages import (
    FILTERABLE,
    NULL,
    FramePages,
    HistoryPages,
    Page,
    filter_clauses,
)
from workbench.history._record import FIELDS, SCALARS, CallRecord
from workbench.history._sql import history_sql
from workbench.history._store import DEFAULT_PATH, History

__all__ = [
    "DEFAULT_PATH",
    "FIELDS",
    "FILTERABLE",
    "NULL",
    "SCALARS",
    "TABLE",
    "CallRecord",
    "FramePages",
    "History",
    "HistoryPages",
    "Page",
    "QueryError",
    "connect",
    "filter_clauses",
    "history_sql",
    "run_query",
]
