"""This process's spill of one history: the entries SQLite would not take, in order, on disk
until it does.

A file is made on first need (in the first place of ``places`` that takes it), locked with
``flock`` for as long as the process lives, and given its name only once its first line is
written and the lock held (an unnamed ``O_TMPFILE`` linked into place), so no other process
ever sees it half made or unlocked. Each append is one ``write`` and no fsync: the promise of
SQLite's WAL under ``synchronous=NORMAL``, a killed process loses nothing. A write that fails
part way is cut back, so a file always ends on a whole line; when its disk refuses more (full,
read-only), the spill goes on in a new file in the next place that takes it, its entries after
the first file's. Emptied once SQLite took every entry; removed when closed empty, else left
for the next process that opens the history.
"""

from __future__ import annotations

import contextlib
import dataclasses
import errno
import fcntl
import itertools
import os
import secrets
import threading
from collections.abc import Iterator, Sequence
from pathlib import Path

from workbench.history.row import reason
from workbench.history.spill._format import Entry, header, lines_of, read_entries
from workbench.history.spill._places import Place, places

CHUNK = 1 << 20
"""Bytes read at a time when a spill is read back."""

_NO_TMPFILE = {errno.EOPNOTSUPP, errno.EISDIR, errno.EINVAL, errno.ENOENT}


@dataclasses.dataclass
class _File:
    """One file of the spill: where it is, its open descriptor, and what it holds."""

    place: Place
    name: str
    fd: int
    start: int  # the length of its first line
    size: int = 0  # bytes of entries
    count: int = 0  # entries
    refused: bool = False  # its disk took no more: later entries go to a later file

    @property
    def path(self) -> Path:
        return self.place.directory / self.name

    def chunks(self) -> Iterator[bytes]:
        """Its entries' bytes as they are now, read apart from any append that follows."""
        fd, end = os.dup(self.fd), self.start + self.size
        try:
            at = self.start
            while at < end and (chunk := os.pread(fd, min(CHUNK, end - at), at)):
                at += len(chunk)
                yield chunk
        finally:
            os.close(fd)

    def remove(self) -> None:
        """Unlink the file if its name still holds it, and let go of it."""
        with contextlib.suppress(FileNotFoundError), self.place.opened(create=False) as dfd:
            if os.stat(self.name, dir_fd=dfd).st_ino == os.fstat(self.fd).st_ino:
                os.unlink(self.name, dir_fd=dfd)
        os.close(self.fd)


class Spill:
    """This process's spill of the history at ``database`` (no file until first needed)."""

    def __init__(self, database: Path) -> None:
        self.database = database
        self._files: list[_File] = []
        self.forget()

    def forget(self) -> None:
        """Hold no file (in a forked child: the parent's spill and its lock are the parent's;
        the child's copies of the descriptors are closed, so the locks still die with the
        parent)."""
        for held in self._files:
            with contextlib.suppress(OSError):  # the descriptor is the parent's to keep
                os.close(held.fd)
        self._lock = threading.Lock()
        self._files = []

    @property
    def path(self) -> Path | None:
        """The file entries go to now, once this process has one."""
        return self._files[-1].path if self._files else None

    @property
    def paths(self) -> list[Path]:
        """Every file of the spill, oldest first."""
        return [held.path for held in self._files]

    @property
    def size(self) -> int:
        """Bytes of entries held."""
        return sum(held.size for held in self._files)

    @property
    def count(self) -> int:
        """Entries held."""
        return sum(held.count for held in self._files)

    # ── writing ──────────────────────────────────────────────────────────────────────────
    def append(self, entries: Sequence[Entry]) -> Path:
        """Append ``entries`` in one ``write`` to the newest file that takes them (a new one
        in the next place when the newest refuses); returns that file. Raises ``OSError``
        when no place takes them, leaving every file as it was."""
        data = lines_of(entries)
        with self._lock:
            failures: list[str] = []
            held = self._files[-1] if self._files and not self._files[-1].refused else None
            for _ in range(3):
                if held is None:
                    held = self._made(failures)
                    if held is None:
                        break
                try:
                    _write_all(held, data)
                except OSError as exc:
                    failures.append(f"{held.path}: {reason(exc)}")
                    held.refused = True
                    held = None
                    continue
                held.size += len(data)
                held.count += len(entries)
                return held.path
            raise OSError(errno.ENOSPC, "no place took the spill (" + "; ".join(failures) + ")")

    def empty(self) -> None:
        """Forget every entry (SQLite took them): the first file is cut back to its first
        line, the others removed."""
        with self._lock:
            if not self._files or not self.count:
                return
            first, *later = self._files
            for held in later:
                held.remove()
            os.ftruncate(first.fd, first.start)
            first.size = first.count = 0
            first.refused = False
            self._files = [first]

    def close(self) -> None:
        """Remove the files that hold no entry; leave the others, unlocked, for the next
        process that opens the history."""
        with self._lock:
            for held in self._files:
                if held.count:
                    os.close(held.fd)
                else:
                    held.remove()
            self._files = []

    # ── reading back ─────────────────────────────────────────────────────────────────────
    def entries(self) -> Iterator[Entry]:
        """The entries, oldest first, read a chunk at a time."""
        with self._lock:
            files = [(held.path.name, held.chunks()) for held in self._files if held.count]
        problems: list[str] = []  # none in files this process wrote and cut back on failure
        return itertools.chain.from_iterable(
            read_entries(chunks, name, problems) for name, chunks in files
        )

    # ── making a file ────────────────────────────────────────────────────────────────────
    def _made(self, failures: list[str]) -> _File | None:
        refusing = {held.place for held in self._files if held.refused}
        for place in places(self.database):
            if place in refusing:
                continue
            try:
                made = self._made_in(place)
            except OSError as exc:
                failures.append(f"{place.directory}: {reason(exc)}")
                continue
            self._files.append(made)
            return made
        return None

    def _made_in(self, place: Place) -> _File:
        first = header(self.database.resolve())
        with place.opened(create=True) as dfd:
            for _ in range(8):
                name = f"{place.prefix}.spill-{secrets.token_hex(8)}"
                fd = _locked_file(dfd, name, first)
                if fd >= 0:
                    return _File(place, name, fd, len(first))
        raise FileExistsError(f"no free spill name in {place.directory}")


def _write_all(held: _File, data: bytes) -> None:
    """Append ``data`` whole, or leave the file as it was (cut back) and raise."""
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(held.fd, view) :]
    except OSError:
        os.ftruncate(held.fd, held.start + held.size)
        raise


def _locked_file(dfd: int, name: str, first: bytes) -> int:
    """A file holding ``first``, locked, set to append, at ``name`` in the directory ``dfd``;
    -1 when the name is taken."""
    try:
        fd = os.open(".", os.O_RDWR | os.O_TMPFILE | os.O_CLOEXEC, 0o600, dir_fd=dfd)
    except OSError as exc:
        if exc.errno not in _NO_TMPFILE:
            raise
        return _named_file(dfd, name, first)  # this filesystem has no unnamed files
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        if os.write(fd, first) != len(first):
            raise OSError(errno.ENOSPC, "the spill's first line could not be written whole")
        os.link(f"/proc/self/fd/{fd}", name, dst_dir_fd=dfd, follow_symlinks=True)
    except FileExistsError:
        os.close(fd)
        return -1
    except OSError:
        os.close(fd)
        raise
    return _appending(fd)


def _named_file(dfd: int, name: str, first: bytes) -> int:
    """As ``_locked_file``, on a filesystem without unnamed files: made at its name at once."""
    try:
        fd = os.open(
            name,
            os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC,
            0o600,
            dir_fd=dfd,
        )
    except FileExistsError:
        return -1
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        if os.write(fd, first) != len(first):
            raise OSError(errno.ENOSPC, "the spill's first line could not be written whole")
    except OSError:
        os.close(fd)
        with contextlib.suppress(OSError):  # it was made just now, and is ours to remove
            os.unlink(name, dir_fd=dfd)
        raise
    return _appending(fd)


def _appending(fd: int) -> int:
    """``fd`` set to append: every write lands at the end, whoever else reads the file."""
    flags = fcntl.fcntl(fd, fcntl.F_GETFL)
    fcntl.fcntl(fd, fcntl.F_SETFL, flags | os.O_APPEND)
    return fd
