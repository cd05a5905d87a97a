"""The thread behind the calls: it writes what was handed over without waiting (rows of calls
that ended on the runtime loop, late updates) and retries rows held outside SQLite, then ends
once it has had nothing to do for ``LINGER_S``. A closed history leaves no thread behind.
"""

from __future__ import annotations

import collections
import dataclasses
import threading
import time
import warnings
from collections.abc import Callable
from typing import Generic, TypeVar

LINGER_S = 1.0
"""How long the thread waits for more work before it ends."""

QUEUE_LIMIT = 10_000
"""Items handed over and not yet written past which handing over waits (backpressure)."""

Item = TypeVar("Item")


@dataclasses.dataclass(eq=False)
class _Marker:
    done: threading.Event


class Behind(Generic[Item]):
    """One thread running ``write(batch)`` on the items handed over, in order, and
    ``retry()`` every ``retry_s`` while ``pending()`` says something waits to be retried."""

    def __init__(
        self,
        write: Callable[[list[Item]], None],
        retry: Callable[[], None],
        pending: Callable[[], bool],
        retry_s: float,
    ) -> None:
        self._write = write
        self._retry = retry
        self._pending = pending
        self._retry_s = retry_s
        self._changed = threading.Condition()
        self._items: collections.deque[Item | _Marker] = collections.deque()
        self._working = False
        self._stopping = False
        self._thread: threading.Thread | None = None

    @property
    def busy(self) -> bool:
        """True while items handed over are not yet written."""
        with self._changed:
            return bool(self._items) or self._working

    def put(self, items: list[Item]) -> None:
        """Hand ``items`` over to be written in order; waits while ``QUEUE_LIMIT`` are queued."""
        with self._changed:
            while len(self._items) >= QUEUE_LIMIT and not self._on_this_thread():
                self._start()
                self._changed.wait(0.1)
            self._items.extend(items)
            self._start()
            self._changed.notify_all()

    def wake(self) -> None:
        """Make sure the thread runs (something waits to be retried)."""
        with self._changed:
            self._start()
            self._changed.notify_all()

    def flush(self) -> None:
        """Wait until everything handed over so far is written."""
        if self._on_this_thread():
            return
        with self._changed:
            if not self._items and not self._working:
                return
            marker = _Marker(threading.Event())
            self._items.append(marker)
            self._start()
            self._changed.notify_all()
        marker.done.wait()

    def stop(self) -> None:
        """Write everything handed over, then end the thread (it starts again if needed)."""
        self.flush()
        with self._changed:
            thread = self._thread
            self._stopping = True
            self._changed.notify_all()
        if thread is not None and not self._on_this_thread():
            thread.join()
        with self._changed:
            self._stopping = False

    def forget(self) -> None:
        """In a forked child: no thread, nothing handed over (the parent's items are its own)."""
        self._changed = threading.Condition()
        self._items = collections.deque()
        self._working = self._stopping = False
        self._thread = None

    def _on_this_thread(self) -> bool:
        return self._thread is threading.current_thread()

    def _start(self) -> None:
        if self._thread is None:
            self._thread = threading.Thread(target=self._run, name="workbench-history", daemon=True)
            self._thread.start()

    def _run(self) -> None:
        idle_since = time.monotonic()
        while True:
            with self._changed:
                while not self._items:
                    waiting = self._pending()
                    if self._stopping or (
                        not waiting and time.monotonic() - idle_since >= LINGER_S
                    ):
                        self._thread = None
                        return
                    woken = self._changed.wait(self._retry_s if waiting else LINGER_S)
                    if not woken and waiting:
                        break  # time to retry what is held
                batch = list(self._items)
                self._items.clear()
                self._working = True
                self._changed.notify_all()
            try:
                if not batch:
                    self._retry()
                self._run_batch(batch)
            except Exception as exc:  # a defect: said, and the thread goes on with the next
                warnings.warn(
                    f"history: the thread behind the calls failed: {exc!r}",
                    RuntimeWarning,
                    stacklevel=1,
                )
            finally:
                for item in batch:
                    if isinstance(item, _Marker):
                        item.done.set()  # nobody waits for ever on a batch that failed
                with self._changed:
                    self._working = False
                    self._changed.notify_all()
                idle_since = time.monotonic()

    def _run_batch(self, batch: list[Item | _Marker]) -> None:
        items: list[Item] = []
        for item in batch:
            if isinstance(item, _Marker):
                if items:
                    self._write(items)
                    items = []
                item.done.set()
            else:
                items.append(item)
        if items:
            self._write(items)
