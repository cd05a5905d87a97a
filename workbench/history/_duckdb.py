"""DuckDB sessions for SQL over calls: a history's (``history.sql``) or a study's dataset.

The table is always ``calls``; a bad query is a ``QueryError`` naming the table's columns.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from workbench._extras import require

if TYPE_CHECKING:
    import pandas as pd

TABLE = "calls"


class QueryError(ValueError):
    """DuckDB could not run a query; the message is DuckDB's, with the table it had."""


def connect(memory_limit: str | None = None) -> Any:
    """A fresh in-memory DuckDB connection (spilling to a temporary directory when a query
    needs more memory than ``memory_limit``)."""
    duckdb = require("duckdb", "querying with SQL")
    conn = duckdb.connect(":memory:")
    if memory_limit is not None:
        conn.execute(f"SET memory_limit = '{memory_limit}'")
    return conn


def run_query(
    conn: Any, query: str, where: str, columns: Sequence[str] | None = None
) -> pd.DataFrame:
    """``query`` on ``conn`` as a DataFrame; a bad query raises ``QueryError`` naming the
    table's ``columns`` (by default, those DuckDB has)."""
    duckdb = require("duckdb", "querying with SQL")
    if not isinstance(query, str) or not query.strip():
        raise QueryError(f"give an SQL query over the table {TABLE!r} ({where})")
    try:
        return conn.execute(query).df()
    except duckdb.Error as exc:
        if columns is None:
            columns = [row[0] for row in conn.execute(f"DESCRIBE {TABLE}").fetchall()]
        raise QueryError(
            f"the query failed on {where}: {exc}. The table is {TABLE!r} with columns: "
            f"{', '.join(columns)}"
        ) from None
