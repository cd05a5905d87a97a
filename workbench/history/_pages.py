"""Pages of a history's rows, read by key: what a view draws, and nothing more.

``HistoryPages`` answers the three questions a table of calls asks (which values each filter
can take, the newest page of matching rows, the page before a given row) with SQL that seeks
in an index and stops after the rows it returns: no ``COUNT(*)``, no ``OFFSET``, no scan of the
whole table. A page is a keyset page: rows with ``seq`` below a bound, newest first, one row
more than asked so the caller knows whether older rows remain. The work per page is the same
for a history of a thousand rows and of ten million.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from workbench.history.row import FIELDS, SCALARS
from workbench.history.store import FILTERABLE

if TYPE_CHECKING:
    import pandas as pd

    from workbench.history._history import History

NULL = object()
"""A filter value that matches rows where the column is empty (e.g. calls without a kind)."""


@dataclasses.dataclass(frozen=True)
class Page:
    """Rows of one page, oldest first, whether older matching rows remain, and the key of
    its oldest row (the bound of the next older page; None when the page is empty)."""

    rows: list[dict[str, Any]]
    has_older: bool
    oldest_key: Any = None


def _page(rows: list[dict[str, Any]], has_older: bool) -> Page:
    return Page(rows, has_older, int(rows[0]["seq"]) if rows else None)


def filter_clauses(filters: Mapping[str, object]) -> tuple[list[str], list[Any]]:
    """SQL conditions (and their parameters) for filters on ``FILTERABLE`` columns."""
    clauses: list[str] = []
    params: list[Any] = []
    for name, value in filters.items():
        if name not in FILTERABLE:
            raise ValueError(f"cannot filter on {name!r}: one of {', '.join(FILTERABLE)}")
        if value is NULL:
            clauses.append(f"{name} IS NULL")
        elif value is not None:
            clauses.append(f"{name} = ?")
            params.append(value)
    return clauses, params


def _where(filters: Mapping[str, object], before: int | None) -> tuple[str, list[Any]]:
    clauses, params = filter_clauses(filters)
    if before is not None:
        clauses.append("seq < ?")
        params.append(before)
    return (f"WHERE {' AND '.join(clauses)}" if clauses else ""), params


def _row(names: Sequence[str], values: Sequence[Any]) -> dict[str, Any]:
    row = dict(zip(names, values, strict=True))
    for name in SCALARS:
        value = row.get(name)
        if value is not None and FIELDS[name] == "bool":
            row[name] = bool(value)
    return row


class HistoryPages:
    """Keyset pages over a history's SQLite file, on the history's own connection and lock.

    Reads the scalar columns only (never the JSON document of a row). Raises
    ``sqlite3.Error`` or ``OSError`` when the file cannot be read; the caller falls back to
    reading the history as a whole, which names the problem.
    """

    def __init__(self, history: History) -> None:
        self.history = history
        self.statements = 0  # SQL statements run, for tests and benchmarks
        self.rows_read = 0  # rows those statements returned

    def _execute(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        found = self.history.reader.execute(sql, params)
        self.statements += 1
        self.rows_read += len(found)
        return found

    def page(self, size: int, *, before: Any = None, filters: Mapping[str, object] = {}) -> Page:
        """Up to ``size`` matching rows with ``seq`` below ``before`` (None: the newest)."""
        where, params = _where(filters, before)
        names = ["seq", *SCALARS]
        found = self._execute(
            f"SELECT {', '.join(names)} FROM calls {where} ORDER BY seq DESC LIMIT ?",
            [*params, size + 1],
        )
        rows = [_row(names, values) for values in found[:size]]
        rows.reverse()
        return _page(rows, has_older=len(found) > size)

    def rows_with_ids(self, call_ids: Sequence[str]) -> list[dict[str, Any]]:
        """The rows of the given call ids (by the unique index), in the order given."""
        if not call_ids:
            return []
        names = ["seq", *SCALARS]
        marks = ", ".join("?" * len(call_ids))
        found = self._execute(
            f"SELECT {', '.join(names)} FROM calls WHERE call_id IN ({marks})", list(call_ids)
        )
        by_id = {values[1]: _row(names, values) for values in found}
        return [by_id[call_id] for call_id in call_ids if call_id in by_id]

    def values(self, column: str) -> tuple[list[str], bool]:
        """The distinct non-empty values of a filterable column, sorted, and whether some row
        leaves it empty. Each value is one seek in the column's index."""
        if column not in FILTERABLE:
            raise ValueError(f"no index on {column!r}: one of {', '.join(FILTERABLE)}")
        found: list[str] = []
        last: Any = None
        while True:
            if last is None:
                step = self._execute(
                    f"SELECT {column} FROM calls WHERE {column} IS NOT NULL "
                    f"ORDER BY {column} LIMIT 1"
                )
            else:
                step = self._execute(
                    f"SELECT {column} FROM calls WHERE {column} > ? ORDER BY {column} LIMIT 1",
                    [last],
                )
            if not step:
                break
            last = step[0][0]
            found.append(str(last))
        empty = bool(self._execute(f"SELECT 1 FROM calls WHERE {column} IS NULL LIMIT 1"))
        return sorted(found, key=str), empty

    def is_empty(self) -> bool:
        """True when the history holds no row at all."""
        return not self._execute("SELECT 1 FROM calls LIMIT 1")


class FramePages:
    """The same pages over a DataFrame of a history's rows: the fallback when rows wait
    outside SQLite (in the journal) or the file cannot be read by key."""

    def __init__(self, frame: pd.DataFrame) -> None:
        frame = frame.reset_index(drop=True)
        if "seq" not in frame.columns:
            frame.insert(0, "seq", range(1, len(frame) + 1))
        self.frame = frame

    def _matching(self, filters: Mapping[str, object]) -> pd.DataFrame:
        frame = self.frame
        mask = frame["seq"].notna()
        for name, value in filters.items():
            if value is NULL:
                mask &= frame[name].isna()
            elif value is not None:
                mask &= frame[name] == value
        return frame[mask]

    def _rows(self, frame: pd.DataFrame) -> list[dict[str, Any]]:
        columns = [name for name in ("seq", *SCALARS) if name in frame.columns]
        kept = frame[columns].astype(object)
        return [
            {name: (None if _missing(value) else value) for name, value in row.items()}
            for row in kept.to_dict("records")
        ]

    def page(self, size: int, *, before: Any = None, filters: Mapping[str, object] = {}) -> Page:
        """As ``HistoryPages.page``."""
        matching = self._matching(filters)
        if before is not None:
            matching = matching[matching["seq"] < before]
        shown = matching.iloc[max(0, len(matching) - size) :]
        return _page(self._rows(shown), has_older=len(matching) > size)

    def rows_with_ids(self, call_ids: Sequence[str]) -> list[dict[str, Any]]:
        """As ``HistoryPages.rows_with_ids``."""
        rows = self._rows(self.frame[self.frame["call_id"].isin(list(call_ids))])
        by_id = {row["call_id"]: row for row in rows}
        return [by_id[call_id] for call_id in call_ids if call_id in by_id]

    def values(self, column: str) -> tuple[list[str], bool]:
        """As ``HistoryPages.values``."""
        series = self.frame[column]
        found = sorted({str(value) for value in series.dropna().tolist()})
        return found, bool(series.isna().any())

    def is_empty(self) -> bool:
        """True when there is no row."""
        return len(self.frame) == 0


def _missing(value: Any) -> bool:
    try:
        return bool(value != value)  # NaN and NaT are the values not equal to themselves
    except (TypeError, ValueError):
        return False
