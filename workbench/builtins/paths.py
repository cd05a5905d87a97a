"""Confining model-given paths to one root directory.

Every path a built-in receives (``file_read``'s ``path``, ``shell_exec``'s ``cwd``) goes through
``confine``. A path is refused as ``invalid_args`` on its field, with the specific reason, when
it is empty, holds a control, format or other odd character, starts with ``~``, uses ``\\`` as a
separator, climbs out of the root with ``..``, is absolute but outside the root, or passes
through a symbolic link that points outside the root. A confined path that does not exist is
``not_found`` with a hint to list its parent.
"""

from __future__ import annotations

import os
import unicodedata
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from workbench._builders import ToolFailure
from workbench._errors import ErrorKind

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


def _check_characters(raw: str, field: str) -> None:
    if not raw.strip():
        raise refuse(field, "it is empty", "use `.` for the root")
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


def confine(root: Path, raw: str, *, field: str = "path") -> Confined:
    """Resolve ``raw`` inside ``root`` (already resolved) or raise a ``ToolFailure``."""
    _check_characters(raw, field)
    given = Path(raw)
    lexical = Path(os.path.normpath(given if given.is_absolute() else root / given))
    if not lexical.is_relative_to(root):
        if given.is_absolute():
            raise refuse(field, f"the absolute path `{raw}` is outside the root")
        raise refuse(field, f"path traversal: `{raw}` climbs out of the root with `..`")
    real = lexical.resolve()
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
