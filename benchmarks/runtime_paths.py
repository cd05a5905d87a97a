"""The person-facing paths of the runtime loop, with the history on disk and committed before
each call is seen to end: ``tools.invoke(...).wait()`` from a script and ``await
tools.invoke(...)`` from a running loop, for a ``def`` and an ``async def`` tool, beside
LangChain's ``StructuredTool.invoke`` and the ``mcp`` SDK's in-memory ``call_tool`` measured in
the same run; and ``tools.invoke_many`` of many trivial calls, in calls per second.
"""

from __future__ import annotations

import asyncio
import tempfile
import time
from pathlib import Path
from typing import Any

import workbench as wb
from benchmarks.call_overhead import ARGS, _best, _langchain, _mcp, _timed_sync, add, add_async


def _registry(directory: Path) -> wb.Registry:
    tools = wb.Registry(history=directory / "history.sqlite")
    tools.register(add)
    tools.register(add_async)
    return tools


def _paths(tools: wb.Registry, n: int, rounds: int) -> dict[str, float]:
    figures: dict[str, float] = {}
    for name, label in (("add", "def tool"), ("add_async", "async def tool")):
        assert tools.invoke(name, ARGS).wait(10).result == 6
        figures[f"{label}: invoke().wait() from a script"] = _best(
            _timed_sync(lambda name=name: tools.invoke(name, ARGS).wait()), n, rounds
        )

        async def many(count: int, name: str = name) -> float:
            started = time.perf_counter()
            for _ in range(count):
                await tools.invoke(name, ARGS)
            return time.perf_counter() - started

        loop = asyncio.new_event_loop()
        try:
            figures[f"{label}: await invoke() from a running loop"] = _best(
                lambda count, loop=loop: loop.run_until_complete(many(count)), n, rounds
            )
        finally:
            loop.close()
    return figures


def throughput(tools: wb.Registry, count: int, rounds: int) -> float:
    """Calls per second of ``invoke_many`` (async def tool), waiting for every envelope."""
    best = float("inf")
    for _ in range(rounds):
        started = time.perf_counter()
        calls = tools.invoke_many([("add_async", ARGS)] * count)
        for call in calls:
            call.wait()
        best = min(best, time.perf_counter() - started)
    return count / best


def run(n: int = 2_000, rounds: int = 3, many: int = 10_000) -> dict[str, Any]:
    """Every figure of this section: rows per path, goals, and the invoke_many throughput."""
    loop = asyncio.new_event_loop()
    try:
        langchain = _langchain(n, rounds)
        mcp = _mcp(loop, max(1, n // 5), rounds)
    finally:
        loop.close()
    with tempfile.TemporaryDirectory() as directory:
        tools = _registry(Path(directory))
        figures = _paths(tools, n, rounds)
        per_second = throughput(tools, many, rounds)
        rows_kept = len(tools.history)
        tools.history.close()
    rows = [
        {
            "path": path,
            "us_per_call": value,
            "vs_langchain": None if langchain is None else value / langchain,
            "vs_mcp": None if mcp is None else value / mcp,
            "goal": "≤ 0.33 of LangChain and ≤ 0.20 of MCP",
            "met": langchain is not None
            and mcp is not None
            and value / langchain <= 1 / 3
            and value / mcp <= 0.2,
        }
        for path, value in figures.items()
    ]
    return {
        "rows": rows,
        "langchain_us": langchain,
        "mcp_us": mcp,
        "invoke_many": {
            "calls": many,
            "calls_per_second": per_second,
            "goal": "≥ 20,000 calls/s",
            "met": per_second >= 20_000,
            "history_rows": rows_kept,
        },
    }


if __name__ == "__main__":
    report = run()
    print(f"langchain {report['langchain_us']} µs, mcp {report['mcp_us']} µs")
    for row in report["rows"]:
        print(row)
    print(report["invoke_many"])
