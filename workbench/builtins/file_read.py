"""The ``file_read`` built-in: a directory gives a listing, a file gives its text.

Paths are confined to the root (``workbench.builtins.paths``): the path is opened one
component at a time from a descriptor of the root, never through a symbolic link that leaves
it, and the listing or text comes from the descriptor that was checked. A hard link cannot be
told apart from its file: one made under the root to a file outside is read like any file.
A directory lists every entry, sorted directories first and then by name, each with a ``path``
ready to pass back; the listing family keeps the first ``listing_limit``. A file must be UTF-8
text: one holding a NUL byte or invalid UTF-8 in its first 8 KiB is refused as ``invalid_args``
on ``path`` (a different path may succeed; the same one never will). Large files are bounded
like any preview, read with bounded memory.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any

from pydantic import Field

from workbench.builtins.beneath import Opened
from workbench.builtins.paths import EXPECTED, open_confined
from workbench.builtins.reading import binary_reason, file_result, line_span, span_preview
from workbench.envelope import ErrorKind, ToolFailure
from workbench.families.listing import CompleteListing

FileRead = Callable[..., CompleteListing | dict[str, Any]]


def _entry_type(entry: os.DirEntry[str]) -> str:
    if entry.is_symlink():
        return "symlink"
    return "directory" if entry.is_dir(follow_symlinks=False) else "file"


def _child(display: str, name: str) -> str:
    return name if display == "." else f"{display}/{name}"


def list_directory(directory: Opened, display: str, limit: int) -> CompleteListing:
    """Every entry of an open directory, directories first, then by name."""
    with os.scandir(directory.fd) as scan:
        entries = [
            {"name": entry.name, "path": _child(display, entry.name), "type": _entry_type(entry)}
            for entry in scan
        ]
    entries.sort(key=lambda entry: (entry["type"] != "directory", entry["name"]))
    return CompleteListing(path=display, entries=entries, limit=limit)


def _kind_of_special(mode: int) -> str:
    for test, name in (
        (stat.S_ISFIFO, "a named pipe"),
        (stat.S_ISSOCK, "a socket"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
    ):
        if test(mode):
            return name
    return "not a regular file"


def read_text_file(
    file: Opened, display: str, offset: int, limit: int | None, budget: int
) -> dict[str, Any]:
    """The file family result for lines ``offset``.. of an open UTF-8 text file."""
    mode = file.status.st_mode
    if not stat.S_ISREG(mode):
        raise ToolFailure(
            ErrorKind.INVALID_ARGS,
            f"`path` was refused: `{display}` is {_kind_of_special(mode)}; file_read "
            "reads regular files and directories.",
            field="path",
            expected=EXPECTED,
        )
    reason = binary_reason(file.fd)
    if reason is not None:
        raise ToolFailure(
            ErrorKind.INVALID_ARGS,
            f"`{display}` is a binary file ({reason}); file_read reads UTF-8 text only.",
            field="path",
            expected="a UTF-8 text file or a directory",
            recovery_hint=f"inspect it with shell_exec instead, e.g. `file {display}`",
        )
    span = line_span(file.fd, offset, limit)
    return file_result(display, span, span_preview(file.fd, span, budget), bytes_mode=False)


def make_file_read(root: Path, listing_limit: int, budget: int) -> FileRead:
    """The ``file_read`` body, bound to a root, a listing limit and a text budget."""

    def file_read(
        path: str,
        offset: Annotated[int, Field(ge=1)] = 1,
        limit: Annotated[int | None, Field(ge=1)] = None,
    ) -> CompleteListing | dict[str, Any]:
        """Read a text file, or list a directory, inside the workspace.

        A directory gives its entries, each with a path you can pass back to file_read. A file
        gives its text; long files are cut to their head and tail, so read a range with
        offset and limit. Paths stay inside the workspace: a symbolic link that leads out of
        it is refused (a hard link cannot be told apart from its file, so one made to a file
        outside is read like any file).

        Args:
            path: File or directory relative to the workspace root, e.g. "src/main.py" or "."
                for the root.
            offset: First line to read (1-based). Ignored for directories.
            limit: Most lines to read from offset. Default: to the end of the file.
        """
        with open_confined(root, path) as (opened, display):
            if opened.is_dir:
                return list_directory(opened, display, listing_limit)
            return read_text_file(opened, display, offset, limit, budget)

    return file_read
