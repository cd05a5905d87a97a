"""Call overhead: a trivial three-argument tool with a string-encoded integer, end to end.

workbench's figure covers everything a model's call costs: preflight (coercing "1" → 1 and
validating), execution, projection to an envelope, rendering the receipt, and the history row
(in ``:memory:``). It is set beside what people would use instead, measured in the same run:
the bare function, pydantic validation plus the call, LangChain's ``StructuredTool.invoke`` and
the ``mcp`` SDK's in-memory ``Client.call_tool``. Each figure is the best of several rounds, in
microseconds per call.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import Any

from pydantic import BaseModel

import workbench as wb

ARGS: dict[str, Any] = {"a": "1", "b": 2, "c": 3}


def add(a: int, b: int, c: int) -> int:
    """Add three integers."""
    return a + b + c


async def add_async(a: int, b: int, c: int) -> int:
    """Add three integers."""
    return a + b + c


class AddArgs(BaseModel):
    a: int
    b: int
    c: int


def _best(run: Callable[[int], float], n: int, rounds: int) -> float:
    run(max(1, n // 10))  # warm up caches, imports, lazily built validators
    return min(run(n) for _ in range(rounds)) / n * 1e6


def _timed_sync(body: Callable[[], object]) -> Callable[[int], float]:
    def run(n: int) -> float:
        started = time.perf_counter()
        for _ in range(n):
            body()
        return time.perf_counter() - started

    return run


def _timed_async(
    loop: asyncio.AbstractEventLoop, body: Callable[[], Awaitable[object]]
) -> Callable[[int], float]:
    async def many(n: int) -> float:
        started = time.perf_counter()
        for _ in range(n):
            await body()
        return time.perf_counter() - started

    return lambda n: loop.run_until_complete(many(n))


def _workbench(loop: asyncio.AbstractEventLoop, n: int, rounds: int) -> dict[str, float]:
    tools = wb.Registry(history=":memory:")
    tools.register(add)
    tools.register(add_async)

    def through(name: str) -> Callable[[], Awaitable[object]]:
        async def body() -> object:
            call = tools.invoke(name, ARGS)
            await call
            return call.receipt

        return body

    check = loop.run_until_complete(tools.invoke("add", ARGS))
    assert check.ok and check.result == 6, check
    results = {
        "workbench async tool": _best(_timed_async(loop, through("add_async")), n, rounds),
        "workbench def tool": _best(_timed_async(loop, through("add")), n, rounds),
    }
    tools.history.flush()
    tools.history.close()
    return results


def _langchain(n: int, rounds: int) -> float | None:
    try:
        from langchain_core.tools import StructuredTool
    except ImportError:
        return None
    tool = StructuredTool.from_function(add)
    assert tool.invoke(ARGS) == 6
    return _best(_timed_sync(lambda: tool.invoke(ARGS)), n, rounds)


def _mcp(loop: asyncio.AbstractEventLoop, n: int, rounds: int) -> float | None:
    try:
        from mcp import Client
        from mcp.server.mcpserver import MCPServer
    except ImportError:
        return None
    server = MCPServer("bench")
    server.tool()(add)

    async def measure() -> float:
        async with Client(server) as client:
            result = await client.call_tool("add", ARGS)
            assert not result.is_error, result

            async def many(count: int) -> float:
                started = time.perf_counter()
                for _ in range(count):
                    await client.call_tool("add", ARGS)
                return time.perf_counter() - started

            await many(max(1, n // 10))
            best = min([await many(n) for _ in range(rounds)])
            return best / n * 1e6

    return loop.run_until_complete(measure())


def run(n: int = 5_000, rounds: int = 5) -> list[dict[str, Any]]:
    """Measure every contender; rows of ``{"contender", "us_per_call"}`` (None when missing)."""
    loop = asyncio.new_event_loop()
    try:
        adapter = AddArgs.model_validate
        figures: dict[str, float | None] = {
            "bare function call": _best(_timed_sync(lambda: add(1, 2, 3)), n * 10, rounds),
            "pydantic validate + call": _best(
                _timed_sync(lambda: add(**adapter(ARGS).__dict__)), n * 10, rounds
            ),
            "langchain StructuredTool.invoke": _langchain(n, rounds),
            "mcp Client.call_tool (in-memory)": _mcp(loop, max(1, n // 5), rounds),
        }
        figures.update(_workbench(loop, n, rounds))
    finally:
        loop.close()
    return [{"contender": name, "us_per_call": value} for name, value in figures.items()]


GOALS = (
    ("workbench async tool", "pydantic validate + call", "at most 10x", lambda r: r <= 10),
    (
        "workbench def tool",
        "langchain StructuredTool.invoke",
        "at least 3x faster",
        lambda r: r <= 1 / 3,
    ),
    (
        "workbench async tool",
        "mcp Client.call_tool (in-memory)",
        "at least 5x faster",
        lambda r: r <= 0.2,
    ),
    (
        "workbench def tool",
        "mcp Client.call_tool (in-memory)",
        "at least 5x faster",
        lambda r: r <= 0.2,
    ),
)


def goals(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each goal of issue 10 with its measured ratio and whether it was met."""
    figures = {row["contender"]: row["us_per_call"] for row in rows}
    verdicts = []
    for ours, theirs, goal, met in GOALS:
        if figures.get(ours) is None or figures.get(theirs) is None:
            continue
        ratio = figures[ours] / figures[theirs]
        verdicts.append(
            {"ours": ours, "theirs": theirs, "ratio": ratio, "goal": goal, "met": met(ratio)}
        )
    return verdicts


if __name__ == "__main__":
    measured = run()
    for row in measured:
        value = row["us_per_call"]
        print(f"{row['contender']:<36} {'n/a' if value is None else f'{value:9.2f} µs'}")
    for verdict in goals(measured):
        mark = "met" if verdict["met"] else "MISSED"
        pair = f"{verdict['ours']} / {verdict['theirs']}"
        print(f"{pair}: {verdict['ratio']:.2f} ({verdict['goal']}: {mark})")
