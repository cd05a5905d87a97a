"""Committing ended calls' rows together, and announcing each call once its row is kept.

Nobody learns that a call ended before its history row is committed, and a commit costs far
more than a call's own steps, so rows are committed in groups wherever calls end together:
the calls that end in one pass of the runtime loop (``Committer``), and the calls one lane runs
back to back (``LaneGroup``). Ends committed off the loop are announced back on it, many per
wake-up (``Announcer``).
"""

from __future__ import annotations

import asyncio
import os
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from workbench.runtime.threads import call_in_loop

if TYPE_CHECKING:
    from workbench.history import CallRecord, History

Committed = Callable[[str | None], None]
"""Told once a row is kept: None, or the sentence naming what went wrong and where it went."""

GROUP_ROWS = 64
"""The most rows a lane commits in one transaction."""

GROUP_AGE_S = 0.002
"""How old a lane lets its oldest uncommitted row grow while it runs more calls."""


class Announcer:
    """Hands committed calls back to the runtime loop to be announced, many per wake-up: the
    history commits rows in groups, and one hop per group costs far less than one per call."""

    def __init__(self) -> None:
        self.forget()

    def forget(self) -> None:
        """Hold nothing (in a forked child: the parent's calls are the parent's to announce)."""
        self._pending: list[Callable[[], None]] = []
        self._lock = threading.Lock()

    def push(self, loop: asyncio.AbstractEventLoop, announce: Callable[[], None]) -> None:
        with self._lock:
            self._pending.append(announce)
            first = len(self._pending) == 1
        if first:
            call_in_loop(loop, self._drain)

    def _drain(self) -> None:
        with self._lock:
            pending, self._pending = self._pending, []
        for announce in pending:
            announce()


class Committer:
    """Gathers the rows of the calls that end in one pass of the runtime loop and commits them
    together at the end of that pass: on the loop itself when SQLite takes them without
    waiting, else through the thread behind the history's calls (which waits for SQLite, and
    holds the rows in its spill when SQLite will not take them)."""

    def __init__(self) -> None:
        self.forget()

    def forget(self) -> None:
        """Hold nothing (in a forked child: the parent's rows are the parent's to commit)."""
        self._pending: dict[int, tuple[History, list[tuple[CallRecord, Committed]]]] = {}

    def push(
        self,
        loop: asyncio.AbstractEventLoop,
        history: History,
        record: CallRecord,
        then: Committed,
        alone: bool = False,
    ) -> None:
        """Hold a row until the end of this pass; ``alone`` (no other call runs on the loop,
        so none can end in this pass) commits it now, saving a pass of the loop."""
        if not self._pending:
            if alone:
                self._pending = {id(history): (history, [(record, then)])}
                self._commit()
                return
            loop.call_soon(self._commit)
        self._pending.setdefault(id(history), (history, []))[1].append((record, then))

    def _commit(self) -> None:
        pending, self._pending = self._pending, {}
        for history, rows in pending.values():
            history.append_all(rows)


class LaneGroup:
    """The rows of calls a lane ended, committed together: when no call waits for the lane,
    when ``GROUP_ROWS`` are held or the oldest is ``GROUP_AGE_S`` old, or by the ticker once
    the oldest has waited longer (the lane is inside a slow body). Whoever commits a row
    announces its call's end."""

    def __init__(self) -> None:
        self._rows: dict[int, tuple[History, list[tuple[CallRecord, Committed]]]] = {}
        self._count = 0
        self._since = 0.0
        self._lock = threading.Lock()

    def add(self, history: History, record: CallRecord, here: Committed) -> None:
        """Hold one row; ``here`` announces the call once its row is durable (committed on
        this thread, or held until SQLite takes it)."""
        with self._lock:
            if not self._count:
                self._since = time.monotonic()
            self._count += 1
            self._rows.setdefault(id(history), (history, []))[1].append((record, here))

    def due(self) -> bool:
        """Time for the lane to commit: ``GROUP_ROWS`` held, or the oldest ``GROUP_AGE_S`` old."""
        return self._count >= GROUP_ROWS or (
            self._count > 0 and time.monotonic() - self._since >= GROUP_AGE_S
        )

    def age_left(self) -> float:
        """Seconds the oldest row held may still wait for others before it is due (0 when
        none is held or it is due)."""
        with self._lock:
            if not self._count:
                return 0.0
            return max(0.0, GROUP_AGE_S - (time.monotonic() - self._since))

    def commit(self, older_than: float | None = None) -> None:
        """Commit every row held (only if the oldest is older than ``older_than`` seconds)."""
        with self._lock:
            if not self._count:
                return
            if older_than is not None and time.monotonic() - self._since < older_than:
                return
            rows, self._rows, self._count = self._rows, {}, 0
        for history, held in rows.values():
            # Written here, with whatever other threads write at the same moment: this thread
            # is a lane's, which may wait.
            problem = history.write([record for record, _ in held])
            for _, here in held:
                here(problem)


_HERE = threading.local()  # on a lane's thread: its group, and the call it runs now


def lane_group_of(call: object) -> LaneGroup | None:
    """The group the lane on this thread gathers rows in, if it runs ``call`` (a call made
    and waited for inside that call's body commits its own row: its waiter is right here)."""
    return getattr(_HERE, "group", None) if getattr(_HERE, "call", None) is call else None


def lane_thread(group: LaneGroup | None) -> None:
    """This thread serves a lane gathering rows in ``group`` (None: it no longer does)."""
    _HERE.group = group


def lane_runs(call: object) -> None:
    """Say which call the lane on this thread runs now (None between calls)."""
    _HERE.call = call


ANNOUNCER = Announcer()
COMMITTER = Committer()
os.register_at_fork(after_in_child=ANNOUNCER.forget)
os.register_at_fork(after_in_child=COMMITTER.forget)
