"""The scheduler: the one thread that starts calls nobody waited for and watches the calls run
inline, and where every driver hands calls over.

A call made off the runtime loop that could run inline is left a moment (``TICK_S``) for a
``call.wait()`` to take it, which saves waking the loop; nobody waiting, the scheduler starts
it then (in its registry's lanes, or on the loop). A call taken inline (``take_inline``) is
watched for its time budget and, once stopped, for its grace: a body that ignores cancellation
past it is left behind and the call ends without it. The lanes are watched while calls wait for
them, so they can widen when their bodies stall. It ticks while there is work and sleeps when
there is none: a burst of calls costs a few wake-ups a second, not one per call.
"""

from __future__ import annotations

import atexit
import os
import threading
import time
import warnings
from typing import TYPE_CHECKING, Any

from workbench.runtime.scheduling._on_loop import start
from workbench.runtime.scheduling._qualify import tool_if_inline
from workbench.runtime.steps import BodyKind, leave_behind, let_go, seal
from workbench.runtime.threads import driving

if TYPE_CHECKING:
    from workbench.declare import Tool
    from workbench.envelope import Envelope
    from workbench.runtime.call import Call
    from workbench.runtime.policy import Limit
    from workbench.runtime.scheduling._lanes import Lanes

TICK_S = 0.002
"""How long a call made on another thread is left for that thread to run inline (it starts on
the runtime loop after this, if nobody waits for it), and how often the ticker looks."""

IDLE_TICK_S = 0.05
"""How often running inline calls are checked against their time budget and grace when no call
waits to be started."""

PARK_AFTER_S = 0.5
"""How long the ticker keeps ticking after its last work before it sleeps until woken."""

EXIT_WAIT_S = 10.0
"""At exit, how long the interpreter waits for calls that were made but never started."""


class InlineRun:
    """One call running inline: its deadline, when it was asked to stop, and who ends it."""

    __slots__ = ("body", "call", "deadline", "ended", "lock", "slot", "stopped_at")

    def __init__(
        self, call: Call, body: BodyKind, deadline: float | None, slot: Limit | None
    ) -> None:
        self.call = call
        self.body = body  # what a card says was left running
        self.deadline = deadline
        self.stopped_at: float | None = None
        self.slot = slot
        self.ended = False
        self.lock = threading.Lock()

    def end(self, *, free_slot: bool = True) -> bool:
        """Take the ending of the call (the body returning, or the ticker leaving it behind);
        True once. The concurrency slot is given back by whoever takes it, unless the ticker
        leaves a body behind that must keep it (``free_slot``): it is given back as the body
        returns (``returned``)."""
        with self.lock:
            if self.ended:
                return False
            self.ended = True
        if self.slot is not None and free_slot:
            self.slot.release()
            self.slot = None
        return True

    def returned(self) -> None:
        """The body returned after the ticker left it behind: it no longer counts as running
        on, and a slot it kept is given back."""
        self.call.registry.limits.concurrency.caught_up()
        if self.slot is not None:
            self.slot.release()
            self.slot = None


class Scheduler:
    """The one thread that starts calls nobody waited for and enforces time budgets and grace
    for calls run inline. It ticks while there is work and sleeps when there is none, so a
    burst of calls costs it a few wake-ups a second, not one per call."""

    def __init__(self) -> None:
        self._runs: dict[int, InlineRun] = {}
        self._deferred: dict[int, tuple[Call, float]] = {}
        self._unfinished: dict[int, Call] = {}  # every deferred call until it ends (for exit)
        self._lanes: dict[int, Lanes] = {}  # lanes with calls waiting (they may widen)
        # Taken bare (a C-level ``with``) wherever nothing waits on or notifies the condition:
        # every call made off the loop passes here several times.
        self._lock = threading.Lock()
        self._changed = threading.Condition(self._lock)
        self._parked = False
        self._thread: threading.Thread | None = None

    def _ensure(self) -> None:
        # Called holding the condition's lock.
        if self._thread is None:
            self._thread = threading.Thread(
                target=self._tick, name="workbench-inline-ticker", daemon=True
            )
            self._thread.start()
        elif self._parked:
            self._changed.notify()

    def add(self, run: InlineRun) -> None:
        """Watch ``run``'s time budget and grace."""
        self._keep(self._runs, id(run), run)

    def remove(self, run: InlineRun) -> None:
        with self._lock:
            self._runs.pop(id(run), None)

    def defer(self, call: Call) -> None:
        """Start ``call`` in ``TICK_S`` unless someone waits for it first."""
        with self._lock:
            self._unfinished[id(call)] = call
        self._keep(self._deferred, id(call), (call, time.monotonic()))

    def watch(self, lanes: Lanes) -> None:
        """Tick for ``lanes`` while calls wait for them."""
        self._keep(self._lanes, id(lanes), lanes)

    def _keep(self, table: dict[int, Any], key: int, value: Any) -> None:
        with self._lock:
            table[key] = value
            self._ensure()

    def forget(self, call: Call) -> None:
        """``call`` ended: an exit no longer needs to wait for it."""
        with self._lock:
            self._unfinished.pop(id(call), None)

    def unfinished(self) -> list[Call]:
        with self._lock:
            return list(self._unfinished.values())

    def waiting(self, call: Call) -> bool:
        """True while ``call`` waits to be started (read without the lock: a snapshot)."""
        return id(call) in self._deferred

    def take(self, call: Call) -> bool:
        """Remove ``call`` from the calls waiting to be started; True if it was there."""
        with self._lock:
            return self._deferred.pop(id(call), None) is not None

    def take_all_if_waiting(self, call: Call) -> list[Call]:
        """Every call waiting to be started, in the order made, if ``call`` is one of them."""
        with self._lock:
            if id(call) not in self._deferred:
                return []
            calls = [waiting for waiting, _ in self._deferred.values()]
            self._deferred.clear()
        return calls

    def take_all(self) -> list[Call]:
        with self._lock:
            calls = [call for call, _ in self._deferred.values()]
            self._deferred.clear()
        return calls

    def _tick(self) -> None:
        last_work = time.monotonic()
        while True:
            with self._changed:
                idle = not self._runs and not self._deferred and not self._lanes
                if idle and time.monotonic() - last_work > PARK_AFTER_S:
                    self._parked = True
                    self._changed.wait()
                    self._parked = False
                    last_work = time.monotonic()
                pause = TICK_S if self._deferred or self._lanes else IDLE_TICK_S
            time.sleep(pause)
            now = time.monotonic()
            with self._changed:
                runs = list(self._runs.values())
                lanes = list(self._lanes.values())
                ready = self._take_due(now)
                if runs or ready or self._deferred or lanes:
                    last_work = now
            for waiting in lanes:
                if not waiting.tick(now):
                    with self._changed:
                        if waiting.idle:  # (calls queued since are watched again)
                            self._lanes.pop(id(waiting), None)
            if ready:
                start_calls(*ready)
            for run in runs:
                self._check(run, now)

    def _take_due(self, now: float) -> list[Call]:
        """The calls deferred for ``TICK_S`` or longer, taken out (the caller holds the lock).

        Calls are deferred in time order, so the scan stops at the first one still young: a
        burst of many thousand calls costs each tick only the calls it starts."""
        due: list[int] = []
        for key, (_, since) in self._deferred.items():
            if now - since < TICK_S:
                break
            due.append(key)
        return [self._deferred.pop(key)[0] for key in due]

    def _check(self, run: InlineRun, now: float) -> None:
        control = run.call.sheet.control
        if control.reason is None and run.deadline is not None and now >= run.deadline:
            control.stop("timeout")
        if control.reason is None:
            return
        if run.stopped_at is None:
            run.stopped_at = now
        elif now - run.stopped_at >= control.grace:
            with run.lock:
                if run.ended:
                    return
            freed, text = let_go(run.call, run.body, control.reason)
            if not run.end(free_slot=freed):  # the body returned just now after all
                run.returned()
                return
            self.remove(run)
            leave_behind(run.call, control.reason, text)


SCHEDULER = Scheduler()


def _forget_in_forked_child() -> None:
    # The ticker's thread did not survive the fork, and the calls it watched are the parent's.
    global SCHEDULER
    SCHEDULER = Scheduler()


os.register_at_fork(after_in_child=_forget_in_forked_child)


def start_or_defer(call: Call) -> None:
    """Start a call made on a thread other than the runtime loop's. One that could run inline
    is left a moment (``TICK_S``) for ``call.wait()`` to take it, which saves waking the loop;
    nobody waiting, the ticker starts it then. Anything else starts at once."""
    if tool_if_inline(call, here=True) is not None:
        call.sheet.ending.on_end(lambda: SCHEDULER.forget(call))
        SCHEDULER.defer(call)
    else:
        start_calls(*SCHEDULER.take_all(), call)  # in the order they were made


def watch_lanes(lanes: Lanes) -> None:
    """Tick while ``lanes`` has calls waiting, so it can open more lanes if they stall."""
    SCHEDULER.watch(lanes)


def start_calls(*calls: Call) -> None:
    """Start ``calls``, returning at once: in their registry's lanes when every one of them
    could run inline, else all on the runtime loop, which starts them in the order given (a
    mixed burst split between the two would end out of order for no gain). While the loop
    runs calls, new ones join them there too: a burst must not overtake calls started before
    it. Calls made inside a running tool never go to a lane: they run in their ancestor's
    slot, and the lanes (as many as the slots) may all be held by the calls that wait for
    them."""
    if not calls:
        return
    registry = calls[0].registry
    if not driving() and all(
        call.registry is registry
        and call.parent is None  # a call made inside a running tool must not wait for a lane
        and call.sheet.phase.driver is None
        and tool_if_inline(call)
        for call in calls
    ):
        registry.limits.lanes.run(list(calls))
    else:
        start(*calls)


def kick(call: Call) -> None:
    """Start ``call`` now (with every call made before it that still waits for the ticker)
    if it was left for a waiter; someone awaits it, or waits with a timeout."""
    waiting = SCHEDULER.take_all_if_waiting(call)
    if waiting:
        start_calls(*waiting)


def left_for_a_waiter(call: Call) -> bool:
    """True while ``call`` waits for someone to wait for it (it has not been started): only
    then may a waiter run it, so a call handed to the loop or a lane is never taken back
    from the calls started before it."""
    return SCHEDULER.waiting(call)


@atexit.register
def _start_what_was_left() -> None:
    """A script that ends right after making calls keeps them: calls left for a waiter that
    never came start now, and the interpreter waits (a bounded time) for them to end."""
    left = SCHEDULER.take_all()
    if left:
        start_calls(*left)
    deadline = time.monotonic() + EXIT_WAIT_S
    for call in SCHEDULER.unfinished():
        try:
            call.wait(max(0.0, deadline - time.monotonic()))
        except TimeoutError:
            warnings.warn(
                f"{call.tool_name} call {call.id} was still running at exit and was left",
                RuntimeWarning,
                stacklevel=1,
            )


def take_inline(call: Call, tool: Tool) -> InlineRun | None:
    """Take the running of ``call`` for this thread, with a concurrency slot, and have the
    ticker watch its time budget and grace; None when every slot is taken or someone else runs
    it (nothing is then held)."""
    slot = None if call.parent is not None else call.registry.limits.concurrency
    if slot is not None and not slot.try_acquire():
        return None  # every slot is taken: the loop queues it fairly
    sheet = call.sheet
    if not sheet.phase.claim("inline"):
        if slot is not None:
            slot.release()
        return None
    sheet.times.clock.wait_ends()  # picked up: the time since invocation was spent in the queue
    SCHEDULER.take(call)
    others = SCHEDULER.take_all()
    if others:
        start_calls(*others)  # made before this one, nobody waits for them here: run now
    sheet.control.phase = "in_body"
    body: BodyKind = "async body" if tool.kind == "coroutine" else "thread body"
    inline = InlineRun(call, body, _deadline(tool), slot)
    SCHEDULER.add(inline)
    return inline


def end_inline(inline: InlineRun, envelope: Envelope) -> None:
    """End a call run by ``take_inline``'s taker with ``envelope``, unless the ticker ended it
    already without its body (then the late result is discarded, and said so)."""
    SCHEDULER.remove(inline)
    call = inline.call
    if inline.end():
        for problem in call.sheet.control.finishing():
            call.warn(problem)
        seal(call, envelope)
    else:
        # The ticker ended the call without the body (it ignored cancellation past the grace).
        inline.returned()
        call.registry.history.add_warning(call.id, "late result discarded after the call ended")


def _deadline(tool: Tool) -> float | None:
    budget = tool.spec.timeout
    return None if budget is None else time.monotonic() + budget
