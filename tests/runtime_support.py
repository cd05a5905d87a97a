"""Tools shared by the runtime tests."""

from __future__ import annotations

import asyncio

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
