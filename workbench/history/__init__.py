"""The history: every call, recorded as it ends, readable as a table.

``History`` keeps one row per call (a ``CallRecord``) in a real SQLite file, whose WAL is the
commit: a call's row is committed before anyone learns that the call ended, and every SQLite
reader of the file, in any process, sees it at once. Rows SQLite will not take for now (its
write lock held elsewhere, a full disk) wait in this process's spill until it does; a file
SQLite reports damaged while this process holds it alone is moved aside and salvaged row by
row. Rows are read whole (``rows``, ``to_dataframe``), a page at a time for views
(``HistoryPages``) or through DuckDB SQL (``sql``).

Inside, in rooms of their own: ``row`` (what a row is and how it is stored), ``store`` (SQLite:
schema, writer, reader), ``spill`` (where rows wait) and ``salvage`` (damaged files).
"""

from workbench.history._duckdb import TABLE, QueryError, connect, run_query
from workbench.history._history import COLUMNS, DEFAULT_PATH, History
from workbench.history._pages import (
    NULL,
    FramePages,
    HistoryPages,
    Page,
    filter_clauses,
)
from workbench.history._sql import history_sql
from workbench.history.row import FIELDS, SCALARS, CallRecord, plain_json
from workbench.history.salvage import SalvageReport
from workbench.history.store import (
    FILTERABLE,
    HistoryError,
    HistoryHealth,
    HistoryProblem,
    HistoryReader,
    HistoryWarning,
    Then,
)

__all__ = [
    "COLUMNS",
    "DEFAULT_PATH",
    "FIELDS",
    "FILTERABLE",
    "NULL",
    "SCALARS",
    "TABLE",
    "CallRecord",
    "FramePages",
    "History",
    "HistoryError",
    "HistoryHealth",
    "HistoryPages",
    "HistoryProblem",
    "HistoryReader",
    "HistoryWarning",
    "Page",
    "QueryError",
    "SalvageReport",
    "Then",
    "connect",
    "filter_clauses",
    "history_sql",
    "plain_json",
    "run_query",
]
