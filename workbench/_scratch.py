"""Directories workbench makes in the temporary folder for one process (the artifacts of a
history kept in memory, the demo server's workspace): each is removed when the process that
made it exits, so a day of notebooks leaves nothing behind. A killed process cannot clean up;
nothing else is lost by that but disk."""

from __future__ import annotations

import atexit
import os
import shutil
import sys
import tempfile
from pathlib import Path

_MADE: list[tuple[int, Path]] = []


def scratch_directory(prefix: str) -> Path:
    """A new private directory in the temporary folder, removed at this process's exit."""
    path = Path(tempfile.mkdtemp(prefix=prefix))
    if not _MADE:
        atexit.register(_remove_made)
    _MADE.append((os.getpid(), path))
    return path


def _remove_made() -> None:
    for maker, path in _MADE:
        if maker != os.getpid():
            continue  # a forked child exiting must not take its parent's files
        try:
            shutil.rmtree(path)
        except FileNotFoundError:
            continue
        except OSError as exc:  # said where the person sees it; the process is ending
            print(f"workbench: could not remove {path}: {exc}", file=sys.stderr)
