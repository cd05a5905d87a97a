"""The history's commit log: an ended call's row is committed when it is appended here.

Each process that writes a history keeps a log file of its own beside the SQLite file
(``history.sqlite.log-<random>``): one line per stored row (its scalar columns as a JSON
array, a tab, then its JSON document as stored, never escaped again), appended with one
``write`` and no ``fsync``, which is the promise SQLite's WAL makes under
``synchronous=NORMAL``: the row survives the process being killed, not the machine losing
power. The writer thread then fills SQLite from these rows in batches, behind the calls; once
every row the log holds is committed in SQLite (or journaled), the log is cut back to nothing,
and closing the history removes it.

A log is locked (``flock``) by its process for as long as the process lives, so the kernel
itself says which logs are orphaned: opening a history replays every log beside it whose lock
is free (its process ended, perhaps by ``kill -9``) and removes it once its rows are committed.
A log whose lock is held belongs to a live process, which fills SQLite from it itself; its rows
become visible to other processes once they are in SQLite, a few milliseconds behind the calls.

The file is created with ``O_EXCL``, ``O_NOFOLLOW`` and mode 0600. A file at a log's name that
is a symlink, not a regular file, owned by another user or linked twice is never read nor
removed, and is named in the history's problems. A torn last line (the process died inside the
``write``) is named and skipped; its call never learned that it ended. A damaged line before the
end is named too, and the file is kept aside as ``<name>.unreplayed`` for a person to read.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import secrets
import sqlite3
import stat
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from workbench.history._codec import STORED
from workbench.history._insert import insert_rows
from workbench.history._problems import Problems, reason

ENABLED = os.environ.get("WORKBENCH_HISTORY_LOG", "1") != "0"
"""Whether a history opened from now on commits rows to a log (an internal switch, read as
each ``History`` is made: off, or ``WORKBENCH_HISTORY_LOG=0``, commits each row to SQLite
before its call ends, as before the log; the benchmarks compare the two in one run)."""

UNREPLAYED = ".unreplayed"

_CREATE = os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC


class LogRefused(OSError):
    """A file at a log's name that another user could have planted or can change."""


class CommitLog:
    """This process's log beside one history file, and the replay of the logs of others."""

    def __init__(self, database: Path) -> None:
        self.directory = database.parent
        self.prefix = database.name + ".log-"
        self._lock = threading.Lock()
        self.forget()

    def forget(self) -> None:
        """Hold no log (in a forked child: the parent's log and its lock are the parent's;
        the child's copy of the descriptor is closed, so the lock still dies with the parent)."""
        fd = getattr(self, "_fd", -1)
        if fd >= 0:
            with contextlib.suppress(OSError):  # the descriptor is the parent's to keep
                os.close(fd)
        self._lock = threading.Lock()
        self._fd = -1
        self._name = ""
        self._size = 0
        self._unfilled = 0
        self.broken: str | None = None  # why this process stopped using its log

    @property
    def path(self) -> Path | None:
        """This process's log file, once it has one."""
        return self.directory / self._name if self._name else None

    @property
    def unfilled(self) -> int:
        """Rows appended to this process's log and not yet committed in SQLite (or journaled)."""
        return self._unfilled

    # ── appending ────────────────────────────────────────────────────────────────────────
    def append(self, rows: Sequence[list[Any]], then: Callable[[], None]) -> None:
        """Append ``rows`` (stored values) in one ``write``, then run ``then`` under the same
        lock (so the order rows are handed on in is the order of the log). Raises ``OSError``
        when the log cannot take them, leaving the file as it was."""
        data = "".join(_line(values) for values in rows).encode()
        with self._lock:
            if self.broken is not None:
                raise OSError(self.broken)
            fd = self._fd if self._fd >= 0 else self._create()
            try:
                view = memoryview(data)
                while view:
                    view = view[os.write(fd, view) :]
            except OSError:
                self._cut_back()
                raise
            self._size += len(data)
            self._unfilled += len(rows)
            then()

    def filled(self, count: int) -> None:
        """``count`` logged rows are now committed in SQLite (or journaled): once none is left
        unfilled, the log is cut back to nothing."""
        if count <= 0:
            return
        with self._lock:
            self._unfilled = max(0, self._unfilled - count)
            if self._unfilled or self._fd < 0 or not self._size:
                return
            try:
                os.ftruncate(self._fd, 0)
            except OSError as exc:  # the rows are committed: only the space is not handed back
                self.broken = f"the log could not be cut back ({reason(exc)})"
                return
            self._size = 0

    def close(self) -> bool:
        """Remove this process's log if every row in it is committed; True if none is left.
        A log still holding rows stays for the next open to replay."""
        with self._lock:
            if self._fd < 0:
                return True
            if self._unfilled:
                return False
            path = self.directory / self._name
            with contextlib.suppress(FileNotFoundError):  # removed already: nothing to keep
                path.unlink()
            os.close(self._fd)
            self._fd, self._name, self._size = -1, "", 0
            return True

    def _create(self) -> int:
        self.directory.mkdir(parents=True, exist_ok=True)
        for _ in range(8):
            name = f"{self.prefix}{secrets.token_hex(8)}"
            try:
                fd = os.open(self.directory / name, _CREATE, 0o600)
            except FileExistsError:
                continue  # someone else's file at that name: never ours to write
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                # Another process's replay may have taken the fresh, empty file for an
                # orphan and removed it before the lock was ours: then it is not ours to use.
                ours = (self.directory / name).stat().st_ino == os.fstat(fd).st_ino
            except (BlockingIOError, FileNotFoundError):
                ours = False
            except OSError:
                os.close(fd)
                raise
            if not ours:
                os.close(fd)
                continue
            self._fd, self._name, self._size = fd, name, 0
            return fd
        raise FileExistsError(f"no free log name beside {self.prefix[:-5]}")

    def _cut_back(self) -> None:
        """A write that failed part way leaves the log as it was before it."""
        try:
            os.ftruncate(self._fd, self._size)
        except OSError as exc:
            self.broken = f"a torn append could not be cut back ({reason(exc)})"

    # ── the logs of other processes ──────────────────────────────────────────────────────
    def others_rows(self) -> list[dict[str, Any]]:
        """The rows in the logs of other processes (and of other histories of this file in
        this one), read without taking their locks: calls they committed that SQLite may not
        hold yet. A file that is not a log of this user's is skipped (``replay`` names it)."""
        rows: list[dict[str, Any]] = []
        for name in self._other_logs()[0]:
            try:
                fd = _open_checked(self.directory / name)
            except OSError:
                continue  # gone meanwhile, or refused: named when the history is opened
            with os.fdopen(fd, "rb") as handle:
                data = handle.read()
            # A line still being written is no row yet; a damaged one is named by replay.
            rows += _parse(name, data)[0]
        return rows

    def replay(self, conn: sqlite3.Connection, problems: Problems) -> None:
        """Commit the rows of every orphaned log beside the file, then remove each log; a log
        whose process lives is left to it, and a file that is not a log of this user's is
        named and left alone."""
        names, failure = self._other_logs()
        if failure is not None:
            problems.add("replay", f"the history's logs could not be listed ({failure})")
        for name in names:
            self._replay_one(conn, problems, name)

    def _other_logs(self) -> tuple[list[str], str | None]:
        """The names of the logs beside the file but this process's own, and why they could
        not be listed (None when they could)."""
        try:
            names = sorted(
                entry.name
                for entry in os.scandir(self.directory)
                if entry.name.startswith(self.prefix)
                and not entry.name.endswith(UNREPLAYED)
                and entry.name != self._name
            )
        except FileNotFoundError:
            return [], None  # no directory yet: no log either
        except OSError as exc:
            return [], reason(exc)
        return names, None

    def _replay_one(self, conn: sqlite3.Connection, problems: Problems, name: str) -> None:
        path = self.directory / name
        try:
            fd = _open_checked(path)
        except FileNotFoundError:
            return  # replayed and removed by another process meanwhile
        except OSError as exc:
            problems.add("replay", f"history log {name}: {reason(exc)}; it was not replayed")
            return
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                return  # its process is alive and fills SQLite from it itself
            with os.fdopen(os.dup(fd), "rb") as handle:
                data = handle.read()
            rows, torn, damaged = _parse(name, data)
            for sentence in torn + damaged:
                problems.add("replay", f"history log: {sentence}")
            values = [[row.get(column) for column in STORED] for row in rows]
            try:
                with conn:
                    taken = insert_rows(conn, values)
            except sqlite3.Error as exc:
                problems.add(
                    "replay",
                    f"replaying {len(rows)} logged row(s) failed ({exc}); they stay in {name} "
                    "for the next open",
                )
                return
            for index, sentence in taken.items():
                problems.add("replay", f"history log: {sentence}", (str(values[index][0]),))
            _retire(path, keep_aside=bool(damaged))
        finally:
            os.close(fd)


def _line(values: list[Any]) -> str:
    """One row as a log line: the scalars as a JSON array, a tab, the stored document as it
    is (compact JSON has no raw tab or newline); a document that is not such text is written
    inside a JSON object with the scalars instead."""
    document = values[-1]
    if isinstance(document, str) and "\n" not in document and "\t" not in document:
        return json.dumps(values[:-1], ensure_ascii=True) + "\t" + document + "\n"
    return json.dumps(dict(zip(STORED, values, strict=True)), ensure_ascii=True) + "\n"


def _row(line: bytes) -> dict[str, Any] | None:
    """The row a log line holds, or None when the line is not one."""
    head, tab, document = line.partition(b"\t")
    try:
        if not tab:
            row = json.loads(line)
            return row if isinstance(row, dict) else None
        scalars = json.loads(head)
        text = document.decode("utf-8")
    except (ValueError, RecursionError):
        return None
    if not isinstance(scalars, list) or len(scalars) != len(STORED) - 1 or not text:
        return None
    return dict(zip(STORED, [*scalars, text], strict=True))


def _open_checked(path: Path) -> int:
    """Open a log for reading without following a symlink; raises ``LogRefused`` unless it is
    a regular file of this user's with one link."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK)
    except OSError as exc:
        if exc.errno == 40:  # ELOOP: the name is a symlink
            raise LogRefused("it is a symlink") from exc
        raise
    info = os.fstat(fd)
    refusal = (
        "it is not a regular file"
        if not stat.S_ISREG(info.st_mode)
        else f"it belongs to another user (uid {info.st_uid})"
        if info.st_uid != os.geteuid()
        else "it has more than one link"
        if info.st_nlink != 1
        else None
    )
    if refusal is not None:
        os.close(fd)
        raise LogRefused(refusal)
    return fd


def _parse(name: str, data: bytes) -> tuple[list[dict[str, Any]], list[str], list[str]]:
    """The rows of a log, the sentence for a torn last line, and one for each damaged line."""
    torn: list[str] = []
    if data and not data.endswith(b"\n"):
        cut = data.rfind(b"\n") + 1
        torn.append(
            f"{name} ends in a torn line (its process ended inside the write; that call never "
            "learned it ended); skipped"
        )
        data = data[:cut]
    rows: list[dict[str, Any]] = []
    damaged: list[str] = []
    for number, line in enumerate(data.splitlines(), start=1):
        if not line.strip():
            continue
        row = _row(line)
        if row is None:
            damaged.append(f"{name} line {number} is not a whole row; skipped")
        else:
            rows.append(row)
    if damaged:
        damaged.append(f"{name} was kept as {name}{UNREPLAYED}")
    return rows, torn, damaged


def _retire(path: Path, keep_aside: bool) -> None:
    """Remove a replayed log, or keep one that held damaged lines aside for a person."""
    try:
        if keep_aside:
            path.replace(path.with_name(path.name + UNREPLAYED))
        else:
            path.unlink()
    except FileNotFoundError:
        return  # another process replayed and removed it at the same moment
