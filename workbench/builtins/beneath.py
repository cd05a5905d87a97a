"""Opening a path beneath a root without a window: one component at a time, from descriptors.

``open_beneath(root, parts)`` opens a directory descriptor of the root, then each component
relative to the descriptor of the directory before it, with ``O_NOFOLLOW``: no component is ever
looked up by a full path name, so swapping a directory for a symbolic link between a check and
an open gains nothing. The caller reads from (or lists) the descriptor it gets back, which is
the very file that was checked.

Symbolic links under the root are resolved here, never by the kernel: a link's target is read
with ``readlinkat`` and walked the same way, ``..`` steps back to a descriptor already held
(never through the file system's ``..``). A target that leaves the root, by ``..`` or by an
absolute path elsewhere, is refused as ``invalid_args`` and never opened; one that stays inside
is followed. More than 40 links in one lookup is a loop, also refused.

A hard link cannot be told apart from the file it names: a hard link under the root to a file
outside it is read like any file. Only the person who can write under the root can make one.
"""

from __future__ import annotations

import errno
import os
import stat
from collections import deque
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

MAX_LINKS = 40
RETRIES = 5  # a name swapped between two looks is looked at again
NAME_MAX = 255
_OPEN = os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK | os.O_NOCTTY
_NOT_A_LINK = (errno.EINVAL, errno.ENOENT)


class Outside(Exception):
    """A symbolic link at ``link`` (relative to the root) points outside the root."""

    def __init__(self, link: str) -> None:
        super().__init__(link)
        self.link = link


class Missing(Exception):
    """A component does not exist (or a file stands where a directory is needed); ``found`` is
    the deepest directory that exists, relative to the root."""

    def __init__(self, found: str) -> None:
        super().__init__(found)
        self.found = found


class Unopenable(Exception):
    """The lookup cannot be done: a loop of links, a name too long, no permission."""


@dataclass(frozen=True)
class Opened:
    """A descriptor of the file or directory a path named, and its status as opened."""

    fd: int
    status: os.stat_result

    @property
    def is_dir(self) -> bool:
        return stat.S_ISDIR(self.status.st_mode)

    @property
    def is_regular(self) -> bool:
        return stat.S_ISREG(self.status.st_mode)


class _Walk:
    """The directories held open so far, from the root down, with their names."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.fds = [os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)]
        self.names: list[str] = []

    def here(self, name: str | None = None) -> str:
        names = self.names if name is None else [*self.names, name]
        return "/".join(names) or "."

    def up(self) -> bool:
        if len(self.fds) == 1:
            return False
        os.close(self.fds.pop())
        self.names.pop()
        return True

    def to_root(self) -> None:
        while self.up():
            pass

    def enter(self, fd: int, name: str) -> None:
        self.fds.append(fd)
        self.names.append(name)

    def close(self) -> None:
        for fd in self.fds:
            os.close(fd)
        self.fds = []


def _link_target(walk: _Walk, name: str) -> str | None:
    try:
        return os.readlink(name, dir_fd=walk.fds[-1])
    except OSError as exc:
        if exc.errno in _NOT_A_LINK:
            return None  # not (or no longer) a link
        raise


def _inside_parts(root: Path, target: str) -> list[str] | None:
    """The components of an absolute link target below ``root``; None when it is elsewhere."""
    parts = PurePosixPath(target).parts[1:]
    root_parts = root.parts[1:]
    if tuple(parts[: len(root_parts)]) != root_parts:
        return None
    return list(parts[len(root_parts) :])


def _open_component(walk: _Walk, name: str, last: bool) -> int | str:
    """The descriptor of ``name`` in the current directory, or its link target when it is a
    symbolic link."""
    flags = _OPEN if last else _OPEN | os.O_DIRECTORY
    for _ in range(RETRIES):
        try:
            return os.open(name, flags, dir_fd=walk.fds[-1])
        except OSError as exc:
            error = exc
        if error.errno not in (errno.ELOOP, errno.ENOTDIR, errno.EMLINK):
            break
        target = _link_target(walk, name)
        if target is not None:
            return target
        # Not a link now: it was swapped between the two looks (look again), or it is a
        # plain file where a directory is needed (the same answer every time).
    if error.errno in (errno.ENOENT, errno.ENOTDIR):
        raise Missing(walk.here()) from None
    if error.errno == errno.ENAMETOOLONG:
        raise Unopenable("a name in it is too long") from None
    if error.errno in (errno.EACCES, errno.EPERM):
        raise Unopenable(f"`{walk.here(name)}` may not be read (permission denied)") from None
    reason = os.strerror(error.errno) if error.errno else "unknown error"
    raise Unopenable(f"`{walk.here(name)}` could not be opened ({reason})") from None


@contextmanager
def open_beneath(root: Path, parts: Sequence[str]) -> Iterator[Opened]:
    """Open ``root/parts...`` without leaving ``root`` (an absolute, resolved directory).

    Yields the descriptor, closed afterwards. Raises ``Outside``, ``Missing`` or
    ``Unopenable``.
    """
    walk = _Walk(root)
    pending = deque(parts)
    links = 0
    following: str | None = None  # the link whose target is being walked, to name it
    result: int | None = None
    try:
        while pending:
            name = pending.popleft()
            if name in ("", "."):
                continue
            if name == "..":
                if not walk.up():
                    raise Outside(following or walk.here())
                continue
            if len(os.fsencode(name)) > NAME_MAX:
                raise Unopenable(f"a name in it is longer than {NAME_MAX} bytes")
            opened = _open_component(walk, name, last=not pending)
            if isinstance(opened, str):
                links += 1
                if links > MAX_LINKS:
                    raise Unopenable(f"`{walk.here(name)}` is part of a loop of symbolic links")
                following = walk.here(name)
                if opened.startswith("/"):
                    inside = _inside_parts(root, opened)
                    if inside is None:
                        raise Outside(following)
                    walk.to_root()
                    pending.extendleft(reversed(inside))
                else:
                    pending.extendleft(reversed(opened.split("/")))
                continue
            if pending:
                walk.enter(opened, name)
            else:
                result = opened
        if result is None:
            result = os.dup(walk.fds[-1])
        yield Opened(result, os.fstat(result))
    finally:
        if result is not None:
            os.close(result)
        walk.close()
