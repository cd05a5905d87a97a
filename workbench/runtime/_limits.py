"""How many calls run at once: a concurrency limit that works across event loops and threads,
and a registry's ``Limits`` (its slots, a turn for each ``serial`` tool, and its lanes).

Calls of one registry may run on the Jupyter kernel's loop and on workbench's private loop at
once; ``asyncio.Semaphore`` belongs to one loop, so the registry uses this instead.
"""

from __future__ import annotations

import asyncio
import os
import threading
import weakref
from collections import deque
from collections.abc import Callable
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from workbench.runtime._call import Call


class LaneQueue(Protocol):
    """A registry's lanes: worker threads that run bursts of plain ``def`` calls."""

    def run(self, calls: list[Call]) -> None:
        """Queue ``calls`` and make sure a lane serves them."""
        ...

    def withdraw(self, call: Call) -> bool:
        """Take ``call`` out of the queue if no lane took it yet; True if it was there."""
        ...


class Limit:
    """At most ``size`` holders at once; waiters are served first come, first served."""

    def __init__(self, size: int) -> None:
        if size < 1:
            raise ValueError("a concurrency limit must be at least 1")
        self.size = size
        self.forget_holders()
        _LIMITS.add(self)

    def forget_holders(self) -> None:
        """Every place free, nobody waiting (in a forked child, whose parent's calls hold
        their places in the parent only)."""
        self._held = 0
        self._left_behind = 0
        self._lock = threading.Lock()
        self._waiters: deque[tuple[asyncio.AbstractEventLoop, asyncio.Future[None]]] = deque()

    @property
    def held(self) -> int:
        """How many holders there are now."""
        return self._held

    def leave_behind(self) -> bool:
        """Count one stopped body that ignored cancellation and runs on after its call ended,
        until ``caught_up()``. True when its holder may give its place back now: fewer than
        ``size`` such bodies ran on before it. False when that many already do: it keeps its
        place until it returns, so bodies that never let go cannot pile up without bound."""
        with self._lock:
            self._left_behind += 1
            return self._left_behind <= self.size

    def caught_up(self) -> None:
        """A body counted by ``leave_behind`` returned at last."""
        with self._lock:
            self._left_behind -= 1

    @property
    def left_behind(self) -> int:
        """How many bodies run on after their calls ended without them (see ``leave_behind``)."""
        return self._left_behind

    def try_acquire(self) -> bool:
        """Take a place if one is free right now, without waiting."""
        with self._lock:
            if self._held < self.size and not self._waiters:
                self._held += 1
                return True
            return False

    async def acquire(self) -> None:
        """Wait for a place; cancellation while waiting gives the place up cleanly."""
        loop = asyncio.get_running_loop()
        with self._lock:
            if self._held < self.size and not self._waiters:
                self._held += 1
                return
            future: asyncio.Future[None] = loop.create_future()
            self._waiters.append((loop, future))
        try:
            await future
        except asyncio.CancelledError:
            with self._lock:
                if (loop, future) in self._waiters:
                    self._waiters.remove((loop, future))
                    raise
            if future.done() and not future.cancelled():
                self.release()  # the place arrived just as we were cancelled: pass it on
            raise

    def release(self) -> None:
        """Give a place back, handing it to the oldest waiter if there is one."""
        with self._lock:
            while self._waiters:
                loop, future = self._waiters.popleft()
                if not future.done() and not loop.is_closed():
                    loop.call_soon_threadsafe(self._grant, future)
                    return
            self._held -= 1

    def _grant(self, future: asyncio.Future[None]) -> None:
        if future.done():  # cancelled after it was chosen: the place goes to the next waiter
            self.release()
        else:
            future.set_result(None)


class Limits:
    """How many of one registry's calls run at once: ``concurrency`` (its ``max_concurrency``
    slots; a call made inside a running tool uses its ancestor's), one at a time for each
    ``serial`` tool, and the ``lanes`` bursts of plain ``def`` calls run in."""

    def __init__(self, size: int, lanes_for: Callable[[Limit], LaneQueue]) -> None:
        self.concurrency = Limit(size)
        self.lanes = lanes_for(self.concurrency)
        self._serial: dict[str, Limit] = {}
        self._lock = threading.Lock()

    def serial(self, name: str) -> Limit:
        """The one-at-a-time limit of the ``serial`` tool ``name``."""
        with self._lock:
            return self._serial.setdefault(name, Limit(1))


_LIMITS: weakref.WeakSet[Limit] = weakref.WeakSet()


def _forget_in_forked_child() -> None:
    for limit in list(_LIMITS):
        limit.forget_holders()


os.register_at_fork(after_in_child=_forget_in_forked_child)
