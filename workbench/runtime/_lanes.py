"""Running many plain ``def`` calls at once without the runtime loop.

A call started in bulk (``invoke_many``, a burst of replays, calls nobody waited for) that
could run inline (``workbench/_inline.py``: a plain function needing no person, hook, fault,
stream or subscriber) goes to its registry's lanes: worker threads that each take the next
waiting call and run it inline, start to committed row, then take the next. A worker is handed
work once per burst, not once per call, and no call hops to the runtime loop and back.

There are never more lanes than the registry's ``max_concurrency``, and each call still takes
a concurrency slot while it runs, so slow tools run exactly as many at once as on the loop. A
call a lane cannot run (every slot taken by other calls, or someone else already runs it) goes
to the loop, which queues it fairly; one stopped while it waits for a lane goes to the loop
too, which ends it at once. Every other call starts on the loop as before.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from typing import TYPE_CHECKING

from workbench.runtime._lifecycle import start
from workbench.runtime._workers import WORKERS

if TYPE_CHECKING:
    from collections.abc import Callable

    from workbench.history import CallRecord, History
    from workbench.runtime._call import Call, Committed
    from workbench.runtime._limits import Limit

WIDEN_AFTER_S = 0.01
"""How long every lane must have been inside one call, with calls waiting, before another lane
opens: longer than a short call takes even while other threads hold the interpreter (whose
switch interval is 5 ms), short beside a body that waits on the world."""

GROUP_ROWS = 64
"""The most rows a lane commits in one transaction."""

GROUP_AGE_S = 0.002
"""How old a lane lets its oldest uncommitted row grow while it runs more calls."""

STUCK_AFTER_S = 0.01
"""How old a lane's rows may grow before the ticker commits them for it: the lane is then
inside a slow body (a lane that moves commits its own rows within ``GROUP_AGE_S``)."""


class _Group:
    """The rows of calls a lane ended, committed together: when no call waits for the lane,
    when ``GROUP_ROWS`` are held or the oldest is ``GROUP_AGE_S`` old, or by the ticker once
    the oldest has waited ``STUCK_AFTER_S`` (the lane is inside a slow body). Nobody learns
    that a call ended before its row is committed, so whoever commits a row announces its
    call's end."""

    def __init__(self) -> None:
        self._rows: dict[int, tuple[History, list[tuple[CallRecord, Committed, Committed]]]] = {}
        self._count = 0
        self._since = 0.0
        self._lock = threading.Lock()

    def add(self, history: History, record: CallRecord, here: Committed, later: Committed) -> None:
        """Hold one row; ``here`` announces the call once its row is committed on this thread,
        ``later`` once the history's writer committed (or journaled) it."""
        with self._lock:
            if not self._count:
                self._since = time.monotonic()
            self._count += 1
            self._rows.setdefault(id(history), (history, []))[1].append((record, here, later))

    def due(self) -> bool:
        """Time for the lane to commit: ``GROUP_ROWS`` held, or the oldest ``GROUP_AGE_S`` old."""
        return self._count >= GROUP_ROWS or (
            self._count > 0 and time.monotonic() - self._since >= GROUP_AGE_S
        )

    def commit(self, older_than: float | None = None) -> None:
        """Commit every row held (only if the oldest is older than ``older_than`` seconds)."""
        with self._lock:
            if not self._count:
                return
            if older_than is not None and time.monotonic() - self._since < older_than:
                return
            rows, self._rows, self._count = self._rows, {}, 0
        for history, held in rows.values():
            if history.commit_now([(record, here) for record, here, _ in held]):
                continue
            # Busy (another commit, queued rows): wait for it here rather than hand the rows
            # to the writer, whose queue would turn every later commit away too.
            problem = history.write_now([record for record, _, _ in held])
            for _, here, later in held:
                (here if problem is None else later)(problem)


_HERE = threading.local()  # on a lane's thread: its group, and the call it runs now


def group_for(call: Call) -> _Group | None:
    """The group the lane on this thread gathers rows in, if it runs ``call`` (a call made
    and waited for inside that call's body commits its own row: its waiter is right here)."""
    return getattr(_HERE, "group", None) if getattr(_HERE, "call", None) is call else None


class Lanes:
    """One registry's lanes: the calls waiting for one, and how many lanes run.

    One lane opens at once. Another opens only when every lane has been inside one call for
    ``WIDEN_AFTER_S``: many short calls keep one thread busy instead of several fighting over
    the interpreter, and slow calls still fill every slot within a few ticks."""

    def __init__(
        self,
        limit: Limit,
        run: Callable[[Call], bool],
        watch: Callable[[Lanes], None],
    ) -> None:
        """``run(call)`` runs a call inline to its end (False if it could not: no free slot,
        or someone else runs it); ``watch(lanes)`` has the ticker call ``tick`` while calls
        wait or lanes run (``workbench/_inline.py`` gives both)."""
        self._limit = limit
        self._run = run
        self._watch = watch
        self._waiting: deque[Call] = deque()
        self._running = 0
        self._in_call: dict[_Group, float] = {}  # lane (by its group) → when its call began
        self._groups: set[_Group] = set()
        self._lock = threading.Lock()

    def run(self, calls: list[Call]) -> None:
        """Queue ``calls`` (each one that qualifies) and make sure a lane serves them."""
        for call in calls:
            call.in_lane = True
        with self._lock:
            self._waiting.extend(calls)
            opened = self._running == 0
            if opened:
                self._running = 1
        if opened:
            WORKERS.submit(self._serve)
        self._watch(self)

    def withdraw(self, call: Call) -> bool:
        """Take ``call`` out of the queue if no lane took it yet (it was stopped while it
        waited: the loop ends it at once instead); True if it was there."""
        with self._lock:
            try:
                self._waiting.remove(call)
            except ValueError:
                return False
            return True

    @property
    def idle(self) -> bool:
        """No call waits and no lane runs."""
        return not self._waiting and not self._running

    def tick(self, now: float) -> bool:
        """The ticker's look: commit rows a lane inside a slow body holds, and open one more
        lane if calls wait, every lane has been inside one call for ``WIDEN_AFTER_S`` and the
        limit allows. False once no call waits and no lane runs, so it stops looking."""
        with self._lock:
            groups = list(self._groups)
        for group in groups:
            group.commit(older_than=STUCK_AFTER_S)
        with self._lock:
            if not self._waiting:
                return self._running > 0
            stuck = len(self._in_call) == self._running and all(
                now - began >= WIDEN_AFTER_S for began in self._in_call.values()
            )
            opened = stuck and self._running < self._limit.size
            if opened:
                self._running += 1
        if opened:
            WORKERS.submit(self._serve)
        return True

    def _serve(self) -> None:
        group = _Group()
        with self._lock:
            self._groups.add(group)
        _HERE.group = group
        try:
            while True:
                with self._lock:
                    if not self._waiting:
                        self._running -= 1
                        self._groups.discard(group)
                        return
                    call = self._waiting.popleft()
                    self._in_call[group] = time.monotonic()
                    more = bool(self._waiting)
                _HERE.call = call
                try:
                    if not self._run(call) and call.driver is None:
                        start(call)  # no free slot: the loop queues it fairly
                except Exception as exc:  # run_inline ends the call itself; a last resort
                    call.warn(f"running the call in a lane failed: {exc!r}")
                    if call.driver is None:
                        start(call)
                finally:
                    _HERE.call = None
                    with self._lock:
                        del self._in_call[group]
                if not more or group.due():
                    group.commit()
        finally:
            _HERE.group = None
            group.commit()
