"""Stopping one call: who asked, what was cancelled, and how long a body may take to let go.

A ``StopControl`` is owned by the runner. ``Call.terminate()`` and the time budgets only *ask* it
to stop; it records the first reason, sets the cancellation token that thread bodies and
processes watch, and cancels the runner's task on the runtime loop. A body that ignores all of
that is given the registry's grace and then left behind: the call ends anyway and its
concurrency slot is freed, so no tool can hold the runtime hostage.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import threading
from collections.abc import Callable
from typing import Any, Literal

from workbench.context import CancellationToken
from workbench.runtime.threads import call_in_loop

StopReason = Literal["user", "timeout", "idle_timeout"]
Phase = Literal["waiting", "driving", "in_body", "finishing", "ended"]


class StopControl:
    """The stop switch of one call, safe to pull from any thread, any number of times."""

    def __init__(self, grace: float) -> None:
        self.token = CancellationToken()
        self.grace = grace
        self.reason: StopReason | None = None
        self.phase: Phase = "waiting"
        self.loop: asyncio.AbstractEventLoop | None = None
        self.task: asyncio.Task[Any] | None = None
        self.ignored_cancellation = False  # its body runs on after the call ended without it
        # The body left running that keeps the call's concurrency slots until it returns.
        self.slots_kept_by: asyncio.Future[Any] | concurrent.futures.Future[Any] | None = None
        self.cleanups: list[Callable[[], object]] = []
        self._lock = threading.Lock()

    @property
    def stopping(self) -> bool:
        """True once a stop was asked for."""
        return self.reason is not None

    def attach(self, task: asyncio.Task[Any]) -> None:
        """The runner's task on the runtime loop: what ``stop`` cancels."""
        self.task = task
        self.loop = task.get_loop()
        self.phase = "driving"

    def stop(self, reason: StopReason) -> bool:
        """Ask the call to stop for ``reason``; True the first time. Never blocks or raises.

        The token is set first, here in the caller's thread, so processes are signalled even
        while the runtime loop is busy; the task is cancelled on the loop.
        """
        with self._lock:
            if self.reason is not None or self.phase in ("finishing", "ended"):
                return False
            self.reason = reason
        self.token.cancel(reason)
        loop = self.loop
        if loop is not None:
            call_in_loop(loop, self._cancel_task)
        return True

    def note_reason(self, reason: StopReason) -> StopReason:
        """Record a reason found by the runner itself (a deadline, a token set by a body)."""
        with self._lock:
            if self.reason is None:
                self.reason = reason
            chosen = self.reason
        self.token.cancel(chosen)
        return chosen

    def _cancel_task(self) -> None:
        task = self.task
        if task is not None and self.phase in ("driving", "in_body") and not task.done():
            task.cancel()

    def finishing(self) -> list[str]:
        """From here on the call concludes: stops are no longer taken, and what the body left
        running (processes it spawned) is ended. Returns the problems met doing so."""
        with self._lock:
            self.phase = "finishing"
        self.task = None  # nothing left to cancel; a finished call keeps no task alive
        problems = []
        for cleanup in self.cleanups:
            try:
                cleanup()
            except Exception as exc:  # reported on the call by the runner
                problems.append(f"ending what the tool left running failed: {exc!r}")
        return problems

    async def let_go(
        self,
        body: asyncio.Future[Any] | asyncio.Task[Any] | concurrent.futures.Future[Any] | None,
        on_late: Callable[[], object],
    ) -> bool:
        """Give a body that is still running the grace to end after a stop; True if it did.

        Past the grace the body is abandoned (``on_late`` runs when it finally ends) and the
        call goes on to end without it.
        """
        if body is None or body.done():
            return True
        waited = asyncio.wrap_future(body) if isinstance(body, concurrent.futures.Future) else body
        # The body's outcome after a stop is nobody's concern (the call ends as stopped), but a
        # wrapped future asyncio saw fail unretrieved is logged as a traceback under the cell.
        waited.add_done_callback(outcome_seen)
        done, _ = await asyncio.wait({waited}, timeout=self.grace)
        if done:
            return True
        self.ignored_cancellation = True
        body.add_done_callback(lambda _: on_late())
        return False


def outcome_seen(future: asyncio.Future[Any]) -> None:
    """Mark a finished future's failure as retrieved: a body left to end after its call was
    stopped may fail or be cancelled long after, when its outcome is no one's concern, and
    asyncio would log it as never retrieved."""
    if not future.cancelled():
        future.exception()
