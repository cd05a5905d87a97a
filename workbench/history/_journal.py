"""The journal: rows the history could not write to SQLite, kept beside it until they are.

An append-only file of JSON lines (one stored row per line), each append flushed and fsync'd
before anyone is told the row is safe. The next time the history opens it replays the journal
into SQLite and removes the file only after that transaction committed. A torn last line (the
process died mid-append) is skipped and named; every complete line is replayed.

When the database's own directory cannot take the journal either (a full disk, a read-only
mount), the rows go to a stand-in journal, named after the database's path, in this user's
private directory in the system's temporary directory (see ``_standin``); the next open
replays the rows of it this user signed, and only those.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

from workbench.history import _standin
from workbench.history._problems import reason


class Journal:
    """The JSON-lines file beside a history database (``history.sqlite.journal.jsonl``), and
    its stand-in in the temporary directory."""

    def __init__(self, database: Path) -> None:
        self.path = database.with_name(database.name + ".journal.jsonl")
        key = hashlib.sha256(str(database.resolve()).encode("utf-8", "replace")).hexdigest()[:16]
        self._standin = f"journal-{key}.jsonl"
        self.fallback = _standin.private_directory() / self._standin
        self._unverified = False

    def append(self, rows: list[dict[str, Any]]) -> Path:
        """Append ``rows`` durably (fsync'd) and return the file that holds them: the journal
        beside the database, or its stand-in when that one cannot be written. Raises
        ``OSError`` when neither can."""
        # Each append starts on a fresh line, so a line torn by a crash or a full disk never
        # swallows the rows appended after it.
        data = "".join("\n" + json.dumps(row, ensure_ascii=True) for row in rows).encode() + b"\n"
        try:
            _append(self.path, data)
        except OSError as beside:
            try:
                return _standin.append_signed(self._standin, rows)
            except OSError as standin:
                raise OSError(
                    beside.errno, f"{reason(beside)}; the stand-in too: {reason(standin)}"
                ) from standin
        return self.path

    def read(self) -> tuple[list[dict[str, Any]], list[str]]:
        """The journaled rows of both files (of the stand-in, only those this user signed),
        and a sentence for each line that was not replayed."""
        rows, problems = _read(self.path)
        signed, refused, forged = _standin.read_signed(self._standin)
        self._unverified = forged > 0
        return rows + signed, problems + refused

    def exists(self) -> bool:
        """True while rows wait in a journal."""
        return self.path.exists() or _standin.exists(self._standin)

    def remove(self) -> None:
        """Delete the journals (after their rows were committed to SQLite); a stand-in that
        held lines not replayed is kept aside as ``<name>.unverified`` instead."""
        self.path.unlink(missing_ok=True)
        _fsync_directory(self.path.parent)
        _standin.remove(self._standin, keep_aside=self._unverified)


def _append(path: Path, data: bytes) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        view = memoryview(data)
        while view:
            written = os.write(fd, view)
            view = view[written:]
        os.fsync(fd)
    finally:
        os.close(fd)
    _fsync_directory(path.parent)


def _read(path: Path) -> tuple[list[dict[str, Any]], list[str]]:
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return [], []
    except OSError as exc:
        return [], [f"{path.name} could not be read ({exc.strerror or exc})"]
    return _standin.row_lines(path.name, data)


def _fsync_directory(directory: Path) -> None:
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return  # some filesystems cannot open a directory; the file itself was synced
    try:
        os.fsync(fd)
    except OSError:
        pass  # fsync of a directory is unsupported on some filesystems; the data is synced
    finally:
        os.close(fd)
