"""Confining model-given paths to one root directory.

Every path a built-in receives is checked here. A path is refused as ``invalid_args`` on its
field, with the specific reason, when it is empty or longer than 4096 bytes, holds a control,
format, surrogate or other odd character, starts with ``~``, uses ``\\`` as a separator, climbs
out of the root with ``..``, is absolute but outside the root, or passes through a symbolic link
that points outside the root (or a loop of links). A confined path that does not exist is
``not_found`` with a hint to list the nearest directory that does. Messages name paths relative
to the root only, never an absolute path of the host.

``open_confined`` (``file_read``, ``artifact_read``) opens the path one component at a time from
a descriptor of the root (``workbench.builtins.beneath``) and hands back the descriptor to read:
no window between the check and the read. ``confine`` (``shell_exec``'s ``cwd``) resolves a
path by name, which is enough for a directory a command starts in.
"""

from __future__ import annotations

import os
import unicodedata
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from workbench.builtins.beneath import Missing, Opened, Outside, Unopenable, open_beneath
from workbench.envelope import ErrorKind, ToolFailure

PATH_MAX = 4096

# Control, format (bidi overrides, zero-width), surrogate, private-use and unassigned characters.
_ODD_CATEGORIES = {
    "Cc": "a control character",
    "Cf": "an invisible format character",
    "Cs": "a surrogate",
    "Co": "a private-use character",
    "Cn": "an unassigned character",
}
EXPECTED = "a path relative to the root, such as `src/main.py` or `.` for the root itself"


@dataclass(frozen=True)
class Confined:
    """A path inside ``root``: ``real`` to open, ``display`` (relative to the root, ``/``
    separated, ``.`` for the root) to show and to pass back."""

    real: Path
    display: str
    root: Path

    def child(self, name: str) -> str:
        """The display path of an entry of this directory."""
        return name if self.display == "." else f"{self.display}/{name}"


def refuse(field: str, reason: str, hint: str | None = None) -> ToolFailure:
    """The ``invalid_args`` failure for a refused path."""
    return ToolFailure(
        ErrorKind.INVALID_ARGS,
        f"`{field}` was refused: {reason}.",
        field=field,
        expected=EXPECTED,
        recovery_hint=hint or "give a path inside the root, relative to it",
    )


def check_characters(raw: str, field: str) -> None:
    if not raw.strip():
        raise refuse(field, "it is empty", "use `.` for the root")
    if len(raw.encode("utf-8", "surrogatepass")) > PATH_MAX:
        raise refuse(field, f"it is longer than {PATH_MAX} bytes", "give a shorter path")
    for position, char in enumerate(raw):
        category = unicodedata.category(char)
        if category in _ODD_CATEGORIES:
            name = unicodedata.name(char, None) or _ODD_CATEGORIES[category]
            raise refuse(
                field,
                f"it contains the character U+{ord(char):04X} ({name}) at position {position}",
                "send the path as plain text without control or invisible characters",
            )
    if "\\" in raw:
        raise refuse(field, "it contains `\\`", "separate directories with `/`")
    if raw.startswith("~"):
        raise refuse(field, "`~` (a home directory) is not expanded", None)


def _lexical(root: Path, raw: str, field: str) -> Path:
    """``raw`` made absolute and normalized without touching the file system, checked to lie
    under ``root``."""
    check_characters(raw, field)
    given = Path(raw)
    lexical = Path(os.path.normpath(given if given.is_absolute() else root / given))
    if not lexical.is_relative_to(root):
        if given.is_absolute():
            raise refuse(field, "the absolute path given is outside the root")
        raise refuse(field, f"path traversal: `{raw}` climbs out of the root with `..`")
    return lexical


@contextmanager
def open_confined(root: Path, raw: str, *, field: str = "path") -> Iterator[tuple[Opened, str]]:
    """Open ``raw`` beneath ``root`` (absolute and resolved) and yield its descriptor and
    display path (relative to the root); raise a ``ToolFailure`` for a refused or missing
    path."""
    parts = _lexical(root, raw, field).relative_to(root).parts
    with open_parts(root, parts, field=field) as opened:
        yield opened, display_of(parts)


def display_of(parts: tuple[str, ...]) -> str:
    """The display form of components below the root: ``/``-joined, ``.`` for the root."""
    return PurePosixPath(*parts).as_posix() if parts else "."


@contextmanager
def open_parts(
    root: Path,
    parts: tuple[str, ...],
    *,
    field: str = "path",
    not_found: ToolFailure | None = None,
) -> Iterator[Opened]:
    """``open_beneath`` with its refusals as ``ToolFailure`` on ``field``; a missing path
    raises ``not_found`` when given, else a ``not_found`` naming a directory to list."""
    try:
        with open_beneath(root, parts) as opened:
            yield opened
    except Outside as exc:
        raise refuse(
            field,
            f"`{exc.link}` is a symbolic link that points outside the root",
            "read the files inside the root only",
        ) from None
    except Unopenable as exc:
        raise refuse(field, str(exc)) from None
    except Missing as exc:
        if not_found is not None:
            raise not_found from None
        raise ToolFailure(
            ErrorKind.NOT_FOUND,
            f"`{display_of(parts)}` does not exist; list `{exc.found}` with file_read to see "
            "what does.",
            field=field,
            recovery_hint=f'call file_read with path "{exc.found}" and pick a path from the '
            "listing",
        ) from None


def confine(root: Path, raw: str, *, field: str = "path") -> Confined:
    """Resolve ``raw`` inside ``root`` (already resolved) or raise a ``ToolFailure``."""
    lexical = _lexical(root, raw, field)
    try:
        real = lexical.resolve()
    except (OSError, RuntimeError):  # a loop of symbolic links
        raise refuse(field, "it passes through a loop of symbolic links") from None
    if not real.is_relative_to(root):
        link = _outward_link(root, lexical)
        raise refuse(
            field,
            f"`{link}` is a symbolic link that points outside the root",
            "read the files inside the root only",
        )
    display = PurePosixPath(lexical.relative_to(root)).as_posix()
    return Confined(real=real, display=display or ".", root=root)


def _outward_link(root: Path, lexical: Path) -> str:
    """The first component of ``lexical`` whose link target leaves the root."""
    current = root
    for part in lexical.relative_to(root).parts:
        current = current / part
        if current.is_symlink() and not current.resolve().is_relative_to(root):
            return current.relative_to(root).as_posix()
    return lexical.relative_to(root).as_posix()


def require_existing(target: Confined, field: str = "path") -> None:
    """Raise ``not_found`` (not retryable) when the confined path does not exist; the message
    names the nearest directory that does, to list next."""
    if target.real.exists():
        return
    parent = PurePosixPath(target.display).parent
    while parent.as_posix() != "." and not (target.root / parent).is_dir():
        parent = parent.parent
    listed = parent.as_posix()
    raise ToolFailure(
        ErrorKind.NOT_FOUND,
        f"`{target.display}` does not exist; list `{listed}` with file_read to see what does.",
        field=field,
        recovery_hint=f'call file_read with path "{listed}" and pick a path from the listing',
    )
