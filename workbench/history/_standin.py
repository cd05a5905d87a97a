"""The journal's stand-in in the shared temporary directory, safe from other users.

Anyone can create names in the temporary directory, so nothing there is trusted by its name.
The stand-in lives in a directory of this user's own (``workbench-<uid>``, mode 0700, owned by
this user, not a symlink); a directory at that name that fails any of those checks is never
written or read. The file is opened without following a symlink (``O_NOFOLLOW``), created with
``O_EXCL`` and mode 0600, and used only while it is a regular file of this user with one link.
Each line carries an HMAC under a key kept in that directory, so only rows this user wrote
(and that were not altered) are replayed; any other line is named and left unreplayed.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import json
import os
import secrets
import stat
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

_KEY_NAME = "journal.key"
_KEY_BYTES = 32


class UnsafeLocation(OSError):
    """A stand-in directory or file another user could have planted or can write."""


def private_directory() -> Path:
    """This user's directory for stand-in journals in the temporary directory."""
    return Path(tempfile.gettempdir()) / f"workbench-{os.geteuid()}"


@contextlib.contextmanager
def _opened_directory(directory: Path, create: bool) -> Iterator[int]:
    """A descriptor of ``directory`` once it is checked to be this user's private directory;
    raises ``FileNotFoundError`` when it is absent (and not to be created), ``UnsafeLocation``
    when anything about it could let another user in."""
    if create:
        with contextlib.suppress(FileExistsError):  # an existing one is checked below
            directory.mkdir(mode=0o700)
    fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
    try:
        info = os.fstat(fd)
        if info.st_uid != os.geteuid() or stat.S_IMODE(info.st_mode) & 0o077:
            raise UnsafeLocation(
                f"{directory} is not a private directory of this user (owner uid "
                f"{info.st_uid}, mode {stat.S_IMODE(info.st_mode):o}); it is not used"
            )
        yield fd
    finally:
        os.close(fd)


def _open_private_file(name: str, flags: int, directory_fd: int, where: Path) -> int:
    """Open (or with ``O_CREAT``, create exclusively, else open) ``name`` in the checked
    directory without following a symlink, and check it is a private regular file."""
    base = os.O_NOFOLLOW | os.O_CLOEXEC | (flags & ~os.O_CREAT)
    fd = -1
    if flags & os.O_CREAT:
        with contextlib.suppress(FileExistsError):  # an existing file is checked below
            fd = os.open(name, base | os.O_CREAT | os.O_EXCL, 0o600, dir_fd=directory_fd)
    if fd < 0:
        fd = os.open(name, base, dir_fd=directory_fd)
    info = os.fstat(fd)
    if (
        not stat.S_ISREG(info.st_mode)
        or info.st_uid != os.geteuid()
        or info.st_nlink != 1
        or stat.S_IMODE(info.st_mode) & 0o077
    ):
        os.close(fd)
        raise UnsafeLocation(f"{where / name} is not a private file of this user; it is not used")
    return fd


def _key(directory_fd: int, where: Path, create: bool) -> bytes:
    flags = os.O_RDWR | (os.O_CREAT if create else 0)
    fd = _open_private_file(_KEY_NAME, flags, directory_fd, where)
    try:
        key = os.read(fd, _KEY_BYTES)
        if not key and create:
            key = secrets.token_bytes(_KEY_BYTES)
            os.write(fd, key)
            os.fsync(fd)
        if len(key) != _KEY_BYTES:
            raise UnsafeLocation(f"{where / _KEY_NAME} is not a whole key; it is not used")
        return key
    finally:
        os.close(fd)


def _signature(key: bytes, row: dict[str, Any]) -> str:
    text = json.dumps(row, ensure_ascii=True, sort_keys=True).encode()
    return hmac.new(key, text, hashlib.sha256).hexdigest()


def append_signed(name: str, rows: list[dict[str, Any]]) -> Path:
    """Append ``rows`` to the stand-in ``name``, each line signed, fsync'd; returns its path.
    Raises ``OSError`` (``UnsafeLocation`` when the place is not this user's own)."""
    directory = private_directory()
    with _opened_directory(directory, create=True) as directory_fd:
        key = _key(directory_fd, directory, create=True)
        lines = (json.dumps({"row": row, "hmac": _signature(key, row)}) for row in rows)
        data = "".join("\n" + line for line in lines).encode() + b"\n"
        flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT
        fd = _open_private_file(name, flags, directory_fd, directory)
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
            os.fsync(fd)
        finally:
            os.close(fd)
        os.fsync(directory_fd)
    return directory / name


def read_signed(name: str) -> tuple[list[dict[str, Any]], list[str], int]:
    """The rows of the stand-in ``name`` this user signed, a sentence for each line that was
    not replayed, and the count of lines that failed the signature check."""
    directory = private_directory()
    try:
        with _opened_directory(directory, create=False) as directory_fd:
            fd = _open_private_file(name, os.O_RDONLY, directory_fd, directory)
            with os.fdopen(fd, "rb") as handle:
                data = handle.read()
            key = _key(directory_fd, directory, create=False)
    except FileNotFoundError:
        return [], [], 0
    except OSError as exc:
        return [], [f"the stand-in journal {directory / name} was not read: {exc}"], 0
    entries, problems = json_lines(name, data)
    rows: list[dict[str, Any]] = []
    forged = 0
    for number, entry in entries:
        row = entry.get("row") if isinstance(entry, dict) else None
        mac = entry.get("hmac") if isinstance(entry, dict) else None
        if (
            isinstance(row, dict)
            and isinstance(mac, str)
            and hmac.compare_digest(mac, _signature(key, row))
        ):
            rows.append(row)
        else:
            forged += 1
            problems.append(
                f"{name} line {number} was not written by this user's workbench (its "
                "signature does not match); not replayed"
            )
    return rows, problems, forged


def json_lines(name: str, data: bytes) -> tuple[list[tuple[int, Any]], list[str]]:
    """Each complete JSON line of a journal file with its line number, and a sentence for
    each line that is not whole (a crash mid-append tears the last one)."""
    entries: list[tuple[int, Any]] = []
    problems: list[str] = []
    for number, line in enumerate(data.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            entries.append((number, json.loads(line)))
        except (ValueError, RecursionError):
            problems.append(f"{name} line {number} is not a whole row; skipped")
    return entries, problems


def row_lines(name: str, data: bytes) -> tuple[list[dict[str, Any]], list[str]]:
    """The row objects of a JSON-lines file, and a sentence for each line that is not one."""
    entries, problems = json_lines(name, data)
    rows: list[dict[str, Any]] = []
    for number, row in entries:
        if isinstance(row, dict):
            rows.append(row)
        else:
            problems.append(f"{name} line {number} is not a row object; skipped")
    return rows, problems


def exists(name: str) -> bool:
    """True when a stand-in ``name`` is present in this user's directory."""
    return os.path.lexists(private_directory() / name)


def remove(name: str, keep_aside: bool) -> None:
    """Delete the stand-in ``name`` once its rows are committed; with ``keep_aside`` (it held
    lines that were not replayed) rename it to ``<name>.unverified`` for a person to look at."""
    directory = private_directory()
    try:
        with _opened_directory(directory, create=False) as directory_fd:
            if keep_aside:
                os.replace(
                    name, name + ".unverified", src_dir_fd=directory_fd, dst_dir_fd=directory_fd
                )
            else:
                os.unlink(name, dir_fd=directory_fd)
            os.fsync(directory_fd)
    except FileNotFoundError:
        return  # nothing was there to remove
    except UnsafeLocation:
        return  # read_signed named it already, and nothing in it was replayed
