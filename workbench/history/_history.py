"""The history: every call, recorded in SQLite as it ends, readable as a pandas DataFrame.

``History`` is the facade over the store a registry writes to and a person reads: its
``writer`` commits each row in SQLite before anyone learns that the call ended (rows SQLite
will not take for now wait in this process's spill, see ``spill``; a file SQLite reports
damaged while this process holds it alone is moved aside and salvaged, see ``salvage``), and
its ``reader`` reads them back without ever failing as a whole. Every problem is a
``HistoryProblem`` in ``problems`` and a ``HistoryWarning``.

The file (``.workbench/history.sqlite`` by default) survives a kernel restart and is a plain
SQLite database any SQLite reader reads in full; ``":memory:"`` or ``None`` keeps it in this
process only.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from workbench._views import display_widget, widget_mimebundle
from workbench.history.row import FIELDS, CallRecord
from workbench.history.salvage import SalvageReport
from workbench.history.spill import Spill
from workbench.history.store import (
    SPILL_LIMIT,
    WRITE_ATTEMPTS,
    Database,
    HistoryError,
    HistoryHealth,
    HistoryReader,
    Problems,
    Then,
    Writer,
    alone,
    row_of,
)

if TYPE_CHECKING:
    import pandas as pd

    from workbench.envelope import Envelope

DEFAULT_PATH = Path(".workbench") / "history.sqlite"

COLUMNS: tuple[str, ...] = tuple(FIELDS)
"""The columns of ``rows()`` and ``to_dataframe()``, in order (the fields of ``CallRecord``)."""

BUSY_TIMEOUT_S = 1.0


class History:
    """The record of every call of a registry, in a real SQLite file (or in memory).

    Examples:
        >>> import workbench as wb
        >>> tools = wb.Registry(history=":memory:")
        >>> @tools.tool
        ... def add(a: int, b: int = 1) -> int:
        ...     '''Add two numbers.'''
        ...     return a + b
        >>> _ = tools.invoke("add", {"a": 2}).wait(), tools.invoke("add", {"b": 1}).wait()
        >>> len(tools.history), [row["status"] for row in tools.history.rows()]
        (2, ['success', 'error'])
        >>> frame = tools.history.to_dataframe()
        >>> frame.groupby("status")["tool"].count().to_dict()
        {'error': 1, 'success': 1}
        >>> tools.close()
    """

    def __init__(
        self,
        path: str | Path | None = DEFAULT_PATH,
        *,
        busy_timeout: float = BUSY_TIMEOUT_S,
        attempts: int = WRITE_ATTEMPTS,
        spill_limit: int = SPILL_LIMIT,
    ) -> None:
        self.path: str | Path = (
            ":memory:" if path is None or str(path) == ":memory:" else Path(path)
        )
        self.problems = Problems()
        self._database = Database(self.path, busy_timeout, self.problems)
        spill = None if self.in_memory else Spill(Path(self.path))
        self.writer = Writer(self._database, spill, self.problems, attempts, spill_limit)
        """Writes rows: ``write`` (durable on return) and ``append`` (never waits)."""
        self.reader = HistoryReader(self._database, self.writer, self.problems)
        """Reads the rows back: whole, by SQL over the stored columns, or in batches."""

    # ── where it lives ───────────────────────────────────────────────────────────────────
    @property
    def in_memory(self) -> bool:
        """True for a history kept in this process only."""
        return str(self.path) == ":memory:"

    @property
    def directory(self) -> Path | None:
        """The directory of the history file (where artifacts go by default)."""
        return None if self.in_memory else Path(self.path).parent

    @property
    def spill_path(self) -> Path | None:
        """This process's spill file, where rows SQLite would not take wait (None until
        there has been one)."""
        spill = self.writer.spill
        return None if spill is None else spill.path

    @property
    def moved_aside(self) -> list[Path]:
        """Damaged files moved aside (byte for byte) for the person, oldest first."""
        return self._database.moved_aside

    def health(self) -> HistoryHealth:
        """Whether the history is writing normally, and what went wrong if not."""
        waiting = self.reader.waiting
        return HistoryHealth(
            path=str(self.path),
            ok=not self.problems and waiting == 0,
            problems=len(self.problems),
            held_rows=waiting,
            moved_aside=tuple(path.name for path in self.moved_aside),
            last_problem=self.problems[-1].message if self.problems else None,
        )

    @classmethod
    def salvage(cls, path: str | Path) -> SalvageReport:
        """Rebuild the history file at ``path`` from every row that can still be read in it,
        damaged or not, as opening a damaged history does: the original is moved aside byte
        for byte, a new file is started at ``path``, and each row copied into it says it was
        salvaged (and what was wrong with it). The report says how many rows were kept and
        lost, and where the original lies. Raises ``FileNotFoundError`` if there is no file,
        and ``HistoryError`` (nothing moved) while another process has it open.
        """
        path = Path(path)
        if not path.is_file():
            raise FileNotFoundError(f"there is no history file at {path}")
        history = cls(path)
        database = history._database
        try:
            with database.lock, alone(path) as held:
                if held is None:
                    raise HistoryError(
                        f"{path.name} is open in another process (or another history of this "
                        "one); close it there first: nothing was moved"
                    )
                return database.salvage(database.set_aside())
        finally:
            history.close()

    # ── writing ──────────────────────────────────────────────────────────────────────────
    def write(self, records: Sequence[CallRecord]) -> str | None:
        """Commit ``records`` on the caller's thread, in one transaction with whatever others
        write at the same moment, and return once they are durable: None, or the sentence
        naming what went wrong and where the rows are held (SQLite will take them later).
        For a call's end, and a bulk writer (an import) that holds many rows at once."""
        pending = [row_of(record) for record in records]
        self.writer.write(pending)
        said = [item.outcome for item in pending if item.outcome is not None]
        return "; ".join(dict.fromkeys(said)) or None

    def append(self, record: CallRecord, then: Then | None = None) -> None:
        """Hand one ended call's row over and return at once: committed now if SQLite takes
        it without waiting, else behind the calls. ``then(problem)`` runs once the row is
        durable (perhaps before ``append`` returns), never before: ``problem`` is None, or the
        sentence naming what went wrong and where the row is held."""
        self.writer.append([row_of(record, then)])

    def append_all(self, rows: Sequence[tuple[CallRecord, Then | None]]) -> None:
        """``append`` of many rows at once (the calls that ended together), committed in one
        transaction when SQLite takes them without waiting."""
        self.writer.append([row_of(record, then) for record, then in rows])

    def record(self, row: CallRecord | Mapping[str, Any] | Callable[[], Any]) -> str | None:
        """Store one ended call and return once it is durable: None, or the sentence naming
        what went wrong and where the row is held."""
        return self.writer.record(row)

    def add_warning(self, call_id: str, warning: str) -> None:
        """Append a warning to a recorded call (a late result that was discarded, an edited
        receipt): the same row, updated."""
        self.writer.add_warning(call_id, warning)

    def flush(self) -> None:
        """Wait until every row handed over is durable (committed, or held)."""
        self.writer.flush()

    def clear(self) -> None:
        """Forget every recorded call, for every reader of the file. Waits for another
        process's write lock (up to 30 s); raises ``HistoryError``, nothing deleted, past it."""
        self.writer.clear()

    # ── reading ──────────────────────────────────────────────────────────────────────────
    def rows(self) -> list[dict[str, Any]]:
        """Every recorded call, oldest first, with the fields of ``CallRecord``.

        A row whose stored document cannot be read keeps its columns and is named in
        ``problems``; it never stops the others from being read.
        """
        return self.reader.rows()

    def records(self) -> list[CallRecord]:
        """Every recorded call as a ``CallRecord``, oldest first."""
        return self.reader.records()

    def get(self, call_id: str) -> dict[str, Any] | None:
        """One recorded call by workbench's id (or, failing that, the latest call a model sent
        with that id)."""
        return self.reader.get(call_id)

    def envelopes(self) -> list[Envelope]:
        """The canonical envelopes of every recorded call, oldest first. An imported call the
        run never answered (it ended, or the call was its last) stands as an empty text result,
        which is what the model had of it. Any other row without a readable canonical record is
        left out and named in ``problems``."""
        return self.reader.envelopes()

    def __iter__(self) -> Iterator[dict[str, Any]]:
        return iter(self.rows())

    def __len__(self) -> int:
        return self.reader.count()

    def to_dataframe(self, *, tokens: str | None = "openai") -> pd.DataFrame:
        """One row per call, the columns of ``CallRecord`` (times as UTC datetimes), and after
        ``receipt_chars`` the receipt's ``receipt_tokens`` as a model of the family ``tokens``
        counts them (``wb.tokens.count_tokens``; ``frame.attrs["receipt_tokens"]`` says by
        what, and whether it is an estimate). ``tokens=None`` leaves the column out."""
        import pandas as pd

        frame = pd.DataFrame(self.rows(), columns=list(COLUMNS))
        for name in ("queued_at", "started_at", "ended_at"):
            frame[name] = pd.to_datetime(frame[name], unit="s", utc=True, errors="coerce")
        if tokens is not None:
            from workbench.tokens import TokenCounter

            counter = TokenCounter(tokens)
            counted = [counter(receipt or "") for receipt in frame["receipt"]]
            frame.insert(list(frame.columns).index("receipt_chars") + 1, "receipt_tokens", counted)
            frame.attrs["receipt_tokens"] = counter.describe(sum(counted))
        return frame

    def sql(self, query: str, *, memory_limit: str | None = None) -> pd.DataFrame:
        """Run DuckDB SQL over the table ``calls`` (``seq``, the scalar columns of
        ``CallRecord``, and the row's JSON document ``record``) and return the answer as a
        DataFrame. Only the columns the query names are streamed from SQLite into DuckDB,
        which spills to disk past ``memory_limit``. Needs the ``study`` extra; a bad query
        raises ``workbench.study.QueryError``."""
        from workbench.history._sql import history_sql  # DuckDB and pyarrow, when asked for

        return history_sql(self, query, memory_limit=memory_limit)

    # ── ending ───────────────────────────────────────────────────────────────────────────
    def close(self) -> None:
        """Write what is pending and close the file; no thread of the history's is left. Rows
        SQLite still will not take stay in the spill for the next process to open it. A
        checkpoint under way is waited for first: its connection open past ours would leave
        the WAL beside the file, which SQLite folds in and removes only as the last connection
        closes."""
        self.writer.close()
        self._database.wait_for_checkpoint()
        with self._database.lock:
            self._database.drop()

    def __repr__(self) -> str:
        return f"History({str(self.path)!r})"

    def _repr_mimebundle_(self, **kwargs: Any) -> dict[str, Any]:
        return widget_mimebundle("history", self, {"text/plain": repr(self)}, **kwargs)

    def _ipython_display_(self) -> None:
        display_widget("history", self, lambda: {"text/plain": repr(self)})
