"""Tools shared by the runtime tests."""

from __future__ import annotations

import asyncio
import queue
import threading
import time
from collections.abc import Callable

import workbench as wb

STUBBORN_BUDGET_S = 0.2
STUBBORN_LINGER_S = 1.5
"""How long the stubborn body sleeps on after its first cancellation: past a 0.5 s grace."""


def declare_stubborn(tools: wb.Registry) -> None:
    """Declare ``stubborn`` on ``tools``: an ``async def`` body with a time budget of
    ``STUBBORN_BUDGET_S`` that ignores its first cancellation, sleeps ``STUBBORN_LINGER_S``
    more and then returns ``"late"``."""

    @tools.tool(timeout=STUBBORN_BUDGET_S)
    async def stubborn() -> str:
        """Ignore the first cancellation, then sleep a little more."""
        try:
            await asyncio.sleep(60)
        except asyncio.CancelledError:
            await asyncio.sleep(STUBBORN_LINGER_S)
        return "late"


def declare_budgeted(tools: wb.Registry) -> None:
    """Declare ``budgeted`` on ``tools``: an ``async def`` body that sleeps a minute, past its
    time budget of 0.2 s, and then returns ``"woke"``."""

    @tools.tool(timeout=0.2)
    async def budgeted() -> str:
        """Sleep past the time budget."""
        await asyncio.sleep(60)
        return "woke"


def terminate_soon(delay: float) -> Callable[[wb.Call], wb.Call]:
    """Start now a thread that presses Terminate on a call ``delay`` seconds after it is handed
    one, as a person's button; returns the function that hands it the call (and gives the call
    back). Handing is a queue's put, so nothing slow (such as starting a thread) comes between
    making a call and waiting for it, which must come within the few milliseconds a call made
    on a thread is left for that thread to run."""
    handed: queue.SimpleQueue[wb.Call] = queue.SimpleQueue()

    def press() -> None:
        call = handed.get()
        time.sleep(delay)
        call.terminate()

    threading.Thread(target=press, daemon=True).start()

    def hand(call: wb.Call) -> wb.Call:
        handed.put(call)
        return call

    return hand
