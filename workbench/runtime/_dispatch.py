"""Which driver runs a call, decided once, where it starts or where someone waits for it.

    the runtime loop     every step, for any call (``_on_loop``)
    the waiting thread   a plain ``def`` call that needs nobody, run by ``call.wait()``
                         (``_waiting_thread``), or on a worker for ``await`` and timed waits
    the awaiting loop    an ``async def`` call that needs nobody, awaited from a loop other
                         than the runtime loop's, outside Jupyter (``_awaiting_loop``)
    lanes                a burst of such calls, run back to back on worker threads (``_lanes``)

The registry starts calls here; a ``Call`` asks ``DRIVERS`` when someone waits for it or stops
it, so the handle never imports a driver.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from workbench.runtime._awaiting_loop import run_on_awaiting_loop
from workbench.runtime._lanes import Lanes
from workbench.runtime._limits import Limits
from workbench.runtime._loop import on_loop_thread
from workbench.runtime._on_loop import start
from workbench.runtime._waiting_thread import (
    kick,
    left_for_a_waiter,
    run_inline,
    run_on_worker,
    start_calls,
    start_or_defer,
    watch_lanes,
)

if TYPE_CHECKING:
    import asyncio

    from workbench.runtime._call import Call


def launch(call: Call) -> None:
    """Start one call just made; returns at once."""
    if on_loop_thread(call.sheet.loop):
        start(call)
    else:
        start_or_defer(call)


def launch_many(calls: list[Call]) -> None:
    """Start a burst of calls, in the order given; returns at once."""
    start_calls(*calls)


def limits_for(size: int) -> Limits:
    """A registry's limits: ``size`` slots, and its lanes, as many at most as that."""
    return Limits(size, lambda limit: Lanes(limit, run_inline, watch_lanes))


class _Drivers:
    """What a ``Call`` asks of the drivers (``workbench.runtime._call.Drivers``)."""

    def serve_waiter(self, call: Call, *, here: bool) -> bool:
        if not left_for_a_waiter(call):
            return False  # started already: the loop or a lane runs it
        if not here:
            run_on_worker(call)  # the waiting thread must stay free to give up in time
            return False
        # Left for a waiter (a plain ``def`` tool that needs no person) and nobody runs it
        # yet: this thread would only block until it ends, so it runs it right here, saving
        # four thread hops (two for an ``async def`` body, run on this thread's own loop).
        if run_inline(call, here=True):
            return True
        kick(call)
        return False

    def serve_awaiter(self, call: Call, loop: asyncio.AbstractEventLoop) -> None:
        if left_for_a_waiter(call) and not run_on_awaiting_loop(call, loop):
            run_on_worker(call)

    def start(self, call: Call) -> None:
        launch(call)

    def withdraw(self, call: Call) -> None:
        sheet = call.sheet
        if (
            sheet.phase.in_lane
            and sheet.phase.driver is None
            and call.registry.limits.lanes.withdraw(call)
        ):
            start(call)  # it waited for a lane: the loop ends it now, with no slot to wait for


DRIVERS = _Drivers()
