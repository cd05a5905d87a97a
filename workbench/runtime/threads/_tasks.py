"""The calls the runtime loop runs now: counted, so a call that ends alone is committed at once
and a burst never overtakes calls started before it."""

from __future__ import annotations

import asyncio
import os
from typing import Any

_DRIVING: set[asyncio.Task[Any]] = set()  # strong references to running calls' tasks
_HANDED: set[int] = set()  # calls handed to the loop from another thread, not yet launched


def _forget_in_forked_child() -> None:
    # The parent's calls do not run in a forked child.
    _DRIVING.clear()
    _HANDED.clear()


os.register_at_fork(after_in_child=_forget_in_forked_child)


def driving() -> int:
    """How many calls the runtime loop runs, or has been handed and will run (a call ending
    counts until it has ended)."""
    return len(_DRIVING) + len(_HANDED)


def handed(calls: tuple[object, ...]) -> None:
    """``calls`` were handed to the loop from another thread and will be launched there."""
    _HANDED.update(id(call) for call in calls)


def launched(call: object, task: asyncio.Task[Any] | None) -> None:
    """``call`` was launched on the loop (as ``task``, or None when someone else ran it)."""
    if task is not None:
        _DRIVING.add(task)
        task.add_done_callback(_DRIVING.discard)
    _HANDED.discard(id(call))
