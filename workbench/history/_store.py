"""The history: every call, recorded in SQLite as it ends, readable as a pandas DataFrame.

``History`` is the store a registry writes to and a person reads: a ``Writer`` commits each
row before anyone learns that the call ended (a write that fails is journaled beside the file
and replayed; a file SQLite cannot read is moved aside and salvaged, see ``_database``), and a
``HistoryReader`` reads them back without ever failing as a whole. Every problem is a
``HistoryProblem`` in ``problems`` and a ``HistoryWarning``.

The file (``.workbench/history.sqlite`` by default) survives a kernel restart; ``":memory:"``
or ``None`` keeps it in this process only.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from workbench._views import display_widget, widget_mimebundle
from workbench.history import _log
from workbench.history._database import Database
from workbench.history._journal import Journal
from workbench.history._problems import HistoryHealth, Problems
from workbench.history._reader import HistoryReader
from workbench.history._record import FIELDS, CallRecord
from workbench.history._salvage import SalvageReport
from workbench.history._writer import WRITE_ATTEMPTS, Then, Writer

if TYPE_CHECKING:
    import pandas as pd

    from workbench.envelope import Envelope

DEFAULT_PATH = Path(".workbench") / "history.sqlite"

COLUMNS: tuple[str, ...] = tuple(FIELDS)
"""The columns of ``rows()`` and ``to_dataframe()``, in order (the fields of ``CallRecord``)."""

BUSY_TIMEOUT_S = 1.0


class History:
    """The record of every call of a registry, in a real SQLite file (or in memory)."""

    def __init__(
        self,
        path: str | Path | None = DEFAULT_PATH,
        *,
        busy_timeout: float = BUSY_TIMEOUT_S,
        attempts: int = WRITE_ATTEMPTS,
    ) -> None:
        self.path: str | Path = (
            ":memory:" if path is None or str(path) == ":memory:" else Path(path)
        )
        self.problems = Problems()
        self._journal = None if self.in_memory else Journal(Path(self.path))
        log = None if self.in_memory or not _log.ENABLED else _log.CommitLog(Path(self.path))
        self._database = Database(self.path, busy_timeout, self.problems, self._journal, log)
        self._writer = Writer(self._database, self._journal, self.problems, attempts, log)
        self.reader = HistoryReader(self._database, self._writer, self.problems)
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
    def journal_path(self) -> Path | None:
        """The journal file beside the database (None in memory)."""
        return None if self._journal is None else self._journal.path

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
            journaled_rows=waiting,
            moved_aside=tuple(path.name for path in self.moved_aside),
            last_problem=self.problems[-1].message if self.problems else None,
        )

    @classmethod
    def salvage(cls, path: str | Path) -> SalvageReport:
        """Rebuild the history file at ``path`` from every row that can still be read in it,
        damaged or not, as opening a damaged history does: the original is moved aside byte
        for byte, a new file is started at ``path``, and each row copied into it says it was
        salvaged (and what was wrong with it). The report says how many rows were kept and
        lost, and where the original lies. Raises ``FileNotFoundError`` if there is no file.
        """
        path = Path(path)
        if not path.is_file():
            raise FileNotFoundError(f"there is no history file at {path}")
        history = cls(path)
        database = history._database
        try:
            with database.lock:
                return database.salvage(database.set_aside())
        finally:
            history.close()

    # ── writing ──────────────────────────────────────────────────────────────────────────
    def append(self, record: CallRecord, then: Then | None = None) -> None:
        """Queue one ended call's row and return at once.

        The row is encoded here (on the caller's thread; never raises). Once the transaction
        holding it is committed, or, if writing failed after retries, once it is fsync'd in the
        journal, ``then(problem)`` runs on the writer thread: ``problem`` is None, or a sentence
        naming what went wrong and where the row was kept. ``then`` never runs before that.
        """
        self._writer.append(record, then)

    def write_now(self, records: Sequence[CallRecord]) -> str | None:
        """Encode ``records`` and commit them on the caller's thread in one transaction, after
        whatever is queued; on failure they are retried and journaled exactly as ``append``'s
        rows are. Returns None, or the sentence naming what went wrong and where the rows were
        kept. For a bulk writer (an import) that holds many rows at once."""
        return self._writer.write_now(records)

    def commit_now(self, records: Sequence[tuple[CallRecord, Then | None]]) -> bool:
        """Commit ``records`` on the caller's thread if that can be done at once: appended to
        the commit log beside the file (SQLite is filled from it behind the calls), or, for a
        history in memory or when the log refuses, committed to SQLite if nothing is queued,
        no write is under way, no fault outstanding and the database lock free (no waiting for
        it). True once they are committed and every ``then(None)`` ran; False when nothing was
        written, and the caller hands them to ``append`` (which retries and journals)."""
        return self._writer.commit_now(records)

    def record(self, row: CallRecord | Mapping[str, Any] | Callable[[], Any]) -> str | None:
        """Store one ended call and return once it is durable (in SQLite or in the journal):
        None, or the sentence naming what went wrong and where the row was kept. From the
        writer thread itself (a ``then`` callback) it only queues."""
        return self._writer.record(row)

    def add_warning(self, call_id: str, warning: str) -> None:
        """Append a warning to a recorded call (e.g. a late result that was discarded)."""
        self._writer.add_warning(call_id, warning)

    def flush(self) -> None:
        """Wait until every queued row is committed (or journaled)."""
        self._writer.flush()

    def clear(self) -> None:
        """Forget every recorded call."""
        self._writer.clear()

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

    def to_dataframe(self) -> pd.DataFrame:
        """One row per call, the columns of ``CallRecord`` (times as UTC datetimes)."""
        import pandas as pd

        frame = pd.DataFrame(self.rows(), columns=list(COLUMNS))
        for name in ("queued_at", "started_at", "ended_at"):
            frame[name] = pd.to_datetime(frame[name], unit="s", utc=True, errors="coerce")
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
        """Write what is pending and close the file. A checkpoint under way is waited for
        first: its connection open past ours would leave the WAL beside the file, which
        SQLite folds in and removes only as the last connection closes."""
        self._writer.flush()
        self._database.wait_for_checkpoint()
        with self._database.lock:
            self._writer.retry_unsaved()
            self._writer.close_log()
            self._database.drop()

    def __repr__(self) -> str:
        return f"History({str(self.path)!r})"

    def _repr_mimebundle_(self, **kwargs: Any) -> dict[str, Any]:
        return widget_mimebundle("history", self, {"text/plain": repr(self)}, **kwargs)

    def _ipython_display_(self) -> None:
        display_widget("history", self, lambda: {"text/plain": repr(self)})
