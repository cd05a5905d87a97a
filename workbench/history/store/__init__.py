"""The store: the history in SQLite, which is its commit. The table and its columns
(``_schema``), the one connection and what opening it involves (``_database``), a file moved
aside only while held alone (``_alone``), rows written so none replaces another (``_insert``),
the writer with its group commit and the rows it holds outside SQLite (``_writer``, ``_behind``),
and the reader (``_reader``)."""

from workbench.history.store._alone import alone
from workbench.history.store._database import CHECKPOINT_ROWS, Database
from workbench.history.store._insert import ROW, WARN, insert_rows, write_entries
from workbench.history.store._problems import (
    HistoryHealth,
    HistoryProblem,
    HistoryWarning,
    Problems,
)
from workbench.history.store._reader import HistoryReader
from workbench.history.store._schema import FILTERABLE, INSERT, SCHEMA, SELECT, fetch, prepare
from workbench.history.store._writer import (
    RETRY_S,
    SPILL_LIMIT,
    WRITE_ATTEMPTS,
    HistoryError,
    Pending,
    Then,
    Writer,
    row_of,
)

__all__ = [
    "CHECKPOINT_ROWS",
    "FILTERABLE",
    "INSERT",
    "RETRY_S",
    "ROW",
    "SCHEMA",
    "SELECT",
    "SPILL_LIMIT",
    "WARN",
    "WRITE_ATTEMPTS",
    "Database",
    "HistoryError",
    "HistoryHealth",
    "HistoryProblem",
    "HistoryReader",
    "HistoryWarning",
    "Pending",
    "Problems",
    "Then",
    "Writer",
    "alone",
    "fetch",
    "insert_rows",
    "prepare",
    "row_of",
    "write_entries",
]
