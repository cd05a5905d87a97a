"""Writing a history's rows: each committed in SQLite before anyone learns that its call ended.

Two ways to hand rows over. ``write`` commits them on the caller's thread and returns once they
are durable; threads writing at the same moment share one transaction (group commit: the
first to arrive leads and commits for all who queued meanwhile). ``append`` never waits: it
commits at once when SQLite takes the rows without waiting, else hands them to the thread
behind the calls (``Behind``), which writes them patiently; ``then(problem)`` runs once each
row is durable, never before.

When SQLite will not take rows (its write lock held past the busy timeout, a full disk, a
read-only file), they are held outside it in order: in this process's spill file, or when no
disk takes even that, in memory. Every later write joins them there, and the thread behind
tries SQLite again every ``RETRY_S``; the moment SQLite takes them all they are written in one
transaction and the spill is emptied. Bounded: past ``spill_limit`` bytes held, writers wait.
"""

from __future__ import annotations

import atexit
import dataclasses
import os
import sqlite3
import threading
import time
import warnings
import weakref
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from workbench.history.row import CallRecord, keyed, reason
from workbench.history.spill import Spill
from workbench.history.store._behind import Behind
from workbench.history.store._database import BUSY_CODES, Database, code_of
from workbench.history.store._held import Held
from workbench.history.store._insert import ROW, WARN, write_entries
from workbench.history.store._left import BATCH, chunks, write_left
from workbench.history.store._problems import HistoryWarning, Problems

WRITE_ATTEMPTS = 3
RETRY_PAUSES_S = (0.05, 0.25)
RETRY_S = 0.5
"""How often rows held outside SQLite are tried again."""
SPILL_LIMIT = 32 << 20
"""Bytes of rows a process holds outside SQLite at most; past it, writers wait."""
CLEAR_PATIENCE_S = 30.0
"""How long ``clear`` waits for another process's write lock before it gives up."""

Then = Callable[[str | None], None]
"""Told once a row is durable: None, or the sentence naming what went wrong and where it went."""


class HistoryError(RuntimeError):
    """Something asked of the history could not be done (a clear or a salvage while another
    process holds the file); the message says what and why, and that nothing was changed."""


@dataclasses.dataclass(slots=True, eq=False)
class Pending:
    """One entry handed to the writer (``[ROW, *values]`` or ``[WARN, call_id, text]``),
    whom to tell, and once done, what became of it."""

    entry: list[Any]
    then: Then | None = None
    outcome: str | None = None
    done: bool = False

    @property
    def call_id(self) -> str:
        """The id of the call the entry is about."""
        return str(self.entry[1])


def row_of(record: CallRecord, then: Then | None = None) -> Pending:
    """A record's row, encoded here (never raising): its id and stored values."""
    _, values = keyed(record)
    return Pending([ROW, *values], then)


class Writer:
    """The one writer of a history's rows, and where rows wait when SQLite will not take them."""

    def __init__(
        self,
        database: Database,
        spill: Spill | None,
        problems: Problems,
        attempts: int = WRITE_ATTEMPTS,
        spill_limit: int = SPILL_LIMIT,
    ) -> None:
        self.database = database
        self.spill = spill
        self.held = Held(spill, spill_limit)
        """What this process holds outside SQLite for now."""
        self.problems = problems
        self.attempts = max(1, attempts)
        self.behind: Behind[Pending] = Behind(self._write_behind, self.retry, self.outside, RETRY_S)
        database.on_open = self._on_open
        self.forget_thread()
        _OPEN.add(self)

    def forget_thread(self) -> None:
        """Start with no thread, nothing queued and nothing held (in a forked child: the
        parent's threads are gone, and the rows it holds are the parent's to write)."""
        self._turn = threading.Condition()
        self._gathered: list[Pending] = []
        self._leading = False
        self.held.forget()
        self.behind.forget()
        self.database.forget_connection()
        if self.spill is not None:
            self.spill.forget()

    # ── handing rows over ────────────────────────────────────────────────────────────────
    def write(self, pending: Sequence[Pending]) -> None:
        """Commit ``pending`` on this thread, with whatever others write at the same moment,
        and return once each is durable (its ``outcome`` says how)."""
        if not pending:
            return
        last = pending[-1]
        with self._turn:
            self._gathered.extend(pending)
            while not last.done:
                if self._leading:
                    self._turn.wait()
                    continue
                self._leading = True
                batch, self._gathered = self._gathered, []
                self._turn.release()
                try:
                    self._commit(batch)
                finally:
                    self._turn.acquire()
                    self._leading = False
                    self._turn.notify_all()

    def append(self, pending: Sequence[Pending]) -> None:
        """Commit ``pending`` now if SQLite takes them without waiting, else hand them to the
        thread behind; each ``then`` runs once its row is durable. Never waits on SQLite."""
        if not self._try_now(pending):
            self.behind.put(list(pending))

    def record(self, row: CallRecord | Mapping[str, Any] | Callable[[], Any]) -> str | None:
        """Store one row and return once it is durable: None, or what went wrong."""
        try:
            data = row() if callable(row) else row
            record = data if isinstance(data, CallRecord) else CallRecord.from_mapping(data)
        except Exception as exc:  # a broken row builder must never stop a call from ending
            record = CallRecord(warnings=[f"the history row could not be built: {exc!r}"])
        pending = row_of(record)
        self.write([pending])
        return pending.outcome

    def add_warning(self, call_id: str, warning: str) -> None:
        """Add a warning to a stored row (its check sealed again), after what is queued."""
        self.append([Pending([WARN, call_id, warning])])

    def flush(self) -> None:
        """Wait until everything handed over is durable (committed, or held outside SQLite)."""
        self.behind.flush()

    def clear(self) -> None:
        """Delete every row, for every reader: those in SQLite, and those this process holds
        outside it. Waits up to ``CLEAR_PATIENCE_S`` for another process's write lock; raises
        ``HistoryError`` (nothing cleared) past it."""
        self.flush()
        with self._leadership(), self.database.lock:
            deadline = time.monotonic() + CLEAR_PATIENCE_S
            while True:
                try:
                    conn = self.database.connection()
                    with conn:
                        conn.execute("DELETE FROM calls")
                    break
                except (sqlite3.Error, OSError) as exc:
                    busy = code_of(exc) in BUSY_CODES
                    if not busy:
                        self.database.drop()
                    if busy and time.monotonic() < deadline:
                        continue  # each try waited the busy timeout already
                    raise HistoryError(
                        f"the history {Path(str(self.database.path)).name} could not be "
                        f"cleared ({reason(exc)}); nothing was deleted"
                    ) from exc
            self.held.taken()

    def close(self) -> None:
        """Write what was handed over, a last try for rows held outside SQLite, and let go
        of the spill: removed if empty, else left for the next process to open the history."""
        self.behind.stop()
        with self._leadership(), self.database.lock:
            if self.held:
                self._drain(impatient=False)
            if not self.held.into_spill():
                self.problems.add(
                    "spill",
                    f"{self.held.in_memory} row(s) held in memory only were lost: no disk took "
                    "them before the history was closed",
                )
                self.held.forget()
            if self.spill is not None:
                self.spill.close()

    # ── what is held ─────────────────────────────────────────────────────────────────────
    def outside(self) -> bool:
        """True while this process holds rows outside SQLite."""
        return bool(self.held)

    def settle(self) -> None:
        """Wait for what was handed over (at once when nothing was): a read of SQLite then
        sees every call that ended."""
        if self.behind.busy:
            self.flush()

    def retry(self) -> None:
        """Try SQLite again for the rows held outside it (the thread behind, every RETRY_S)."""
        with self._leadership(), self.database.lock:
            if self.held:
                self._drain(impatient=True)

    # ── committing ───────────────────────────────────────────────────────────────────────
    def _try_now(self, pending: Sequence[Pending]) -> bool:
        with self._turn:
            if self._leading or self._gathered or self.held or self.behind.busy:
                return False
            self._leading = True
        try:
            database = self.database
            if database.open_connection is None or not database.lock.acquire(blocking=False):
                return False  # opening (replaying, checking) is for the patient way
            try:
                conn = database.impatient_connection()
                with conn:
                    taken = write_entries(conn, [item.entry for item in pending])
            except (sqlite3.Error, OSError):
                return False  # the patient way tries again, and says what went wrong
            finally:
                database.lock.release()
            database.committed(len(pending))
        finally:
            with self._turn:
                self._leading = False
                self._turn.notify_all()
        self._done(pending, None, taken)
        self._tell(pending)
        return True

    def _write_behind(self, batch: list[Pending]) -> None:
        self.write(batch)
        self._tell(batch)

    def _commit(self, batch: list[Pending]) -> None:
        """As the leader: commit ``batch``, or hold it outside SQLite; waits while there is
        no room to hold it (backpressure)."""
        remaining: list[Pending] = batch
        try:
            while True:
                with self.database.lock:
                    remaining = self._commit_locked(remaining)
                if not remaining:
                    return
                time.sleep(RETRY_S)  # no room outside SQLite: wait for SQLite to take rows
        except BaseException as exc:
            said = self.problems.add("write", f"history: writing failed ({exc!r})")
            self._done([item for item in remaining if not item.done], said, {})
            raise

    def _commit_locked(self, batch: list[Pending]) -> list[Pending]:
        database = self.database
        if self.held and not self._drain(impatient=True):
            return self._hold(batch, None)  # in order, after the rows held already
        failure: BaseException | None = None
        recovered = attempt = 0
        while attempt < self.attempts:
            try:
                conn = database.connection()
                with conn:
                    taken = write_entries(conn, [item.entry for item in batch])
            except Exception as exc:  # whatever it is, the rows are held below, and it is said
                failure = exc
                if database.is_corrupt(exc) and recovered < 2 and database.recover(exc):
                    recovered += 1
                    continue  # a new file: at once
                if code_of(exc) in BUSY_CODES:
                    break  # the busy timeout was the patience
                database.drop()
            else:
                database.committed(len(batch))
                self._done(batch, None, taken)
                return []
            attempt += 1
            if attempt < self.attempts:
                time.sleep(RETRY_PAUSES_S[min(attempt - 1, len(RETRY_PAUSES_S) - 1)])
        return self._hold(batch, failure)

    def _drain(self, impatient: bool) -> bool:
        """Write every entry held outside SQLite in one transaction; True once they are all in
        (the spill emptied), False when SQLite still will not take them."""
        database = self.database
        count = rows = 0
        try:
            conn = database.impatient_connection() if impatient else database.connection()
            with conn:
                for chunk in chunks(self.held.entries(), BATCH):
                    for index, sentence in write_entries(conn, chunk).items():
                        self.problems.add("write", f"history: {sentence}", (str(chunk[index][1]),))
                    count += len(chunk)
                    rows += sum(1 for entry in chunk if entry[0] == ROW)
        except (sqlite3.Error, OSError) as exc:
            if code_of(exc) not in BUSY_CODES:
                database.drop()
            return False
        database.committed(count)
        where = self.held.where()
        self.held.taken()
        self.problems.add(
            "write",
            f"{rows} row(s) held in {where} were written to the history once SQLite took "
            "them again",
        )
        return True

    def _hold(self, batch: list[Pending], failure: BaseException | None) -> list[Pending]:
        """Hold ``batch`` outside SQLite, after what is held already. ``failure`` is why SQLite
        did not take it (None: rows are held already, and these join them). Returns what
        found no room (its writers wait)."""
        said_now = False
        if failure is not None:
            why = self._diagnose(failure)
            said_now, self.held.why = why != self.held.why, why
        why = self.held.why or "SQLite did not take rows held before these"
        sentence = self.held.hold([item.entry for item in batch], why)
        if sentence is None:
            return batch
        if said_now:
            self.problems.add("spill", sentence, tuple(item.call_id for item in batch))
        self._done(batch, sentence, {})
        self.behind.wake()  # which tries SQLite again until it takes them
        return []

    def _diagnose(self, failure: BaseException) -> str:
        said = reason(failure)
        directory = None if self.database.in_memory else Path(self.database.path).parent
        if directory is not None and directory.exists() and not os.access(directory, os.W_OK):
            said += f"; {directory.name or directory} is read-only"
        return said

    # ── telling ──────────────────────────────────────────────────────────────────────────
    def _done(self, batch: Sequence[Pending], outcome: str | None, taken: dict[int, str]) -> None:
        """Mark each entry durable, with ``outcome`` or the sentence of a row whose id another
        row held (named in ``problems`` too)."""
        for index, sentence in taken.items():
            self.problems.add("write", f"history: {sentence}", (batch[index].call_id,))
        for index, item in enumerate(batch):
            item.outcome = taken.get(index, outcome)
            item.done = True

    def _tell(self, batch: Sequence[Pending]) -> None:
        for item in batch:
            if item.then is None:
                continue
            try:
                item.then(item.outcome)
            except Exception as exc:
                self.problems.add(
                    "callback", f"a history callback failed: {exc!r}", (item.call_id,)
                )

    def _leadership(self) -> _Leading:
        return _Leading(self)

    def _on_open(self, conn: sqlite3.Connection) -> None:
        """With the first connection: write what processes that ended left behind."""
        if not self.database.in_memory:
            own = [] if self.spill is None else self.spill.paths
            self.database.committed(write_left(conn, Path(self.database.path), own, self.problems))


class _Leading:
    """Hold the writer's turn (no commit of others runs meanwhile) for a ``with`` block."""

    def __init__(self, writer: Writer) -> None:
        self._writer = writer

    def __enter__(self) -> None:
        writer = self._writer
        with writer._turn:
            while writer._leading:
                writer._turn.wait()
            writer._leading = True

    def __exit__(self, *exc: object) -> None:
        writer = self._writer
        with writer._turn:
            writer._leading = False
            writer._turn.notify_all()


_OPEN: weakref.WeakSet[Writer] = weakref.WeakSet()


def _forget_in_forked_child() -> None:
    for writer in list(_OPEN):
        writer.forget_thread()


os.register_at_fork(after_in_child=_forget_in_forked_child)


@atexit.register
def _close_at_exit() -> None:
    """A script that ends right after a call keeps every row: what was handed over is written,
    and a spill still holding rows is left, unlocked, for the next process."""
    for writer in list(_OPEN):
        try:
            writer.close()
        except Exception as exc:  # at exit there is no one else to tell
            warnings.warn(
                f"history {writer.database.path}: closing at exit failed: {exc!r}",
                HistoryWarning,
                stacklevel=1,
            )
