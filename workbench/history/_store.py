"""The history: every call, recorded in SQLite as it ends, readable as a pandas DataFrame.

Nothing is lost. ``append`` hands a row to the one writer thread, which commits whatever
accumulated while its previous commit ran (group commit, no waiting for a batch to fill) and
only then tells the caller, through ``then``, that the row is durable. A write that still fails
after retries goes to an fsync'd journal beside the file (``_journal.py``) that the next open
replays; a file SQLite cannot read is moved aside for the person and a new one is started
with every row still readable in it (``_salvage.py``).
Every such event is a ``HistoryProblem`` in ``problems`` and a ``HistoryWarning``.

Reading never fails as a whole: a row that cannot be decoded is returned as far as it can be
(or left out where a whole envelope is needed) and named in ``problems``.

The file (``.workbench/history.sqlite`` by default) survives a kernel restart; ``":memory:"``
or ``None`` keeps it in this process only.
"""

from __future__ import annotations

import atexit
import contextlib
import dataclasses
import functools
import json
import math
import operator
import os
import queue
import secrets
import sqlite3
import threading
import time
import warnings
import weakref
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from workbench._views import display_widget, widget_mimebundle
from workbench.envelope import Envelope
from workbench.history._journal import Journal
from workbench.history._pages import ensure_indexes
from workbench.history._record import DETAIL, FIELDS, SCALARS, CallRecord, clean_text, plain_json
from workbench.history._salvage import CHANGED, SalvageReport, check, picker, salvage_into, seal

if TYPE_CHECKING:
    import pandas as pd

DEFAULT_PATH = Path(".workbench") / "history.sqlite"

COLUMNS: tuple[str, ...] = tuple(FIELDS)
"""The columns of ``rows()`` and ``to_dataframe()``, in order (the fields of ``CallRecord``)."""

BUSY_TIMEOUT_S = 1.0
WRITE_ATTEMPTS = 3
RETRY_PAUSES_S = (0.05, 0.25)

_STORED = (*SCALARS, "record")
_KINDS = {name: FIELDS[name] for name in SCALARS}
_KIND_LIST = list(_KINDS.values())
_INSERT = (
    f"INSERT OR REPLACE INTO calls ({', '.join(_STORED)}) VALUES ({', '.join('?' * len(_STORED))})"
)
_REPLAY = (
    f"INSERT OR IGNORE INTO calls ({', '.join(_STORED)}) VALUES ({', '.join('?' * len(_STORED))})"
)
_SELECT = f"SELECT seq, {', '.join(_STORED)} FROM calls"
_SQL_TYPES = {"text": "TEXT", "bool": "INTEGER", "real": "REAL", "integer": "INTEGER"}
_SCHEMA = f"""
CREATE TABLE IF NOT EXISTS calls (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    {", ".join("call_id TEXT UNIQUE" if name == "call_id" else name for name in SCALARS)},
    record TEXT
)
"""
# SQLite result codes (the primary code, the low byte) that mean the file itself is unusable.
_CORRUPT_CODES = {11, 26}  # SQLITE_CORRUPT, SQLITE_NOTADB
_BUSY_CODES = {5, 6}  # SQLITE_BUSY, SQLITE_LOCKED

ProblemKind = Literal["write", "journal", "corrupt", "replay", "decode", "callback"]
Then = Callable[[str | None], None]


class HistoryWarning(RuntimeWarning):
    """Something went wrong with the history; the sentence says where the rows went."""


@dataclasses.dataclass(frozen=True)
class HistoryProblem:
    """One thing that went wrong: when, what kind, the sentence a person reads, and the calls
    it touched."""

    at: float
    kind: ProblemKind
    message: str
    call_ids: tuple[str, ...] = ()
    salvage: SalvageReport | None = None
    """For a damaged file: how many rows were kept and lost, and where the original lies."""


@dataclasses.dataclass(frozen=True)
class HistoryHealth:
    """A small summary of the history's state for a status line."""

    path: str
    ok: bool
    problems: int
    journaled_rows: int
    moved_aside: tuple[str, ...]
    last_problem: str | None

    def __str__(self) -> str:
        if self.ok:
            return f"history {self.path}: ok"
        return (
            f"history {self.path}: {self.problems} problem(s), {self.journaled_rows} row(s) "
            f"waiting in the journal; last: {self.last_problem}"
        )


@dataclasses.dataclass(slots=True)
class _Pending:
    call_id: str
    values: list[Any]
    then: Then | None


@dataclasses.dataclass(slots=True)
class _Job:
    run: Callable[[sqlite3.Connection], object]
    what: str


@dataclasses.dataclass(slots=True)
class _Marker:
    done: threading.Event


_Item = _Pending | _Job | _Marker

CHECKPOINT_ROWS = 256
"""Rows committed between two checkpoints of the WAL (SQLite's own default is about as often,
but runs them, fsync included, inside whichever commit crosses the line, and a call waits)."""


_SCALAR_VALUES = operator.attrgetter(*SCALARS)
_DETAIL_VALUES = operator.attrgetter(*DETAIL)


def encode(record: CallRecord) -> list[Any]:
    """The stored values of one record (its scalar columns, then its JSON document).

    Never raises: a value JSON or UTF-8 cannot hold is stored in a clear, bounded form and
    named in the record's warnings (see ``plain_json``).
    """
    problems: list[str] = []
    values: list[Any] = list(_SCALAR_VALUES(record))
    if not _stored_as_they_are(values):
        _clean_scalars(values, problems)
    detail = dict(zip(DETAIL, _DETAIL_VALUES(record), strict=True))
    detail["wire"] = None  # derived from "canonical" when read, exactly as the call derived it
    document = plain_json(detail, problems, "record")
    if problems:
        # Rare path: re-encode field by field so each warning names its field.
        problems = [p for p in problems if not p.startswith("record:")]
        parts = []
        for name, value in detail.items():
            if name == "warnings":
                continue
            parts.append(f"{json.dumps(name)}: {plain_json(value, problems, name)}")
        kept = [*_strings(record.warnings), *problems]
        parts.append(f'"warnings": {plain_json(kept, [], "warnings")}')
        document = "{" + ", ".join(parts) + "}"
    values.append(seal(_KIND_LIST, values, document))
    return values


def _stored_as_they_are(values: list[Any]) -> bool:
    """True when every value goes into its column unchanged (the common case, decided with
    one look at the row's types): empty, whole numbers, ASCII text, finite reals."""
    texts = _texts_and_reals(tuple(map(type, values)))
    if texts is None:
        return False
    strings, reals = texts
    return "".join(strings(values)).isascii() and all(map(math.isfinite, reals(values)))


@functools.lru_cache(maxsize=256)
def _texts_and_reals(
    types: tuple[type, ...],
) -> tuple[Callable[[list[Any]], Sequence[Any]], Callable[[list[Any]], Sequence[Any]]] | None:
    """For rows with these value types: functions that pick their texts and their reals, or
    None when some value is of another type."""
    if not set(types) <= {type(None), int, bool, str, float}:
        return None
    return (
        picker([index for index, kind in enumerate(types) if kind is str]),
        picker([index for index, kind in enumerate(types) if kind is float]),
    )


def _clean_scalars(values: list[Any], problems: list[str]) -> None:
    """Each value in a form its column keeps; what was changed is named in ``problems``."""
    for index, value in enumerate(values):
        kind = type(value)
        # Stored as they are, decided first: the common cases (no surrogate hides in ASCII).
        if value is None or kind is int or kind is bool or (kind is str and value.isascii()):
            continue
        name = SCALARS[index]
        if isinstance(value, str):
            value = clean_text(value, problems, name)
        elif not isinstance(value, int | float):
            problems.append(f"{name}: a {type(value).__name__} stored as text")
            value = clean_text(str(value), problems, name)
        elif isinstance(value, float) and not math.isfinite(value):
            value = None
        values[index] = value


def _keyed(record: CallRecord) -> tuple[str, list[Any]]:
    """The row's key and stored values; a record without an id gets one, so it can never
    replace another row."""
    if not record.call_id:
        record = dataclasses.replace(record, call_id=f"row_{secrets.token_hex(8)}")
    return record.call_id, encode(record)


def _strings(value: Any) -> list[str]:
    if not isinstance(value, list | tuple):
        return [] if value is None else [str(value)]
    return [item if isinstance(item, str) else repr(item) for item in value]


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
        self.busy_timeout = busy_timeout
        self.attempts = max(1, attempts)
        self.problems: list[HistoryProblem] = []
        self.moved_aside: list[Path] = []
        self._journal = None if self.in_memory else Journal(Path(self.path))
        self._lock = threading.RLock()
        self._start_lock = threading.Lock()
        self._conn: sqlite3.Connection | None = None
        self._jobs: queue.SimpleQueue[_Item] = queue.SimpleQueue()
        self._writer: threading.Thread | None = None
        self._unsaved: list[_Pending] = []  # rows no disk would take; retried with every batch
        self._impatient = False  # the connection gives up at once on a lock (commit_now)
        self._since_checkpoint = 0
        self._checkpointing = False
        self._checkpointer: threading.Thread | None = None
        self._degraded = False
        self._decode_named: set[str] = set()
        _OPEN.add(self)

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

    # ── problems ─────────────────────────────────────────────────────────────────────────
    def _problem(
        self,
        kind: ProblemKind,
        message: str,
        call_ids: tuple[str, ...] = (),
        salvage: SalvageReport | None = None,
    ) -> str:
        self.problems.append(HistoryProblem(time.time(), kind, message, call_ids, salvage))
        warnings.warn(message, HistoryWarning, stacklevel=3)
        return message

    def health(self) -> HistoryHealth:
        """Whether the history is writing normally, and what went wrong if not."""
        journaled = 0
        if self._journal is not None and self._journal.exists():
            journaled = len(self._journal.read()[0])
        return HistoryHealth(
            path=str(self.path),
            ok=not self.problems and journaled == 0 and not self._unsaved,
            problems=len(self.problems),
            journaled_rows=journaled + len(self._unsaved),
            moved_aside=tuple(path.name for path in self.moved_aside),
            last_problem=self.problems[-1].message if self.problems else None,
        )

    # ── the file ─────────────────────────────────────────────────────────────────────────
    def _connection(self) -> sqlite3.Connection:
        if self._impatient and self._conn is not None:
            self._conn.execute(f"PRAGMA busy_timeout = {int(self.busy_timeout * 1000)}")
            self._impatient = False
        if self._conn is None:
            if not self.in_memory:
                Path(self.path).parent.mkdir(parents=True, exist_ok=True)
            conn = sqlite3.connect(
                str(self.path), check_same_thread=False, timeout=self.busy_timeout
            )
            try:
                conn.execute("PRAGMA journal_mode=WAL")
                # WAL with synchronous=NORMAL: a commit survives the process being killed (the
                # pages are in the OS before COMMIT returns), and needs no fsync per commit.
                conn.execute("PRAGMA synchronous=NORMAL")
                # Checkpoints run on a thread of their own (CHECKPOINT_ROWS), not in a commit.
                conn.execute("PRAGMA wal_autocheckpoint=0")
                conn.executescript(_SCHEMA)
                _migrate(conn)
                ensure_indexes(conn)
            except BaseException:
                conn.close()
                raise
            self._conn = conn
            self._replay(conn)
        return self._conn

    def _drop_connection(self) -> None:
        self._impatient = False
        if self._conn is not None:
            with contextlib.suppress(sqlite3.Error):  # closing a broken handle; it is discarded
                self._conn.close()
            self._conn = None

    def _replay(self, conn: sqlite3.Connection) -> None:
        journal = self._journal
        if journal is None or not journal.exists():
            return
        rows, unreadable = journal.read()
        for sentence in unreadable:
            self._problem("replay", f"history journal: {sentence}")
        values = [[row.get(name) for name in _STORED] for row in rows]
        try:
            with conn:
                conn.executemany(_REPLAY, values)
        except sqlite3.Error as exc:
            if getattr(exc, "sqlite_errorcode", 0) & 0xFF in _BUSY_CODES:
                return  # still locked: the rows wait in the journal, counted by health()
            self._problem(
                "replay",
                f"replaying {len(rows)} journaled row(s) failed ({exc}); they stay in "
                f"{journal.path.name} for the next open",
            )
            return
        journal.remove()

    def _is_corrupt(self, exc: BaseException) -> bool:
        code = getattr(exc, "sqlite_errorcode", None)
        return (
            not self.in_memory
            and isinstance(exc, sqlite3.DatabaseError)
            and code is not None
            and code & 0xFF in _CORRUPT_CODES
        )

    def _move_aside(self, exc: BaseException) -> None:
        """Keep an unreadable file for the person, start a new one, and copy over every row
        that can still be read from the old."""
        path = Path(self.path)
        report = self._salvage(self._set_aside())
        self._problem(
            "corrupt",
            f"{path.name} could not be read by SQLite ({exc}); a new history was started and "
            f"{report}",
            salvage=report,
        )

    def _set_aside(self) -> Path:
        """Move the file (and its WAL) aside byte for byte; returns where it now lies."""
        self._drop_connection()
        path = Path(self.path)
        stamp = time.strftime("%Y%m%d-%H%M%S")
        aside = path.with_name(f"{path.name}.unreadable-{stamp}")
        counter = 1
        while aside.exists():
            counter += 1
            aside = path.with_name(f"{path.name}.unreadable-{stamp}-{counter}")
        path.replace(aside)
        for suffix in ("-wal", "-shm"):
            sidecar = path.with_name(path.name + suffix)
            if sidecar.exists():
                sidecar.replace(aside.with_name(aside.name + suffix))
        self.moved_aside.append(aside)
        return aside

    def _salvage(self, aside: Path) -> SalvageReport:
        """Copy every row still readable in ``aside``, page by page, into a new file here."""
        return salvage_into(
            aside,
            self._connection(),
            stored=_STORED,
            kinds=_KINDS,
            insert=_REPLAY,
            new_path=Path(self.path),
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
        try:
            with history._lock:
                return history._salvage(history._set_aside())
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
        self._submit(_Pending(*_keyed(record), then))

    def write_now(self, records: Sequence[CallRecord]) -> str | None:
        """Encode ``records`` and commit them on the caller's thread in one transaction (one
        ``executemany``), after whatever is queued; on failure they are retried and journaled
        exactly as ``append``'s rows are. Returns None, or the sentence naming what went wrong
        and where the rows were kept.

        For a bulk writer (an import) that holds many rows at once: no thread hop per batch."""
        pending = [_Pending(*_keyed(record), None) for record in records]
        self.flush()  # rows queued before these are committed first, in order
        return self._commit(pending)

    def commit_now(self, records: Sequence[tuple[CallRecord, Then | None]]) -> bool:
        """Commit ``records`` on the caller's thread if that can be done at once: nothing
        queued, no write under way, no fault outstanding and the database lock free (no waiting
        for it). True once they are committed and every ``then(None)`` ran; False when nothing
        was written, and the caller hands them to ``append`` (which retries and journals).

        The runtime commits the calls that end in one pass of its loop this way, saving the two
        thread hops to the writer and back.
        """
        if self._degraded or self._unsaved or not self._jobs.empty():
            return False
        if not self._lock.acquire(blocking=False):
            return False
        try:
            pending = [_Pending(*_keyed(record), then) for record, then in records]
            try:
                conn = self._conn if self._conn is not None else self._connection()
                if not self._impatient:
                    # Set once and kept for the next commit_now; any other use of the
                    # connection (``_connection``) waits for the lock again.
                    conn.execute("PRAGMA busy_timeout = 0")
                    self._impatient = True
                with conn:
                    conn.executemany(_INSERT, [row.values for row in pending])
            except Exception:  # nothing was committed; append() retries and reports it
                self._drop_connection()
                return False
            self._committed(len(pending))
        finally:
            self._lock.release()
        for row in pending:
            if row.then is not None:
                try:
                    row.then(None)
                except Exception as exc:
                    self._problem("callback", f"a history callback failed: {exc!r}", (row.call_id,))
        return True

    def record(self, row: CallRecord | Mapping[str, Any] | Callable[[], Any]) -> str | None:
        """Store one ended call and return once it is durable (in SQLite or in the journal):
        None, or the sentence naming what went wrong and where the row was kept.

        A compatibility form of ``append`` that waits; from the writer thread itself (a
        ``then`` callback) it only queues.
        """
        try:
            data = row() if callable(row) else row
            record = data if isinstance(data, CallRecord) else CallRecord.from_mapping(data)
        except Exception as exc:  # a broken row builder must never stop a call from ending
            record = CallRecord(warnings=[f"the history row could not be built: {exc!r}"])
        if threading.current_thread() is self._writer:
            self.append(record)
            return None
        if self._jobs.empty() and self._lock.acquire(blocking=False):
            # Nothing queued and no write under way: committing here saves two thread hops.
            try:
                return self._commit([_Pending(*_keyed(record), None)])
            finally:
                self._lock.release()
        durable = threading.Event()
        problems: list[str | None] = []

        def then(problem: str | None) -> None:
            problems.append(problem)
            durable.set()

        self.append(record, then)
        durable.wait()
        return problems[0]

    def add_warning(self, call_id: str, warning: str) -> None:
        """Append a warning to a recorded call (e.g. a late result that was discarded)."""

        def job(conn: sqlite3.Connection) -> None:
            found = conn.execute(
                f"SELECT {', '.join(_STORED)} FROM calls WHERE call_id = ?", (call_id,)
            )
            current = found.fetchone()
            if current is None:
                return
            record = json.loads(current[-1]) if current[-1] else {}
            record.pop("check", None)  # sealed again below, over the new document
            record["warnings"] = [*(record.get("warnings") or []), warning]
            document = seal(_KIND_LIST, current[:-1], plain_json(record, []))
            with conn:
                conn.execute("UPDATE calls SET record = ? WHERE call_id = ?", (document, call_id))

        self._submit(_Job(job, f"adding a warning to {call_id}"))

    def _submit(self, item: _Item) -> None:
        writer = self._writer
        if writer is None or not writer.is_alive():
            # Not self._lock: the writer holds that while it writes, and a call must not wait.
            with self._start_lock:
                if self._writer is None or not self._writer.is_alive():
                    self._writer = threading.Thread(
                        target=self._write_loop, name="workbench-history", daemon=True
                    )
                    self._writer.start()
        self._jobs.put(item)

    def _write_loop(self) -> None:
        while True:
            batch = [self._jobs.get()]
            # Group commit: whatever arrived while the previous commit ran goes in together.
            while True:
                try:
                    batch.append(self._jobs.get_nowait())
                except queue.Empty:
                    break
            self._write_batch(batch)

    def _write_batch(self, batch: list[_Item]) -> None:
        rows: list[_Pending] = []
        for item in batch:
            if isinstance(item, _Pending):
                rows.append(item)
                continue
            self._commit(rows)
            rows = []
            if isinstance(item, _Job):
                self._run_job(item)
            else:
                item.done.set()
        self._commit(rows)

    def _commit(self, rows: list[_Pending]) -> str | None:
        if not rows and not self._unsaved:
            return None  # nothing to write: leave the lock to commit_now
        with self._lock:
            rows = [*self._unsaved, *rows]
            self._unsaved = []
            if not rows:
                return None
            problem = self._write_rows(rows)
        for row in rows:
            if row.then is None:
                continue
            try:
                row.then(problem)
            except Exception as exc:
                self._problem("callback", f"a history callback failed: {exc!r}", (row.call_id,))
        return problem

    def _write_rows(self, rows: list[_Pending]) -> str | None:
        """Commit ``rows``; on failure journal them. Returns None, or the sentence saying what
        went wrong and where the rows are."""
        failure: BaseException | None = None
        attempt = moves = 0
        # Once a write has failed, later ones try once each until one succeeds: a fault that
        # lasts (a read-only disk) must not cost every call the full round of retries.
        attempts = 1 if self._degraded else self.attempts
        while attempt < attempts:
            with self._lock:
                try:
                    conn = self._connection()
                    with conn:
                        conn.executemany(_INSERT, [row.values for row in rows])
                except Exception as exc:  # whatever it is, the rows go to the journal below
                    failure = exc
                    if self._is_corrupt(exc) and moves < 2:
                        moves += 1
                        try:
                            self._move_aside(exc)
                        except (sqlite3.Error, OSError) as aside_failure:
                            failure = aside_failure
                        else:
                            continue  # a fresh file: try again at once
                    self._drop_connection()
                else:
                    self._degraded = False
                    self._committed(len(rows))
                    return None
            attempt += 1
            if attempt < attempts:
                time.sleep(RETRY_PAUSES_S[min(attempt - 1, len(RETRY_PAUSES_S) - 1)])
        self._degraded = True
        return self._keep_elsewhere(rows, failure)

    def _diagnose(self, failure: BaseException | None) -> str:
        reason = _reason(failure)
        directory = self.directory
        if directory is not None and directory.exists() and not os.access(directory, os.W_OK):
            reason += f"; {directory.name or directory} is read-only"
        return reason

    def _keep_elsewhere(self, rows: list[_Pending], failure: BaseException | None) -> str:
        ids = tuple(row.call_id for row in rows)
        reason = self._diagnose(failure)
        if self._journal is None:
            self._unsaved = _quiet(rows)
            return self._problem(
                "write", f"history write failed ({reason}); the row is held in memory", ids
            )
        try:
            where = self._journal.append(
                [dict(zip(_STORED, row.values, strict=True)) for row in rows]
            )
        except OSError as exc:
            self._unsaved = _quiet(rows)
            return self._problem(
                "journal",
                f"history write failed ({reason}) and the journal could not be written "
                f"({_reason(exc)}); {len(rows)} row(s) are held in memory and retried with the "
                "next write",
                ids,
            )
        return self._problem(
            "write",
            f"history write failed ({reason}); the row was kept in "
            f"{where.name if where == self._journal.path else where} and will be replayed",
            ids,
        )

    def _committed(self, rows: int) -> None:
        if self.in_memory:
            return
        self._since_checkpoint += rows
        if self._since_checkpoint >= CHECKPOINT_ROWS and not self._checkpointing:
            self._since_checkpoint = 0
            self._checkpointing = True
            self._checkpointer = threading.Thread(
                target=self._checkpoint, name="workbench-history-checkpoint", daemon=True
            )
            self._checkpointer.start()

    def _checkpoint(self) -> None:
        """A passive checkpoint on a connection and thread of its own: commits (and the
        writer's queue, which ``commit_now`` checks) go on meanwhile."""
        try:
            uri = Path(self.path).resolve().as_uri() + "?mode=rw"  # never creates a file
            with contextlib.closing(sqlite3.connect(uri, uri=True, timeout=0)) as conn:
                conn.execute("PRAGMA wal_checkpoint(PASSIVE)")
        except sqlite3.Error:
            # Nothing is at stake: the rows are committed in the WAL, which the next checkpoint
            # (or closing the history) folds into the file.
            return
        finally:
            self._checkpointing = False

    def _run_job(self, job: _Job) -> None:
        with self._lock:
            try:
                job.run(self._connection())
            except (sqlite3.Error, OSError, ValueError) as exc:
                self._drop_connection()
                self._problem("write", f"history: {job.what} failed ({_reason(exc)})")

    def flush(self) -> None:
        """Wait until every queued row is committed (or journaled)."""
        writer = self._writer
        if writer is None or not writer.is_alive() or threading.current_thread() is writer:
            return
        marker = _Marker(threading.Event())
        self._jobs.put(marker)
        marker.done.wait()

    # ── reading ──────────────────────────────────────────────────────────────────────────
    def _stored_rows(self, where: str = "", params: tuple[Any, ...] = ()) -> list[dict[str, Any]]:
        self.flush()
        found: list[dict[str, Any]] = []
        with self._lock:
            try:
                found = _fetch(self._connection(), f"{_SELECT} {where} ORDER BY seq", params)
            except (sqlite3.Error, OSError) as exc:
                if self._is_corrupt(exc):
                    try:
                        self._move_aside(exc)
                        return self._stored_rows(where, params)
                    except (sqlite3.Error, OSError) as again:
                        exc = again
                self._drop_connection()
                found = self._read_only_rows(where, params, exc)
        return found + self._waiting_rows(found)

    def _read_only_rows(
        self, where: str, params: tuple[Any, ...], failure: BaseException
    ) -> list[dict[str, Any]]:
        """Read a file that cannot be opened for writing (a read-only directory or disk)."""
        if not self.in_memory and Path(self.path).exists():
            try:
                uri = _read_only_uri(Path(self.path)) + "&immutable=1"
                with contextlib.closing(sqlite3.connect(uri, uri=True)) as conn:
                    present = {row[1] for row in conn.execute("PRAGMA table_info(calls)")}
                    columns = [
                        f"{name} AS {name}" if name in present else f"NULL AS {name}"
                        for name in ("seq", *_STORED)
                    ]
                    return _fetch(
                        conn, f"SELECT {', '.join(columns)} FROM calls {where} ORDER BY seq", params
                    )
            except sqlite3.Error as exc:
                failure = exc
        self._problem("decode", f"history could not be read ({_reason(failure)})")
        return []

    def _waiting_rows(self, found: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """Rows journaled or held in memory that SQLite does not have yet."""
        waiting: list[dict[str, Any]] = []
        if self._journal is not None and self._journal.exists():
            waiting = self._journal.read()[0]
        waiting += [dict(zip(_STORED, row.values, strict=True)) for row in self._unsaved]
        if not waiting:
            return []
        have = {row.get("call_id") for row in found}
        return [row for row in waiting if row.get("call_id") not in have]

    def _decoded(self, stored: list[dict[str, Any]]) -> list[dict[str, Any]]:
        rows = []
        for item in stored:
            row, problem = _decode(item)
            if problem is not None:
                self._name_bad_row(row, problem)
            rows.append(row)
        return rows

    def _name_bad_row(self, row: Mapping[str, Any], problem: str) -> None:
        key = f"{row.get('call_id')}: {problem}"
        if key not in self._decode_named:
            self._decode_named.add(key)
            self._problem(
                "decode",
                f"history row {row.get('call_id')!r} ({row.get('tool')}) {problem}",
                (str(row.get("call_id")),),
            )

    def rows(self) -> list[dict[str, Any]]:
        """Every recorded call, oldest first, with the fields of ``CallRecord``.

        A row whose stored document cannot be read keeps its columns and is named in
        ``problems``; it never stops the others from being read.
        """
        return self._decoded(self._stored_rows())

    def records(self) -> list[CallRecord]:
        """Every recorded call as a ``CallRecord``, oldest first."""
        return [CallRecord.from_mapping(row) for row in self.rows()]

    def get(self, call_id: str) -> dict[str, Any] | None:
        """One recorded call by workbench's id (or, failing that, the latest call a model sent
        with that id)."""
        found = self._stored_rows("WHERE call_id = ?", (call_id,))
        found = [row for row in found if row.get("call_id") == call_id]
        if not found:
            found = self._stored_rows("WHERE model_call_id = ?", (call_id,))
            found = [row for row in found if row.get("model_call_id") == call_id][-1:]
        return self._decoded(found)[0] if found else None

    def envelopes(self) -> list[Envelope]:
        """The canonical envelopes of every recorded call, oldest first. An imported call the
        run never answered (it ended, or the call was its last) stands as an empty text result,
        which is what the model had of it. Any other row without a readable canonical record is
        left out and named in ``problems``."""
        envelopes = []
        for row in self.rows():
            canonical = row.get("canonical")
            if canonical is None and _unanswered(row):
                envelopes.append(
                    Envelope(
                        tool_name=str(row.get("tool") or ""),
                        status="success",
                        summary_text="no result in the transcript",
                        result={"text": ""},
                        call_id=row.get("model_call_id") or row.get("call_id"),
                    )
                )
                continue
            try:
                if not isinstance(canonical, dict):
                    raise ValueError("it has no canonical record")
                envelopes.append(Envelope.from_canonical(canonical))
            except (ValueError, RecursionError) as exc:
                self._name_bad_row(row, f"was left out: {_reason(exc)}")
        return envelopes

    def __iter__(self) -> Iterator[dict[str, Any]]:
        return iter(self.rows())

    def __len__(self) -> int:
        self.flush()
        waiting = self._unsaved or (self._journal is not None and self._journal.exists())
        if not waiting:
            with self._lock:
                try:
                    return int(
                        self._connection().execute("SELECT COUNT(*) FROM calls").fetchone()[0]
                    )
                except (sqlite3.Error, OSError):
                    pass  # counted below from the rows that can be read, which names the problem
        return len(self._stored_rows())

    def clear(self) -> None:
        """Forget every recorded call."""

        def job(conn: sqlite3.Connection) -> None:
            with conn:
                conn.execute("DELETE FROM calls")

        self._submit(_Job(job, "clearing the history"))
        self.flush()

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
        from workbench.history._sql import history_sql

        return history_sql(self, query, memory_limit=memory_limit)

    def close(self) -> None:
        """Write what is pending and close the file. A checkpoint under way is waited for
        first: its connection open past ours would leave the WAL beside the file, which
        SQLite folds in and removes only as the last connection closes."""
        self.flush()
        checkpointer = self._checkpointer
        if checkpointer is not None and checkpointer is not threading.current_thread():
            checkpointer.join()
        with self._lock:
            if self._unsaved:
                self._write_batch([])
            self._drop_connection()

    def __repr__(self) -> str:
        return f"History({str(self.path)!r})"

    def _repr_mimebundle_(self, **kwargs: Any) -> dict[str, Any]:
        return widget_mimebundle("history", self, {"text/plain": repr(self)}, **kwargs)

    def _ipython_display_(self) -> None:
        display_widget("history", self, lambda: {"text/plain": repr(self)})


class _Mended(str):
    """Text that was not valid UTF-8 on disk, read with replacement characters."""

    __slots__ = ()


def _mend(raw: bytes) -> str:
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return _Mended(raw.decode("utf-8", "replace"))


def _fetch(conn: sqlite3.Connection, sql: str, params: tuple[Any, ...]) -> list[dict[str, Any]]:
    """The rows of one query as dicts; a text that is not UTF-8 is read with replacement
    characters (and shows as ``_Mended``) instead of failing the whole read."""
    try:
        cursor = conn.execute(sql, params)
        rows = cursor.fetchall()
    except sqlite3.OperationalError as exc:
        if getattr(exc, "sqlite_errorcode", None) is not None:
            raise
        # Raised by Python's sqlite3 itself, not SQLite: a text that does not decode.
        conn.text_factory = _mend
        try:
            cursor = conn.execute(sql, params)
            rows = cursor.fetchall()
        finally:
            conn.text_factory = str
    names = [column[0] for column in cursor.description]
    return [dict(zip(names, row, strict=True)) for row in rows]


def _read_only_uri(path: Path) -> str:
    return path.resolve().as_uri() + "?mode=ro"


def _quiet(rows: list[_Pending]) -> list[_Pending]:
    """Rows kept for a later retry, whose callers were already told what happened."""
    return [_Pending(row.call_id, row.values, None) for row in rows]


def _unanswered(row: Mapping[str, Any]) -> bool:
    """True for an imported call whose transcript holds no result (its import rule says so)."""
    return row.get("state") == "imported" and any(
        isinstance(event, dict) and event.get("rule") == "no_result"
        for event in row.get("events") or ()
    )


def _reason(exc: BaseException | None) -> str:
    if exc is None:
        return "unknown error"
    if isinstance(exc, OSError) and exc.strerror:
        return exc.strerror.lower()
    return str(exc) or type(exc).__name__


def _migrate(conn: sqlite3.Connection) -> None:
    """Add the columns a file written by an older workbench lacks (they read as null)."""
    present = {row[1] for row in conn.execute("PRAGMA table_info(calls)")}
    for name in SCALARS:
        if name not in present:
            conn.execute(f"ALTER TABLE calls ADD COLUMN {name} {_SQL_TYPES[FIELDS[name]]}")
    if "record" not in present:
        conn.execute("ALTER TABLE calls ADD COLUMN record TEXT")
    conn.commit()


def _convert(kind: str, value: Any) -> Any:
    if value is None:
        return None
    if kind == "bool":
        return bool(int(value))
    if kind == "real":
        return float(value)
    if kind == "integer":
        return int(value)
    if kind == "text":
        return value if isinstance(value, str) else str(value)
    return value


def _decode(stored: Mapping[str, Any]) -> tuple[dict[str, Any], str | None]:
    """A stored row as a ``CallRecord``-shaped dict, and what could not be read (or None)."""
    problems: list[str] = []
    raw = stored.get("record")
    detail: Any = {}
    if isinstance(raw, str | bytes):
        try:
            detail = json.loads(raw)
        except (ValueError, RecursionError) as exc:
            problems.append(f"has a record that is not JSON ({_reason(exc)})")
    if not isinstance(detail, dict):
        problems.append("has a record that is not an object")
        detail = {}
    problems += [
        f"has a {name} that is not valid UTF-8 (read with replacement characters)"
        for name in _STORED
        if isinstance(stored.get(name), _Mended)
    ]
    if check(_KIND_LIST, [stored.get(name) for name in SCALARS], raw) == "changed":
        problems.append(f"fails its check ({CHANGED})")
    row: dict[str, Any] = {}
    for name, kind in FIELDS.items():
        value = stored[name] if name in stored else detail.get(name)
        try:
            row[name] = _convert(kind, value)
        except (TypeError, ValueError):
            problems.append(f"has an unreadable {name} ({value!r:.40})")
            row[name] = None
    for name in ("coercions", "events", "artifacts", "warnings"):
        if not isinstance(row[name], list):
            row[name] = []
    if not isinstance(row["receipt"], str):
        row["receipt"] = ""
    canonical = row.get("canonical")
    if row.get("wire") is None and isinstance(canonical, dict):
        try:
            row["wire"] = Envelope.from_canonical(canonical).to_wire()
        except (ValueError, RecursionError) as exc:
            problems.append(f"has a canonical record that is not an envelope ({_reason(exc)})")
    if problems:
        row["warnings"] = [*row["warnings"], *problems]
    return row, "; ".join(problems) or None


_OPEN: weakref.WeakSet[History] = weakref.WeakSet()


@atexit.register
def _flush_at_exit() -> None:
    """A script that ends right after a call keeps its row: queued rows are written first."""
    for history in list(_OPEN):
        try:
            history.flush()
            if history._unsaved:
                history._commit([])  # a last try for rows no disk would take so far
        except Exception as exc:  # at exit there is no one else to tell
            warnings.warn(
                f"history {history.path}: flush at exit failed: {exc!r}",
                HistoryWarning,
                stacklevel=1,
            )
