"""A call's clock: its time in the queue kept apart from its run time.

A call is queued from the moment it is invoked until the runtime picks it up, and again while
it waits for a slot (``max_concurrency``, a ``serial`` tool's turn). ``queued`` is that time;
``run`` is the rest, from invocation to the end. Both tick until the call ends.
"""

from __future__ import annotations

import time


class CallClock:
    """Monotonic times of one call; the runner says when waiting begins and ends."""

    def __init__(self) -> None:
        self.invoked = time.monotonic()
        self.ended: float | None = None
        self._waited = 0.0
        self._waiting_since: float | None = self.invoked  # queued until picked up

    def wait_begins(self) -> None:
        """The call starts waiting in the queue (for a slot)."""
        if self._waiting_since is None:
            self._waiting_since = time.monotonic()

    def wait_ends(self) -> None:
        """The call stops waiting (picked up, or given its slot)."""
        since = self._waiting_since
        if since is not None:
            self._waited += max(0.0, time.monotonic() - since)
            self._waiting_since = None

    def end(self) -> None:
        """The call ended: both figures stop."""
        if self.ended is None:
            self.wait_ends()
            self.ended = time.monotonic()

    def _now(self) -> float:
        return self.ended if self.ended is not None else time.monotonic()

    @property
    def queued(self) -> float:
        """Seconds spent in the queue so far."""
        since = self._waiting_since
        return self._waited + (max(0.0, self._now() - since) if since is not None else 0.0)

    @property
    def run(self) -> float:
        """Seconds from invocation to the end (or now), less the time in the queue."""
        return max(0.0, self._now() - self.invoked - self.queued)
