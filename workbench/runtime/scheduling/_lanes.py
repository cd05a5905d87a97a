"""Running many plain ``def`` calls at once without the runtime loop.

A call started in bulk (``invoke_many``, a burst of replays, calls nobody waited for) that
could run inline (``_waiting_thread``: a plain function needing no person, hook, fault,
stream or subscriber) goes to its registry's lanes: worker threads that each take the next
waiting call and run it inline, start to committed row, then take the next. A worker is handed
work once per burst, not once per call, and no call hops to the runtime loop and back.

There are never more lanes than the registry's ``max_concurrency``, and each call still takes
a concurrency slot while it runs, so slow tools run exactly as many at once as on the loop. A
call a lane cannot run (every slot taken by other calls, or someone else already runs it) goes
to the loop, which queues it fairly; one stopped while it waits for a lane goes to the loop
too, which ends it at once. A lane inside a body that its call ended without (stopped, it
ignored cancellation past the grace) is no lane any more: another opens for the calls waiting.
Every other call starts on the loop as before.
"""

from __future__ import annotations

import os
import threading
import time
import weakref
from collections import deque
from typing import TYPE_CHECKING

from workbench.runtime.scheduling._on_loop import start
from workbench.runtime.steps import LaneGroup, lane_runs, lane_thread
from workbench.runtime.threads import WORKERS

if TYPE_CHECKING:
    from collections.abc import Callable

    from workbench.runtime.call import Call
    from workbench.runtime.policy import Limit

WIDEN_AFTER_S = 0.01
"""How long every lane must have been inside one call, with calls waiting, before another lane
opens: longer than a short call takes even while other threads hold the interpreter (whose
switch interval is 5 ms), short beside a body that waits on the world."""

STUCK_AFTER_S = 0.01
"""How old a lane's rows may grow before the ticker commits them for it: the lane is then
inside a slow body (a lane that moves commits its own rows within ``GROUP_AGE_S``)."""


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
        wait or lanes run (``_dispatch`` gives both)."""
        self._limit = limit
        self._run = run
        self._watch = watch
        self.forget_lanes()
        _LANES.add(self)

    def forget_lanes(self) -> None:
        """No lane and no call waiting (in a forked child: the parent's lanes are gone)."""
        self._waiting: deque[Call] = deque()
        self._running = 0
        # lane (by its group) → when its call began, and the call
        self._in_call: dict[LaneGroup, tuple[float, Call]] = {}
        self._groups: set[LaneGroup] = set()
        self._left: set[LaneGroup] = set()  # lanes whose call ended while its body ran on
        self._lock = threading.Lock()
        self._arrived = threading.Condition(self._lock)

    def run(self, calls: list[Call]) -> None:
        """Queue ``calls`` (each one that qualifies) and make sure a lane serves them."""
        for call in calls:
            call.sheet.phase.in_lane = True
        with self._lock:
            self._waiting.extend(calls)
            opened = self._running == 0
            if opened:
                self._running = 1
            self._arrived.notify()
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
            left = self._count_out_left_lanes()
        for group in groups:
            group.commit(older_than=STUCK_AFTER_S)
        for group in left:
            group.commit()
        with self._lock:
            if not self._waiting:
                return self._running > 0
            stuck = len(self._in_call) == self._running and all(
                now - began >= WIDEN_AFTER_S for began, _ in self._in_call.values()
            )
            opened = stuck and self._running < self._limit.size
            if opened:
                self._running += 1
        if opened:
            WORKERS.submit(self._serve)
        return True

    def _count_out_left_lanes(self) -> list[LaneGroup]:
        """Lanes inside a body their call ended without (it ignored its stop) no longer count
        as lanes: the body may run on for ever, and calls waiting must not wait for it. The
        caller holds the lock; returns their groups, whose rows are committed now."""
        left = [
            group
            for group, (_, call) in self._in_call.items()
            if call.sheet.control.ignored_cancellation and call.sheet.finished
        ]
        for group in left:
            del self._in_call[group]
            self._groups.discard(group)
            self._left.add(group)
            self._running -= 1
        return left

    def _serve(self) -> None:
        group = LaneGroup()
        with self._lock:
            self._groups.add(group)
        lane_thread(group)
        try:
            while True:
                with self._lock:
                    if not self._waiting:
                        self._running -= 1
                        self._groups.discard(group)
                        return
                    call = self._waiting.popleft()
                    self._in_call[group] = (time.monotonic(), call)
                    more = bool(self._waiting)
                lane_runs(call)
                try:
                    if not self._run(call) and call.sheet.phase.driver is None:
                        start(call)  # no free slot: the loop queues it fairly
                except Exception as exc:  # run_inline ends the call itself; a last resort
                    call.warn(f"running the call in a lane failed: {exc!r}")
                    if call.sheet.phase.driver is None:
                        start(call)
                finally:
                    lane_runs(None)
                    with self._lock:
                        counted_out = group in self._left
                        if counted_out:
                            self._left.discard(group)
                        else:
                            del self._in_call[group]
                if counted_out:
                    return  # no lane any more: others took its place while its body ran on
                if not more:
                    more = self._linger(group)
                if not more or group.due():
                    group.commit()
        finally:
            lane_thread(None)
            group.commit()

    def _linger(self, group: LaneGroup) -> bool:
        """With no call waiting, wait for the next call of a burst while the group's oldest row
        may still wait for company (``GROUP_AGE_S``): calls that come one at a time (replays
        made one by one, each slower to make than to run) then share a commit. True if one
        came."""
        with self._lock:
            if not self._waiting:
                self._arrived.wait(group.age_left())
            return bool(self._waiting)


_LANES: weakref.WeakSet[Lanes] = weakref.WeakSet()


def _forget_in_forked_child() -> None:
    for lanes in list(_LANES):
        lanes.forget_lanes()


os.register_at_fork(after_in_child=_forget_in_forked_child)
