"""One daemon thread that runs a card's delayed redraws when its call has no event loop to run
them on (the runtime may keep its loop to itself): ``call_later(delay, callback)``.

Callbacks run in order of their due time on that thread; one that raises is reported as a
warning and the thread goes on, so no card can stop another's clock.
"""

from __future__ import annotations

import heapq
import itertools
import threading
import time
import warnings
from collections.abc import Callable

_due: list[tuple[float, int, Callable[[], None]]] = []
_order = itertools.count()
_wake = threading.Condition()
_thread: threading.Thread | None = None


def _run() -> None:
    while True:
        with _wake:
            while not _due or _due[0][0] > time.monotonic():
                _wake.wait(None if not _due else max(0.0, _due[0][0] - time.monotonic()))
            _, _, callback = heapq.heappop(_due)
        try:
            callback()
        except Exception as exc:  # reported, not swallowed: the clock of other cards goes on
            warnings.warn(f"a card's scheduled redraw failed: {exc!r}", stacklevel=1)


def call_later(delay: float, callback: Callable[[], None]) -> None:
    """Run ``callback`` on the timer thread after ``delay`` seconds."""
    global _thread
    with _wake:
        if _thread is None or not _thread.is_alive():
            _thread = threading.Thread(target=_run, name="workbench-card-timer", daemon=True)
            _thread.start()
        heapq.heappush(_due, (time.monotonic() + delay, next(_order), callback))
        _wake.notify()
