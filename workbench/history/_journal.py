"""The journal: rows the history could not write to SQLite, kept beside it until they are.

An append-only file of JSON lines (one stored row per line), each append flushed and fsync'd
before anyone is told the row is safe. The next time the history opens it replays the journal
into SQLite and removes the file only after that transaction committed. A torn last line (the
process died mid-append) is skipped and named; every complete line is replayed.

When the database's own directory cannot take the journal either (a full disk, a read-only
mount), the rows go to a second journal in the system's temporary directory, named after the
database's path, which the next open replays too.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from pathlib import Path
from typing import Any


class Journal:
    """The JSON-lines file beside a history database (``history.sqlite.journal.jsonl``), and
    its stand-in in the temporary directory."""

    def __init__(self, database: Path) -> None:
        self.path = database.with_name(database.name + ".journal.jsonl")
        key = hashlib.sha256(str(database.resolve()).encode("utf-8", "replace")).hexdigest()[:16]
        self.fallback = Path(tempfile.gettempdir()) / f"workbench-journal-{key}.jsonl"

    @property
    def paths(self) -> tuple[Path, Path]:
        """Where rows are journaled, in the order tried."""
        return self.path, self.fallback

    def append(self, rows: list[dict[str, Any]]) -> Path:
        """Append ``rows`` durably (fsync'd) and return the file that holds them: the journal
        beside the database, or its stand-in when that one cannot be written. Raises
        ``OSError`` when neither can."""
        # Each append starts on a fresh line, so a line torn by a crash or a full disk never
        # swallows the rows appended after it.
        data = "".join("\n" + json.dumps(row, ensure_ascii=True) for row in rows).encode() + b"\n"
        failure: OSError | None = None
        for path in self.paths:
            try:
                _append(path, data)
            except OSError as exc:
                failure = failure or exc
                continue
            return path
        assert failure is not None
        raise failure

    def read(self) -> tuple[list[dict[str, Any]], list[str]]:
        """The journaled rows of both files, and a sentence for each line that could not be
        read."""
        rows: list[dict[str, Any]] = []
        problems: list[str] = []
        for path in self.paths:
            found, unreadable = _read(path)
            rows += found
            problems += unreadable
        return rows, problems

    def exists(self) -> bool:
        """True while rows wait in a journal."""
        return any(path.exists() for path in self.paths)

    def remove(self) -> None:
        """Delete the journals (after their rows were committed to SQLite)."""
        for path in self.paths:
            path.unlink(missing_ok=True)
            _fsync_directory(path.parent)


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
    rows: list[dict[str, Any]] = []
    problems: list[str] = []
    for number, line in enumerate(data.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except (ValueError, RecursionError):
            problems.append(f"{path.name} line {number} is not a whole row; skipped")
            continue
        if isinstance(row, dict):
            rows.append(row)
        else:
            problems.append(f"{path.name} line {number} is not a row object; skipped")
    return rows, problems


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
