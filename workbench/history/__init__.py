"""The history: every call, recorded as it ends, readable as a table.

``History`` keeps one row per call (a ``CallRecord``) in a real SQLite file or in memory. A
call's row is committed before anyone learns that the call ended; a write that fails is
journaled beside the file and replayed; a damaged file is moved aside and salvaged row by row.
Rows are read whole (``rows``, ``to_dataframe``), a page at a time for views (``HistoryPages``)
or through DuckDB SQL (``sql``).
"""

from workbench.history._codec import FILTERABLE
from workbench.history._duckdb import TABLE, QueryError, connect, run_query
from workbench.history._pages import (
    NULL,
    FramePages,
    HistoryPages,
    Page,
    filter_clauses,
)
from workbench.history._problems import HistoryHealth, HistoryProblem, HistoryWarning
from workbench.history._reader import HistoryReader
from workbench.history._record import FIELDS, SCALARS, CallRecord, plain_json
from workbench.history._salvage import SalvageReport
from workbench.history._sql import history_sql
from workbench.history._store import COLUMNS, DEFAULT_PATH, History
from workbench.history._writer import Then

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
