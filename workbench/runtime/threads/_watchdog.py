"""Noticing a runtime loop that something holds: an ``async def`` tool that blocks instead of
awaiting (``time.sleep``, a synchronous HTTP client, a heavy loop).

A heartbeat on the loop stamps the time every ``BEAT_S``; a watchdog thread that finds the stamp
older than ``BLOCKED_AFTER_S`` names the tool whose step holds the loop and warns every call that
was running, because that is the bug the tool author needs to see. The kernel is never affected:
it does not run on this loop.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import threading
import time
from collections.abc import Iterator
from typing import Protocol

BEAT_S = 0.1
BLOCKED_AFTER_S = 1.0


class Watched(Protocol):
    """What the watchdog needs of a running call."""

    tool_name: str

    def warn(self, text: str) -> None:
        """Record a warning for the person (the card and the history show it)."""


_active: dict[asyncio.Task[object], Watched] = {}
_doing: dict[asyncio.Task[object], str] = {}  # a task's step that is not its tool's body
_lock = threading.Lock()


def _forget_in_forked_child() -> None:
    # The parent's tasks do not run in a forked child, and a lock a parent thread held stays
    # held in it.
    global _lock
    _active.clear()
    _doing.clear()
    _lock = threading.Lock()


os.register_at_fork(after_in_child=_forget_in_forked_child)


def task_runs(task: asyncio.Task[object], call: Watched) -> None:
    """Count ``call`` as running in ``task`` until ``finished(task)``."""
    with _lock:
        _active[task] = call


def task_ended(task: asyncio.Task[object]) -> None:
    """The call of ``task`` no longer runs."""
    with _lock:
        _active.pop(task, None)


@contextlib.contextmanager
def watched_step(what: str) -> Iterator[None]:
    """The current task runs ``what`` (such as a hook) meanwhile: a blocked loop is named as its
    doing, not the tool's."""
    task = asyncio.current_task()
    if task is None:
        yield
        return
    with _lock:
        _doing[task] = what
    try:
        yield
    finally:
        with _lock:
            _doing.pop(task, None)


def watch(loop: asyncio.AbstractEventLoop) -> None:
    """Start the heartbeat on ``loop`` and the watchdog thread that reads it."""
    beat = [time.monotonic()]

    def heartbeat() -> None:
        beat[0] = time.monotonic()
        loop.call_later(BEAT_S, heartbeat)

    loop.call_soon_threadsafe(heartbeat)
    threading.Thread(
        target=_watch, args=(loop, beat), name="workbench-watchdog", daemon=True
    ).start()


def _watch(loop: asyncio.AbstractEventLoop, beat: list[float]) -> None:
    warned_for: float | None = None  # the beat of the episode already reported
    while not loop.is_closed():
        time.sleep(BEAT_S)
        last = beat[0]
        held = time.monotonic() - last
        if held < BLOCKED_AFTER_S or warned_for == last:
            continue
        warned_for = last
        _report(loop, held)


def _report(loop: asyncio.AbstractEventLoop, held: float) -> None:
    task = asyncio.current_task(loop)
    with _lock:
        holder = _active.get(task) if task is not None else None
        step = _doing.get(task) if task is not None else None
        calls = list(_active.values())
    if step is not None:
        culprit, what = step, "hook"
    else:
        culprit = f"`{holder.tool_name}`" if holder is not None else "code that is not a tool"
        what = "tool"
    text = (
        f"the runtime loop was blocked for over {held:.1f} s by {culprit}: an async def {what} "
        "that blocks (time.sleep, a synchronous client, a long loop) delays every other call; "
        "make it a plain def (it then runs in a worker thread) or await instead of blocking"
    )
    for call in calls:
        call.warn(text)
