"""The spills other processes left: found, read and retired by whoever opens the history next.

A spill whose lock is free is an orphan: its process ended (``kill -9`` included) before SQLite
took its entries. A spill whose lock is held belongs to a live process, which writes it itself.
Whatever is at a spill's name and is not a spill of this user's is named and left alone: a
symlink, a file of another user, a file linked twice, a file whose first line is not a
spill's (never read past that line, never renamed or removed). A spill in the private
directory is read only when its first line names this history.
"""

from __future__ import annotations

import contextlib
import dataclasses
import fcntl
import os
from collections.abc import Collection, Iterator
from pathlib import Path

from workbench.history.row import reason
from workbench.history.spill._file import CHUNK
from workbench.history.spill._format import MAX_HEADER, Entry, history_named, read_entries
from workbench.history.spill._places import Place, Refused, open_checked, places, retire

DAMAGED = ".damaged"
"""Added to the name of a spill that held damaged lines, once its whole lines are written."""


@dataclasses.dataclass
class Orphan:
    """A spill whose process ended, locked by this one while it is read and retired."""

    place: Place
    name: str
    fd: int
    start: int  # the length of its first line
    problems: list[str] = dataclasses.field(default_factory=list)
    """What was wrong with its lines (damaged, torn), filled as they are read."""

    @property
    def path(self) -> Path:
        """Where the spill is."""
        return self.place.directory / self.name

    def entries(self) -> Iterator[Entry]:
        """The entries, oldest first, a chunk at a time; damaged lines are named in
        ``problems`` and skipped."""

        def chunks() -> Iterator[bytes]:
            at = self.start
            while chunk := os.pread(self.fd, CHUNK, at):
                at += len(chunk)
                yield chunk

        return read_entries(chunks(), self.name, self.problems)

    @property
    def damaged(self) -> bool:
        """True when a line of it was damaged (the problems name which)."""
        return any("is damaged" in problem for problem in self.problems)

    def retire(self) -> str | None:
        """Once every whole entry is written: remove the file, or keep one that held damaged
        lines aside as ``<name>.damaged`` for a person (returned, said in ``problems``)."""
        fd, self.fd = self.fd, -1
        aside = DAMAGED if self.damaged else None
        return retire(self.place, self.name, fd, aside, self.problems, same_file=True)

    def release(self) -> None:
        """Let go of the file without retiring it (its entries were not written)."""
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1


def orphans(database: Path, own: Collection[Path] = ()) -> tuple[list[Orphan], list[str]]:
    """The orphaned spills of the history at ``database`` (each locked by this process until
    it is retired or released), and a sentence for each file at a spill's name that was left
    alone. ``own`` are this process's spill files, never taken for orphans."""
    found: list[Orphan] = []
    refused: list[str] = []
    for place in places(database):
        try:
            with place.opened(create=False) as dfd:
                names = place.names(entry.name for entry in os.scandir(dfd))
                for name in names:
                    if place.directory / name in own:
                        continue
                    try:
                        orphan = _taken(place, name, dfd, database)
                    except Refused as exc:
                        refused.append(str(exc))
                        continue
                    except FileNotFoundError:
                        continue  # retired by its own process or another meanwhile
                    if orphan is not None:
                        found.append(orphan)
        except FileNotFoundError:
            continue  # no such directory: no spill there
        except OSError as exc:
            refused.append(f"spills in {place.directory} could not be looked for ({reason(exc)})")
    return found, refused


def _taken(place: Place, name: str, dfd: int, database: Path) -> Orphan | None:
    """The orphan at ``name``, locked; None when its process lives or it is empty."""
    fd = open_checked(name, dfd, place.directory)
    try:
        raw = os.pread(fd, MAX_HEADER, 0)
        if not raw:
            os.close(fd)
            return None  # an empty file: nothing to write, and not ours to remove
        first = raw[: raw.find(b"\n") + 1]
        named = history_named(first) if first else None
        if named is None:
            raise Refused(
                f"{place.directory / name} is at a spill's name but is not a spill (its first "
                "line does not name the format); it is left alone"
            )
        if place.private and named != str(database.resolve()):
            os.close(fd)
            return None  # another history's spill under a key like this one's
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            return None  # its process lives and writes it itself
    except BaseException:
        with contextlib.suppress(OSError):  # closed already on the ways that return
            os.close(fd)
        raise
    return Orphan(place, name, fd, len(first))
