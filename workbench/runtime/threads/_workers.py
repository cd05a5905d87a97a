"""Worker threads for blocking tool bodies, so they never block an event loop.

Unlike a fixed-size executor, a stuck body (one that ignores cancellation) never starves the
others: when every worker is busy a new one starts, and idle workers are reused.
"""

from __future__ import annotations

import os
import queue
import threading
from collections.abc import Callable

_Job = Callable[[], None]


class WorkerPool:
    """Runs jobs on daemon threads, reusing idle ones and growing when all are busy."""

    def __init__(self, name: str = "workbench-worker") -> None:
        self._name = name
        self._count = 0
        self.forget_threads()

    def forget_threads(self) -> None:
        """Start over with no worker (in a forked child, whose parent's workers are gone)."""
        self._jobs: queue.SimpleQueue[tuple[_Job, _Job | None]] = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._idle = 0

    def submit(self, job: _Job, then: _Job | None = None) -> None:
        """Run ``job`` on a worker thread, then ``then`` once that worker counts as idle again
        (so a reply that triggers the next job reuses this worker instead of starting one).
        Neither may raise (wrap them)."""
        with self._lock:
            start = self._idle == 0
            if start:
                self._count += 1
            else:
                self._idle -= 1
        self._jobs.put((job, then))
        if start:
            threading.Thread(
                target=self._work, name=f"{self._name}-{self._count}", daemon=True
            ).start()

    def _work(self) -> None:
        while True:
            job, then = self._jobs.get()
            job()
            with self._lock:
                self._idle += 1
            if then is not None:
                then()


WORKERS = WorkerPool()
os.register_at_fork(after_in_child=WORKERS.forget_threads)
