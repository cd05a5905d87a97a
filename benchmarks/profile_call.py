"""Where a call's time goes: the floor asyncio itself sets, and a profile of workbench's path.

Run beside the call-overhead benchmark so a missed goal comes with its reason: the cost of the
event-loop primitives any live, awaitable call needs (a loop pass, a task, a thread hop), the
CPU time spent per call including the history writer, and the functions that take the most of
it under cProfile (whose own overhead inflates small functions, so read shares, not sums).
"""

from __future__ import annotations

import asyncio
import cProfile
import pstats
import time
from typing import Any

import workbench as wb

ARGS: dict[str, Any] = {"a": "1", "b": 2, "c": 3}


def add(a: int, b: int, c: int) -> int:
    """Add three integers."""
    return a + b + c


async def add_async(a: int, b: int, c: int) -> int:
    """Add three integers."""
    return a + b + c


async def _per_call(body: Any, n: int) -> float:
    started = time.perf_counter()
    for _ in range(n):
        await body()
    return (time.perf_counter() - started) / n * 1e6


def floors(n: int = 20_000) -> list[dict[str, Any]]:
    """What asyncio's own primitives cost here, per use, in microseconds."""
    loop = asyncio.new_event_loop()

    async def noop() -> None:
        return None

    async def task() -> None:
        await loop.create_task(noop())

    async def hop() -> None:
        await loop.run_in_executor(None, add, 1, 2, 3)

    try:
        rows = [
            {
                "primitive": name,
                "us_per_use": min(loop.run_until_complete(_per_call(body, n)) for _ in range(3)),
            }
            for name, body in (
                ("an event-loop pass (await asyncio.sleep(0))", lambda: asyncio.sleep(0)),
                ("create a task and await it", task),
                ("a run_in_executor thread hop", hop),
            )
        ]
    finally:
        loop.close()
    return rows


def cpu_per_call(n: int = 5_000) -> list[dict[str, Any]]:
    """Wall and CPU microseconds per awaited call, with and without the history writer."""
    rows = []
    for history in ("sqlite :memory:", "no history"):
        tools = wb.Registry(history=":memory:")
        tools.register(add)
        tools.register(add_async)
        if history == "no history":
            tools.history.record = lambda row: None  # type: ignore[method-assign]
        loop = asyncio.new_event_loop()
        for name in ("add_async", "add"):

            async def call(name: str = name, tools: wb.Registry = tools) -> None:
                await tools.invoke(name, ARGS)

            loop.run_until_complete(_per_call(call, n // 10))
            cpu = time.process_time()
            wall = loop.run_until_complete(_per_call(call, n))
            rows.append(
                {
                    "tool": name,
                    "history": history,
                    "wall_us": wall,
                    "cpu_us": (time.process_time() - cpu) / n * 1e6,
                }
            )
        loop.close()
        tools.history.flush()
        tools.history.close()
    return rows


def hot_functions(name: str = "add_async", n: int = 3_000, top: int = 12) -> list[dict[str, Any]]:
    """The functions with the most own time per call under cProfile."""
    tools = wb.Registry(history=":memory:")
    tools.register(add)
    tools.register(add_async)
    loop = asyncio.new_event_loop()

    async def calls(count: int) -> None:
        for _ in range(count):
            await tools.invoke(name, ARGS)

    loop.run_until_complete(calls(n // 10))
    profile = cProfile.Profile()
    profile.enable()
    loop.run_until_complete(calls(n))
    profile.disable()
    loop.close()
    tools.history.close()
    stats = pstats.Stats(profile).stats  # type: ignore[attr-defined]
    total = sum(entry[2] for entry in stats.values())
    ranked = sorted(stats.items(), key=lambda item: item[1][2], reverse=True)[:top]
    return [
        {
            "function": f"{_short(filename)}:{line}({function})",
            "us_per_call": own / n * 1e6,
            "share": own / total,
        }
        for (filename, line, function), (_cc, _nc, own, _cum, _callers) in ranked
    ]


def _short(filename: str) -> str:
    for marker in ("workbench/", "asyncio/", "site-packages/"):
        if marker in filename:
            return marker + filename.split(marker, 1)[1]
    return filename


if __name__ == "__main__":
    for row in floors() + cpu_per_call() + hot_functions():
        print(row)
