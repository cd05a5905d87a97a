"""Pages of a Parquet dataset for the history view, read with DuckDB.

The same questions as ``workbench.history._pages.HistoryPages`` (filter values, the newest page, the
page before a row), keyed by ``(run, seq)``: DuckDB answers each with a top-N scan of the
columns it needs, skipping row groups by their statistics, so the kernel holds only the rows
drawn however large the dataset is.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from workbench.history import FILTERABLE, SCALARS, Page, filter_clauses

if TYPE_CHECKING:
    from workbench.study._dataset import Dataset

_NAMES = ["run", "seq", *SCALARS]


class DatasetPages:
    """Keyset pages over a dataset's table ``calls``, on one DuckDB connection of its own."""

    def __init__(self, dataset: Dataset) -> None:
        self.dataset = dataset
        self._conn = dataset._connection()
        self.statements = 0
        self.rows_read = 0

    def _execute(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        found: list[tuple[Any, ...]] = self._conn.execute(sql, list(params)).fetchall()
        self.statements += 1
        self.rows_read += len(found)
        return found

    def page(self, size: int, *, before: Any = None, filters: Mapping[str, object] = {}) -> Page:
        """Up to ``size`` matching rows ordered before the key ``before`` (None: the newest)."""
        clauses, params = filter_clauses(filters)
        if before is not None:
            run, seq = before
            clauses.append("(run < ? OR (run = ? AND seq < ?))")
            params += [run, run, seq]
        where = f"WHERE {' AND '.join(clauses)}" if clauses else ""
        found = self._execute(
            f"SELECT {', '.join(_NAMES)} FROM calls {where} ORDER BY run DESC, seq DESC LIMIT ?",
            [*params, size + 1],
        )
        rows = [dict(zip(_NAMES, values, strict=True)) for values in found[:size]]
        rows.reverse()
        oldest = (rows[0]["run"], rows[0]["seq"]) if rows else None
        return Page(rows, has_older=len(found) > size, oldest_key=oldest)

    def rows_with_ids(self, call_ids: Sequence[str]) -> list[dict[str, Any]]:
        """The rows of the given call ids, in the order given."""
        if not call_ids:
            return []
        marks = ", ".join("?" * len(call_ids))
        found = self._execute(
            f"SELECT {', '.join(_NAMES)} FROM calls WHERE call_id IN ({marks})", call_ids
        )
        by_id = {values[2]: dict(zip(_NAMES, values, strict=True)) for values in found}
        return [by_id[call_id] for call_id in call_ids if call_id in by_id]

    def values(self, column: str) -> tuple[list[str], bool]:
        """The distinct non-empty values of a filterable column, and whether one is empty."""
        if column not in FILTERABLE:
            raise ValueError(f"cannot filter on {column!r}: one of {', '.join(FILTERABLE)}")
        found = self._execute(f"SELECT DISTINCT {column} FROM calls")
        values = sorted(str(value) for (value,) in found if value is not None)
        return values, any(value is None for (value,) in found)

    def is_empty(self) -> bool:
        """True when the dataset holds no call."""
        return not self._execute("SELECT 1 FROM calls LIMIT 1")
