"""The history's SQLite file: one connection, the lock that guards it, and what opening it
involves (the schema, journaled rows replayed, a damaged file moved aside and salvaged).

WAL with ``synchronous=NORMAL``: a commit survives the process being killed (the pages are in
the operating system before COMMIT returns) and needs no fsync per commit. Checkpoints run on
a thread and connection of their own every ``CHECKPOINT_ROWS`` rows, never inside a commit a
call waits for.
"""

from __future__ import annotations

import contextlib
import sqlite3
import threading
import time
from pathlib import Path

from workbench.history._btree import wal_damage
from workbench.history._codec import INSERT, KINDS, SCHEMA, STORED, ensure_indexes, migrate
from workbench.history._insert import insert_rows
from workbench.history._journal import Journal
from workbench.history._log import CommitLog
from workbench.history._problems import Problems
from workbench.history._salvage import SalvageReport, salvage_into

CHECKPOINT_ROWS = 256
"""Rows committed between two checkpoints of the WAL (SQLite's own default is about as often,
but runs them, fsync included, inside whichever commit crosses the line, and a call waits)."""

# SQLite result codes (the primary code, the low byte) that mean the file itself is unusable.
_CORRUPT_CODES = {11, 26}  # SQLITE_CORRUPT, SQLITE_NOTADB
BUSY_CODES = {5, 6}  # SQLITE_BUSY, SQLITE_LOCKED

_INHERITED: list[sqlite3.Connection] = []  # a forked child's copies of its parent's connections


class Database:
    """The SQLite file (or memory) of one history and its one connection.

    Everything that uses the connection holds ``lock``; ``connection()`` opens it on first use
    (and again after ``drop()``).
    """

    def __init__(
        self,
        path: str | Path,
        busy_timeout: float,
        problems: Problems,
        journal: Journal | None,
        log: CommitLog | None = None,
    ) -> None:
        self.path = path
        self.busy_timeout = busy_timeout
        self.problems = problems
        self.journal = journal
        self.log = log
        self.moved_aside: list[Path] = []
        self.lock = threading.RLock()
        self.impatient = False  # the connection gives up at once on a lock (commit_now)
        self._conn: sqlite3.Connection | None = None
        self._since_checkpoint = 0
        self._checkpointing = False
        self._checkpointer: threading.Thread | None = None

    @property
    def in_memory(self) -> bool:
        return str(self.path) == ":memory:"

    @property
    def open_connection(self) -> sqlite3.Connection | None:
        """The connection if it is open (nothing is opened)."""
        return self._conn

    def connection(self) -> sqlite3.Connection:
        """The connection, opened on first use: schema, indexes, and the rows of orphaned
        commit logs and of the journal replayed.
        The caller holds ``lock``."""
        if self.impatient and self._conn is not None:
            self._conn.execute(f"PRAGMA busy_timeout = {int(self.busy_timeout * 1000)}")
            self.impatient = False
        if self._conn is None and not self.in_memory:
            damage = wal_damage(Path(self.path))
            if damage is not None:
                self._set_aside_damaged_log(damage)  # opens the new file's connection
        if self._conn is None:
            if not self.in_memory:
                Path(self.path).parent.mkdir(parents=True, exist_ok=True)
            conn = sqlite3.connect(
                str(self.path), check_same_thread=False, timeout=self.busy_timeout
            )
            try:
                conn.execute("PRAGMA journal_mode=WAL")
                conn.execute("PRAGMA synchronous=NORMAL")
                conn.execute("PRAGMA wal_autocheckpoint=0")
                conn.executescript(SCHEMA)
                migrate(conn)
                ensure_indexes(conn)
            except BaseException:
                conn.close()
                raise
            self._conn = conn
            self._replay(conn)
        return self._conn

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

    def impatient_connection(self) -> sqlite3.Connection:
        """The connection, set to give up at once on a lock held elsewhere (kept so for the
        next such commit; ``connection()`` waits again)."""
        conn = self._conn if self._conn is not None else self.connection()
        if not self.impatient:
            conn.execute("PRAGMA busy_timeout = 0")
            self.impatient = True
        return conn

    def drop(self) -> None:
        """Close the connection (a broken handle is discarded); the next use opens it again."""
        self.impatient = False
        if self._conn is not None:
            with contextlib.suppress(sqlite3.Error):  # closing a broken handle; it is discarded
                self._conn.close()
            self._conn = None

    def _replay(self, conn: sqlite3.Connection) -> None:
        if self.log is not None:
            self.log.replay(conn, self.problems)
        journal = self.journal
        if journal is None or not journal.exists():
            return
        rows, unreadable = journal.read()
        for sentence in unreadable:
            self.problems.add("replay", f"history journal: {sentence}")
        values = [[row.get(name) for name in STORED] for row in rows]
        try:
            with conn:
                taken = insert_rows(conn, values)
        except sqlite3.Error as exc:
            if getattr(exc, "sqlite_errorcode", 0) & 0xFF in BUSY_CODES:
                return  # still locked: the rows wait in the journal, counted by health()
            self.problems.add(
                "replay",
                f"replaying {len(rows)} journaled row(s) failed ({exc}); they stay in "
                f"{journal.path.name} for the next open",
            )
            return
        for index, sentence in taken.items():
            self.problems.add("replay", f"history journal: {sentence}", (str(values[index][0]),))
        journal.remove()

    # ── damage ───────────────────────────────────────────────────────────────────────────
    def is_corrupt(self, exc: BaseException) -> bool:
        """True when ``exc`` says the file itself cannot be read by SQLite."""
        code = getattr(exc, "sqlite_errorcode", None)
        return (
            not self.in_memory
            and isinstance(exc, sqlite3.DatabaseError)
            and code is not None
            and code & 0xFF in _CORRUPT_CODES
        )

    def move_aside(self, exc: BaseException) -> None:
        """Keep an unreadable file for the person, start a new one, and copy over every row
        that can still be read from the old."""
        name = Path(self.path).name
        self._start_anew(f"{name} could not be read by SQLite ({exc})")

    def _set_aside_damaged_log(self, damage: str) -> None:
        """SQLite would open the file and drop the damaged log's rows without a word (and
        delete the log on close): keep both aside instead, and salvage the rows of each."""
        name = Path(self.path).name
        self._start_anew(f"the write-ahead log beside {name} is damaged ({damage})", log=True)

    def _start_anew(self, what: str, log: bool = False) -> None:
        report = self.salvage(self.set_aside())
        kept_log = f", the log beside it as {report.original.name}-wal" if log else ""
        self.problems.add(
            "corrupt",
            f"{what}; a new history was started and {report}{kept_log}",
            salvage=report,
        )

    def set_aside(self) -> Path:
        """Move the file (and its WAL) aside byte for byte; returns where it now lies."""
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
        """Copy every row still readable in ``aside``, page by page, into a new file here."""
        return salvage_into(
            aside,
            self.connection(),
            stored=STORED,
            kinds=KINDS,
            insert=INSERT,
            new_path=Path(self.path),
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
        """A passive checkpoint on a connection and thread of its own: commits (and the
        writer's queue) go on meanwhile."""
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

    def wait_for_checkpoint(self) -> None:
        """Wait for a checkpoint under way: its connection open past ours would leave the WAL
        beside the file, which SQLite folds in and removes only as the last connection closes."""
        checkpointer = self._checkpointer
        if checkpointer is not None and checkpointer is not threading.current_thread():
            checkpointer.join()
