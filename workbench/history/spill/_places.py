"""Where a history's spills live: beside the history, or, when its directory refuses them (a
full or read-only disk), in this user's private directory in the temporary directory.

Anyone may create names in a shared directory, so nothing is trusted by its name. A spill is
opened without following a symlink, and used only while it is a regular file of this user's
with one link; the private directory (``workbench-<uid>``) only while it is this user's own,
mode 0700, and no symlink. There a spill is named by a key of the history's path, and read
only when its first line names that history.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import os
import re
import stat
import tempfile
from collections.abc import Iterator
from pathlib import Path

SUFFIX = re.compile(r"\.spill-[0-9a-f]{16}")
"""What follows a history's name (or key) in a spill's name: nothing else is ever taken for one."""


class Refused(OSError):
    """A file or directory at a spill's place that another user could have planted or change."""


@dataclasses.dataclass(frozen=True)
class Place:
    """A directory spills of one history go into, and the prefix of their names there."""

    directory: Path
    prefix: str
    private: bool  # the private directory: checked before use, and its spills name the history

    def names(self, listed: Iterator[str]) -> list[str]:
        """The names among ``listed`` that are spills' names here, sorted."""
        pattern = re.compile(re.escape(self.prefix) + SUFFIX.pattern)
        return sorted(name for name in listed if pattern.fullmatch(name))

    @contextlib.contextmanager
    def opened(self, create: bool) -> Iterator[int]:
        """A descriptor of the directory, checked when it is the private one; raises
        ``FileNotFoundError`` when it is absent, ``Refused`` when it is not this user's own."""
        if create and self.private:
            with contextlib.suppress(FileExistsError):  # an existing one is checked below
                self.directory.mkdir(mode=0o700)
        elif create:
            self.directory.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.directory, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC | os.O_NOFOLLOW)
        try:
            info = os.fstat(fd)
            if self.private and (info.st_uid != os.geteuid() or stat.S_IMODE(info.st_mode) & 0o77):
                raise Refused(
                    f"{self.directory} is not a private directory of this user (owner uid "
                    f"{info.st_uid}, mode {stat.S_IMODE(info.st_mode):o}); it is not used"
                )
            yield fd
        finally:
            os.close(fd)


def private_directory() -> Path:
    """This user's directory for spills in the temporary directory."""
    return Path(tempfile.gettempdir()) / f"workbench-{os.geteuid()}"


def places(database: Path) -> tuple[Place, Place]:
    """Where spills of the history at ``database`` go: beside it first, then the private
    directory (named by a key of the history's resolved path)."""
    key = hashlib.sha256(str(database.resolve()).encode("utf-8", "replace")).hexdigest()[:16]
    return (
        Place(database.parent, database.name, private=False),
        Place(private_directory(), f"history-{key}", private=True),
    )


def open_checked(name: str, directory_fd: int, where: Path, flags: int = os.O_RDONLY) -> int:
    """Open the file ``name`` without following a symlink; raises ``Refused`` unless it is a
    regular file of this user's with one link."""
    try:
        fd = os.open(
            name, flags | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK, dir_fd=directory_fd
        )
    except OSError as exc:
        if exc.errno == 40:  # ELOOP: the name is a symlink
            raise Refused(f"{where / name} is a symlink; it is left alone") from exc
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
        raise Refused(f"{where / name}: {refusal}; it is left alone")
    return fd


def retire(
    place: Place, name: str, fd: int, aside: str | None, problems: list[str], *, same_file: bool
) -> str | None:
    """Remove the file ``name`` of ``place`` once what it held is written, or, given
    ``aside``, keep it for a person as ``name + aside`` (said in ``problems``, the new name
    returned). With ``same_file``, only while the name still holds the file open at ``fd``.
    None when another process retired it first. ``fd`` is closed either way."""
    kept = None
    try:
        with place.opened(create=False) as dfd:
            if same_file and os.stat(name, dir_fd=dfd).st_ino != os.fstat(fd).st_ino:
                return None  # the name holds another file now: not this one's to retire
            if aside is not None:
                kept = name + aside
                os.rename(name, kept, src_dir_fd=dfd, dst_dir_fd=dfd)
                problems.append(f"{name} was kept as {kept}")
            else:
                os.unlink(name, dir_fd=dfd)
    except FileNotFoundError:
        return None  # retired by another process at the same moment
    finally:
        os.close(fd)
    return kept
