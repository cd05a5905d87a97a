"""The history's SQLite file: one connection, the lock that guards it, and what opening it
involves (the table, and a file judged damaged moved aside and salvaged).

WAL with ``synchronous=NORMAL`` is the commit: once COMMIT returns, the row survives the
process being killed (the pages are in the operating system) with no fsync per commit.
Checkpoints run on a thread and connection of their own every ``CHECKPOINT_ROWS`` rows, never
inside a commit a call waits for.

A file is moved aside only while this process holds it alone (``_alone``): when SQLite reports
it damaged, or when its write-ahead log holds frames SQLite would drop without a word (read
then, while nobody can write it). Never because of what another process is doing.
"""

from __future__ import annotations

import contextlib
import sqlite3
import threading
import time
from collections.abc import Callable
from pathlib import Path

from workbench.history.row import KINDS, STORED
from workbench.history.salvage import SalvageReport, salvage_into, wal_damage
from workbench.history.store._alone import alone
from workbench.history.store._problems import Problems
from workbench.history.store._schema import INSERT, prepare

CHECKPOINT_ROWS = 256
"""Rows committed between two checkpoints of the WAL (SQLite's own default is about as often,
but runs them, fsync included, inside whichever commit crosses the line, and a call waits)."""

CORRUPT_CODES = {11, 26}  # SQLITE_CORRUPT, SQLITE_NOTADB
BUSY_CODES = {5, 6}  # SQLITE_BUSY, SQLITE_LOCKED

_INHERITED: list[sqlite3.Connection] = []  # a forked child's copies of its parent's connections


def code_of(exc: BaseException) -> int:
    """SQLite's primary result code of an error (0 when it carries none)."""
    return (getattr(exc, "sqlite_errorcode", 0) or 0) & 0xFF


class Database:
    """The SQLite file (or memory) of one history and its one connection.

    Everything that uses the connection holds ``lock``; ``connection()`` opens it on first use
    (and again after ``drop()``). ``on_open`` runs once, with the first connection (the
    spills other processes left are written then).
    """

    def __init__(
        self,
        path: str | Path,
        busy_timeout: float,
        problems: Problems,
        on_open: Callable[[sqlite3.Connection], None] = lambda conn: None,
    ) -> None:
        self.path = path
        self.busy_timeout = busy_timeout
        self.problems = problems
        self.on_open = on_open
        self.moved_aside: list[Path] = []
        self.lock = threading.RLock()
        self.impatient = False  # the connection gives up at once on a lock (``try_now``)
        self._conn: sqlite3.Connection | None = None
        self._opened = False
        self._left_in_place: str | None = None
        self._since_checkpoint = 0
        self._checkpointing = False
        self._checkpointer: threading.Thread | None = None

    @property
    def in_memory(self) -> bool:
        """True for a history kept in memory (``":memory:"``), which no other process sees."""
        return str(self.path) == ":memory:"

    @property
    def open_connection(self) -> sqlite3.Connection | None:
        """The connection if it is open (nothing is opened)."""
        return self._conn

    def connection(self) -> sqlite3.Connection:
        """The connection, opened on first use. The caller holds ``lock``."""
        if self._conn is not None:
            if self.impatient:
                self._conn.execute(f"PRAGMA busy_timeout = {int(self.busy_timeout * 1000)}")
                self.impatient = False
            return self._conn
        if not self._opened and not self.in_memory:
            self._check_the_log()
        if self._conn is None:
            try:
                self._conn = self._open()
            except sqlite3.DatabaseError as exc:
                if not (self.is_corrupt(exc) and self.recover(exc)):
                    raise
        assert self._conn is not None
        if not self._opened:
            self._opened = True
            self.on_open(self._conn)
        return self._conn

    def _open(self) -> sqlite3.Connection:
        if not self.in_memory:
            Path(self.path).parent.mkdir(parents=True, exist_ok=True)
        conn = sqlite3.connect(str(self.path), check_same_thread=False, timeout=self.busy_timeout)
        try:
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=NORMAL")
            conn.execute("PRAGMA wal_autocheckpoint=0")
            prepare(conn)
        except BaseException:
            conn.close()
            raise
        return conn

    def impatient_connection(self) -> sqlite3.Connection:
        """The connection, set to give up at once on a lock held elsewhere (kept so for the
        next such commit; ``connection()`` waits again)."""
        conn = self.connection()
        if not self.impatient:
            conn.execute("PRAGMA busy_timeout = 0")
            self.impatient = True
        return conn

    def forget_connection(self) -> None:
        """In a forked child: never use the parent's connection, nor close it (SQLite forbids
        carrying one across a fork); the child opens its own on first use."""
        if self._conn is not None:
            _INHERITED.append(self._conn)  # kept referenced: collecting it would close it
        self._conn = None
        self.impatient = False
        self.lock = threading.RLock()  # a parent thread may have held the old one at the fork
        self._checkpointing = False
        self._checkpointer = None

    def drop(self) -> None:
        """Close the connection (a broken handle is discarded); the next use opens it again."""
        self.impatient = False
        if self._conn is not None:
            with contextlib.suppress(sqlite3.Error):  # closing a broken handle; it is discarded
                self._conn.close()
            self._conn = None

    # ── damage ───────────────────────────────────────────────────────────────────────────
    def is_corrupt(self, exc: BaseException) -> bool:
        """True when ``exc`` says the file itself cannot be read by SQLite."""
        return (
            not self.in_memory
            and isinstance(exc, sqlite3.DatabaseError)
            and code_of(exc) in CORRUPT_CODES
        )

    def recover(self, exc: BaseException) -> bool:
        """SQLite reported the file damaged (``exc``): if this process holds it alone and
        SQLite finds it damaged then too, keep it aside for the person, start a new file and
        copy into it every row still readable. True when that was done (the caller tries
        again); False when the file is left as it is (another process has it open), said once
        in ``problems``."""
        self.drop()
        name = Path(self.path).name
        with alone(Path(self.path)) as held:
            if held is None:
                said = f"SQLite reports {name} damaged ({exc})"
                if said != self._left_in_place:
                    self._left_in_place = said
                    self.problems.add(
                        "corrupt",
                        f"{said}; it is left where it is while other processes have it open, "
                        "and the rows SQLite will not take are held until it does",
                    )
                return False
            if held.damage() is None:
                return False  # sound now that it is held alone: nothing to move
            self._start_anew(f"{name} could not be read by SQLite ({exc})")
        return True

    def _check_the_log(self) -> None:
        """Before the first connection: if the file has a write-ahead log and this process
        holds it alone, make sure SQLite will not drop frames of it without a word; a log that
        holds such frames is kept aside with its file, and their rows salvaged."""
        path = Path(self.path)
        wal = path.with_name(path.name + "-wal")
        try:
            if wal.stat().st_size <= 32 or not path.exists():
                return
        except FileNotFoundError:
            return
        with alone(path) as held:
            if held is None:
                return  # open elsewhere: its log was checked by whoever opened it first
            damage = wal_damage(path)
            if damage is not None:
                # SQLite would open the file and drop the damaged log's rows without a word (and
                # delete the log on close): keep both aside instead, and salvage the rows.
                self._start_anew(
                    f"the write-ahead log beside {path.name} is damaged ({damage})", log=True
                )

    def _start_anew(self, what: str, log: bool = False) -> None:
        report = self.salvage(self.set_aside())
        kept_log = f", the log beside it as {report.original.name}-wal" if log else ""
        self.problems.add(
            "corrupt",
            f"{what}; a new history was started and {report}{kept_log}",
            salvage=report,
        )

    def set_aside(self) -> Path:
        """Move the file (and its WAL) aside byte for byte; returns where it now lies. The
        caller holds the file alone."""
        self.drop()
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

    def salvage(self, aside: Path) -> SalvageReport:
        """Copy every row still readable in ``aside``, page by page, into a new file here
        (which becomes this history's connection)."""
        self._conn = conn = self._open()
        return salvage_into(
            aside, conn, stored=STORED, kinds=KINDS, insert=INSERT, new_path=Path(self.path)
        )

    # ── checkpoints ──────────────────────────────────────────────────────────────────────
    def committed(self, rows: int) -> None:
        """``rows`` were committed: a checkpoint starts once enough have been."""
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
        """A passive checkpoint on a connection and thread of its own: commits go on
        meanwhile."""
        try:
            uri = Path(self.path).resolve().as_uri() + "?mode=rw"  # never creates a file
            with contextlib.closing(sqlite3.connect(uri, uri=True, timeout=0)) as conn:
                conn.execute("PRAGMA wal_checkpoint(PASSIVE)")
        except sqlite3.Error:
            # Nothing is at stake: the rows are committed in the WAL, which the next checkpoint
            # (or the last connection's close) folds into the file.
            return
        finally:
            self._checkpointing = False

    def wait_for_checkpoint(self) -> None:
        """Wait for a checkpoint under way: its connection open past ours would leave the WAL
        beside the file, which SQLite folds in and removes only as the last connection closes."""
        checkpointer = self._checkpointer
        if checkpointer is not None and checkpointer is not threading.current_thread():
            checkpointer.join()
