"""Holding a history file alone: the only condition under which it is ever moved aside.

What another process is doing (appending to the write-ahead log, checkpointing it, restarting
it) must never look like damage, so a file is judged damaged, and moved, only while no other
connection anywhere has it open and none can open it. SQLite says so itself: in WAL mode every
open connection holds a shared lock on the database file, and a connection in
``locking_mode=EXCLUSIVE`` gets its exclusive lock only when no other holds any. While that
connection is open, nobody else can open the file, so the file and its log are still.

Moving the file away under that connection is safe: SQLite checkpoints and removes the log on
close only when the file at the database's name is still the one it opened. A file SQLite
cannot read at all (``file is not a database``) takes no lock; then an open-file-description
lock over SQLite's lock bytes (the 512 at 1 GiB) plays the part, refused while any SQLite
connection, of any process and this one too, holds a lock there.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import sqlite3
import struct
from collections.abc import Iterator
from pathlib import Path

from workbench.history.row import reason

LOCK_BYTES = (1 << 30, 512)
"""Where SQLite's file locks lie in a database file: the lock-byte page at 1 GiB."""

_CORRUPT = {11, 26}  # SQLITE_CORRUPT, SQLITE_NOTADB


class Alone:
    """This process holds the file alone; ``conn`` (None for a file SQLite cannot read) is the
    exclusive connection, which may check it (``PRAGMA quick_check``)."""

    def __init__(self, conn: sqlite3.Connection | None) -> None:
        self.conn = conn

    def damage(self) -> str | None:
        """What SQLite itself reports wrong with the file, or None if it finds it sound."""
        if self.conn is None:
            return "file is not a database"
        try:
            found = [row[0] for row in self.conn.execute("PRAGMA quick_check(1)")]
        except sqlite3.DatabaseError as exc:
            return reason(exc)
        return None if found == ["ok"] else "; ".join(map(str, found))


@contextlib.contextmanager
def alone(path: Path) -> Iterator[Alone | None]:
    """``Alone`` while this process holds the file at ``path`` alone (nobody else can open it
    until the block ends), or None when another connection has it open. This process's own
    connections count as others: close them first."""
    try:
        conn = sqlite3.connect(path.resolve().as_uri() + "?mode=rw", uri=True, timeout=0)
    except sqlite3.Error:
        yield None
        return
    try:
        try:
            conn.execute("PRAGMA locking_mode=EXCLUSIVE")
            conn.execute("BEGIN EXCLUSIVE")
            conn.execute("COMMIT")  # the lock stays: exclusive mode keeps it until close
        except sqlite3.DatabaseError as exc:
            if (getattr(exc, "sqlite_errorcode", 0) or 0) & 0xFF not in _CORRUPT:
                yield None  # busy: someone else has the file open
                return
            conn.close()
            with _unreadable_alone(path) as held:
                yield held
            return
        yield Alone(conn)
    finally:
        conn.close()


@contextlib.contextmanager
def _unreadable_alone(path: Path) -> Iterator[Alone | None]:
    """For a file SQLite cannot read: ``Alone(None)`` while no SQLite lock is held on it."""
    try:
        fd = os.open(path, os.O_RDWR | os.O_CLOEXEC | os.O_NOFOLLOW)
    except OSError:
        yield None
        return
    start, length = LOCK_BYTES
    try:
        # struct flock: l_type, l_whence, l_start, l_len, l_pid (0 for an OFD lock).
        request = struct.pack("hhqqi4x", fcntl.F_WRLCK, os.SEEK_SET, start, length, 0)
        try:
            fcntl.fcntl(fd, fcntl.F_OFD_SETLK, request)
        except OSError:
            yield None  # a connection holds a lock on it
            return
        yield Alone(None)
    finally:
        # Closing this descriptor drops this process's POSIX locks on the file: there are none,
        # or the lock above would have been refused.
        os.close(fd)
