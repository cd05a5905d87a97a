"""Writing a history's rows: committed before anyone learns that a call ended, never lost.

``commit_now`` commits on the caller's own thread: it appends the rows to the commit log (see
``_log``) and hands them to the one writer thread, which fills SQLite from them behind the
calls. ``append`` (and ``commit_now`` where there is no log, or the log refuses) hands a row
to that thread, which commits whatever accumulated while its previous commit ran (group
commit, no waiting for a batch to fill) and only then tells the caller, through ``then``,
that the row is durable. A write that still fails
after retries goes to an fsync'd journal beside the file that the next open replays; rows no
disk would take are held in memory and tried again every ``HELD_RETRY_S`` and with every
later write, so they are written the moment there is space.
"""

from __future__ import annotations

import atexit
import dataclasses
import os
import queue
import sqlite3
import threading
import time
import warnings
import weakref
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from workbench.history._codec import KIND_LIST, STORED, keyed
from workbench.history._database import Database
from workbench.history._insert import insert_rows
from workbench.history._journal import Journal
from workbench.history._log import CommitLog
from workbench.history._problems import HistoryWarning, Problems, reason
from workbench.history._record import CallRecord
from workbench.history._salvage import seal, with_warnings

WRITE_ATTEMPTS = 3
RETRY_PAUSES_S = (0.05, 0.25)
HELD_RETRY_S = 0.5
"""How often rows held in memory (no disk would take them) are tried again."""

FILL_PAUSE_S = 0.02
"""How long the writer lets rows gather in the commit log before it fills SQLite with them:
every read in this process flushes the writer first, so the pause delays no reader, and a
longer one makes fewer, larger batches (``_insert`` adds them up to 64 rows a statement).
Anyone who waits for the writer (a flush, a durable ``record``, a
job) cuts it short."""

Then = Callable[[str | None], None]
"""Told once a row is durable: None, or the sentence naming what went wrong and where it went."""


@dataclasses.dataclass(slots=True)
class _Pending:
    call_id: str
    values: list[Any]
    then: Then | None
    logged: bool = False  # in the commit log already: its call was told it is committed


@dataclasses.dataclass(slots=True)
class _Job:
    run: Callable[[sqlite3.Connection], object]
    what: str


@dataclasses.dataclass(slots=True)
class _Marker:
    done: threading.Event


_Item = _Pending | _Job | _Marker


class Writer:
    """The one writer of a history's rows, and where rows go when SQLite will not take them."""

    def __init__(
        self,
        database: Database,
        journal: Journal | None,
        problems: Problems,
        attempts: int,
        log: CommitLog | None = None,
    ) -> None:
        self.database = database
        self.journal = journal
        self.log = log
        self.problems = problems
        self.attempts = max(1, attempts)
        self.forget_thread()
        _OPEN.add(self)

    def forget_thread(self) -> None:
        """Start with no writer thread and nothing queued (in a forked child: the parent's
        thread is gone, and the rows it holds are the parent's to write)."""
        self.unsaved: list[_Pending] = []  # rows no disk would take; retried with every batch
        self._jobs: queue.SimpleQueue[_Item] = queue.SimpleQueue()
        self._hurry = threading.Event()  # someone waits for the writer: stop gathering rows
        self._thread: threading.Thread | None = None
        self._start_lock = threading.Lock()
        self._degraded = False
        self._log_refusal: str | None = None
        self.database.forget_connection()
        if self.log is not None:
            self.log.forget()

    # ── handing rows over ────────────────────────────────────────────────────────────────
    def append(self, record: CallRecord, then: Then | None = None) -> None:
        """Queue one row (encoded here, never raising); ``then(problem)`` runs on the writer
        thread once it is committed or journaled, never before."""
        self._submit(_Pending(*keyed(record), then))

    def write_now(self, records: Sequence[CallRecord]) -> str | None:
        """Commit ``records`` on this thread in one transaction, after whatever is queued;
        retried and journaled like ``append``'s rows. None, or what went wrong."""
        pending = [_Pending(*keyed(record), None) for record in records]
        self.flush()  # rows queued before these are committed first, in order
        return self._commit(pending)

    def commit_now(self, records: Sequence[tuple[CallRecord, Then | None]]) -> bool:
        """Commit ``records`` on this thread if that can be done at once: appended to the
        commit log (SQLite is filled from it behind the calls), or without a log, when nothing
        is queued, no write is under way, no fault outstanding and the database lock free.
        True once committed and every ``then(None)`` ran, False when nothing was written."""
        if self.log is not None and self.log.broken is None and not self.unsaved:
            return self._log_now(self.log, records)
        if self._degraded or self.unsaved or not self._jobs.empty():
            return False
        database = self.database
        if not database.lock.acquire(blocking=False):
            return False
        try:
            pending = [_Pending(*keyed(record), then) for record, then in records]
            try:
                conn = database.impatient_connection()
                with conn:
                    taken = insert_rows(conn, [row.values for row in pending])
            except Exception:  # nothing was committed; append() retries and reports it
                database.drop()
                return False
            database.committed(len(pending))
        finally:
            database.lock.release()
        self._tell_all(pending, None, taken)
        return True

    def _log_now(self, log: CommitLog, records: Sequence[tuple[CallRecord, Then | None]]) -> bool:
        """Append the rows to the commit log and hand them to the writer thread to fill
        SQLite with; then tell each caller. False (nothing written) when the log refuses."""
        pending = [_Pending(*keyed(record), None, True) for record, _ in records]
        try:
            log.append([row.values for row in pending], lambda: self._submit_all(pending))
        except OSError as exc:
            # A full or read-only disk: the rows take the way without the log (SQLite, the
            # journal, memory), which says where each one went.
            said = f"history: the commit log refused a row ({reason(exc)})"
            if said != self._log_refusal:
                self._log_refusal = said
                self.problems.add("write", said, tuple(row.call_id for row in pending))
            return False
        self._log_refusal = None
        for (_, then), row in zip(records, pending, strict=True):
            self._tell(_Pending(row.call_id, row.values, then), None)
        return True

    def _submit_all(self, rows: list[_Pending]) -> None:
        self._ensure_thread()
        for row in rows:
            self._jobs.put(row)

    def record(self, row: CallRecord | Mapping[str, Any] | Callable[[], Any]) -> str | None:
        """Store one row and return once it is durable (see ``History.record``)."""
        try:
            data = row() if callable(row) else row
            record = data if isinstance(data, CallRecord) else CallRecord.from_mapping(data)
        except Exception as exc:  # a broken row builder must never stop a call from ending
            record = CallRecord(warnings=[f"the history row could not be built: {exc!r}"])
        if threading.current_thread() is self._thread:
            self.append(record)
            return None
        database = self.database
        if self._jobs.empty() and database.lock.acquire(blocking=False):
            # Nothing queued and no write under way: committing here saves two thread hops.
            try:
                return self._commit([_Pending(*keyed(record), None)])
            finally:
                database.lock.release()
        durable = threading.Event()
        problems: list[str | None] = []

        def then(problem: str | None) -> None:
            problems.append(problem)
            durable.set()

        self.append(record, then)
        durable.wait()
        return problems[0]

    def add_warning(self, call_id: str, warning: str) -> None:
        """Append a warning to a recorded row (its check sealed again over the new document)."""

        def job(conn: sqlite3.Connection) -> None:
            found = conn.execute(
                f"SELECT {', '.join(STORED)} FROM calls WHERE call_id = ?", (call_id,)
            )
            current = found.fetchone()
            if current is None:
                return
            document = seal(KIND_LIST, current[:-1], with_warnings(current[-1], [warning]))
            with conn:
                conn.execute("UPDATE calls SET record = ? WHERE call_id = ?", (document, call_id))

        self._submit(_Job(job, f"adding a warning to {call_id}"))

    def clear(self) -> None:
        """Delete every row, after what is queued."""

        def job(conn: sqlite3.Connection) -> None:
            with conn:
                conn.execute("DELETE FROM calls")

        self._submit(_Job(job, "clearing the history"))
        self.flush()

    def flush(self) -> None:
        """Wait until every queued row is committed (or journaled)."""
        thread = self._thread
        if thread is None or not thread.is_alive() or threading.current_thread() is thread:
            return
        marker = _Marker(threading.Event())
        self._jobs.put(marker)
        self._hurry.set()
        marker.done.wait()

    def close_log(self) -> None:
        """Remove the commit log once every row in it is in SQLite (or journaled); a log that
        still holds rows stays for the next open to replay."""
        if self.log is not None:
            self.log.close()

    def settle(self) -> None:
        """Wait until the rows of the commit log are filled into SQLite (at once when none
        waits): a read of SQLite then sees every call that ended."""
        if self.log is not None and self.log.unfilled:
            self.flush()

    def retry_unsaved(self) -> None:
        """A last try for rows no disk would take so far."""
        if self.unsaved:
            self._commit([])

    # ── the writer thread ────────────────────────────────────────────────────────────────
    def _submit(self, item: _Item) -> None:
        self._ensure_thread()
        self._jobs.put(item)
        if not (isinstance(item, _Pending) and item.logged):
            self._hurry.set()  # someone waits for this item: the writer stops gathering

    def _ensure_thread(self) -> None:
        thread = self._thread
        if thread is None or not thread.is_alive():
            # Not the database lock: the writer holds that while it writes, and a call must
            # not wait.
            with self._start_lock:
                if self._thread is None or not self._thread.is_alive():
                    self._thread = threading.Thread(
                        target=self._write_loop, name="workbench-history", daemon=True
                    )
                    self._thread.start()

    def _write_loop(self) -> None:
        while True:
            try:
                # Rows held in memory are tried again every HELD_RETRY_S, new writes or not.
                batch = [self._jobs.get(timeout=HELD_RETRY_S)]
            except queue.Empty:
                self._retry_held()
                continue
            first = batch[0]
            if isinstance(first, _Pending) and first.logged:
                # Nobody waits for a logged row: let more gather, so one transaction (and
                # one wake of this thread) serves many calls.
                self._hurry.wait(FILL_PAUSE_S)
            self._hurry.clear()  # before the batch is taken: a later hurry cuts the next pause
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

    def _retry_held(self) -> None:
        """Write the rows held in memory to SQLite, or else to the journal, if either takes
        them now; when neither does they stay held (their calls were told so already)."""
        if not self.unsaved:
            return  # nothing held: the usual case, which takes no lock
        database = self.database
        with database.lock:
            rows, self.unsaved = self.unsaved, []
            if not rows:
                return
            try:
                conn = database.connection()
                with conn:
                    taken = insert_rows(conn, [row.values for row in rows])
            except Exception:  # still refused: the journal below, else held as they were
                database.drop()
                taken = None
            if taken is None:
                try:
                    where = self._journal_rows(rows)
                except OSError:  # no space there either: held, as their calls were told
                    self.unsaved = [*rows, *self.unsaved]
                    return
                said = f"kept in {where} and will be replayed"
            else:
                self._degraded = False
                database.committed(len(rows))
                said = "written to the history"
            self._filled(rows)
        self._held_now_kept(rows, said)
        if taken:
            self._tell_all(rows, None, taken)

    def _journal_rows(self, rows: list[_Pending]) -> Path:
        if self.journal is None:
            raise OSError("a history in memory has no journal")
        return self.journal.append([dict(zip(STORED, row.values, strict=True)) for row in rows])

    def _run_job(self, job: _Job) -> None:
        database = self.database
        with database.lock:
            try:
                job.run(database.connection())
            except (sqlite3.Error, OSError, ValueError) as exc:
                database.drop()
                self.problems.add("write", f"history: {job.what} failed ({reason(exc)})")

    def _commit(self, rows: list[_Pending]) -> str | None:
        if not rows and not self.unsaved:
            return None  # nothing to write: leave the lock to commit_now
        with self.database.lock:
            held = self.unsaved
            rows = [*held, *rows]
            self.unsaved = []
            if not rows:
                return None
            problem, taken = self._write_rows(rows)
            if not self.unsaved:  # committed or journaled: durable without the log
                self._filled(rows)
        if held and not self.unsaved:
            self._held_now_kept(held, "written to the history" if problem is None else "journaled")
        self._tell_all(rows, problem, taken)
        return problem or "; ".join(taken.values()) or None

    def _held_now_kept(self, held: list[_Pending], said: str) -> None:
        self.problems.add(
            "write",
            f"{len(held)} row(s) held in memory were {said} once there was space again",
            tuple(row.call_id for row in held),
        )

    def _filled(self, rows: list[_Pending]) -> None:
        if self.log is not None:
            self.log.filled(sum(1 for row in rows if row.logged))

    def _tell_all(self, rows: list[_Pending], problem: str | None, taken: dict[int, str]) -> None:
        """Tell each row's caller what became of it: ``problem`` for all, or the sentence of a
        row whose id another row held (named in ``problems`` too)."""
        for index, sentence in taken.items():
            self.problems.add("write", f"history: {sentence}", (rows[index].call_id,))
        for index, row in enumerate(rows):
            self._tell(row, taken.get(index, problem))

    def _tell(self, row: _Pending, problem: str | None) -> None:
        if row.then is None:
            return
        try:
            row.then(problem)
        except Exception as exc:
            self.problems.add("callback", f"a history callback failed: {exc!r}", (row.call_id,))

    def _write_rows(self, rows: list[_Pending]) -> tuple[str | None, dict[int, str]]:
        """Commit ``rows``; on failure journal them. Returns None, or the sentence saying what
        went wrong and where the rows are; and by index, the rows stored under a fresh id
        because theirs was taken (see ``insert_rows``)."""
        database = self.database
        failure: BaseException | None = None
        attempt = moves = 0
        # Once a write has failed, later ones try once each until one succeeds: a fault that
        # lasts (a read-only disk) must not cost every call the full round of retries.
        attempts = 1 if self._degraded else self.attempts
        while attempt < attempts:
            with database.lock:
                try:
                    conn = database.connection()
                    with conn:
                        taken = insert_rows(conn, [row.values for row in rows])
                except Exception as exc:  # whatever it is, the rows go to the journal below
                    failure = exc
                    if database.is_corrupt(exc) and moves < 2:
                        moves += 1
                        try:
                            database.move_aside(exc)
                        except (sqlite3.Error, OSError) as aside_failure:
                            failure = aside_failure
                        else:
                            continue  # a fresh file: try again at once
                    database.drop()
                else:
                    self._degraded = False
                    database.committed(len(rows))
                    return None, taken
            attempt += 1
            if attempt < attempts:
                time.sleep(RETRY_PAUSES_S[min(attempt - 1, len(RETRY_PAUSES_S) - 1)])
        self._degraded = True
        return self._keep_elsewhere(rows, failure), {}

    def _diagnose(self, failure: BaseException | None) -> str:
        said = reason(failure)
        path = self.database.path
        directory = None if self.database.in_memory else Path(path).parent
        if directory is not None and directory.exists() and not os.access(directory, os.W_OK):
            said += f"; {directory.name or directory} is read-only"
        return said

    def _keep_elsewhere(self, rows: list[_Pending], failure: BaseException | None) -> str:
        ids = tuple(row.call_id for row in rows)
        said = self._diagnose(failure)
        if self.journal is None:
            self.unsaved = _quiet(rows)
            return self.problems.add(
                "write", f"history write failed ({said}); the row is held in memory", ids
            )
        try:
            where = self._journal_rows(rows)
        except OSError as exc:
            self.unsaved = _quiet(rows)
            self._ensure_thread()  # which tries them again until a disk takes them
            return self.problems.add(
                "journal",
                f"history write failed ({said}) and the journal could not be written "
                f"({reason(exc)}); {len(rows)} row(s) are held in memory only, and are lost if "
                f"this process ends first: they are written the moment there is space again",
                ids,
            )
        return self.problems.add(
            "write",
            f"history write failed ({said}); the row was kept in "
            f"{where.name if where == self.journal.path else where} and will be replayed",
            ids,
        )

    def unsaved_rows(self) -> list[dict[str, Any]]:
        """The rows held in memory, as stored values by column."""
        return [dict(zip(STORED, row.values, strict=True)) for row in self.unsaved]


def _quiet(rows: list[_Pending]) -> list[_Pending]:
    """Rows kept for a later retry, whose callers were already told what happened."""
    return [_Pending(row.call_id, row.values, None, row.logged) for row in rows]


_OPEN: weakref.WeakSet[Writer] = weakref.WeakSet()


def _forget_in_forked_child() -> None:
    for writer in list(_OPEN):
        writer.forget_thread()


os.register_at_fork(after_in_child=_forget_in_forked_child)


@atexit.register
def _flush_at_exit() -> None:
    """A script that ends right after a call keeps its row: queued rows are written first."""
    for writer in list(_OPEN):
        try:
            writer.flush()
            writer.retry_unsaved()
            writer.close_log()
        except Exception as exc:  # at exit there is no one else to tell
            warnings.warn(
                f"history {writer.database.path}: flush at exit failed: {exc!r}",
                HistoryWarning,
                stacklevel=1,
            )
