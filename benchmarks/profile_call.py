"""Where a call's time goes: the floor asyncio itself sets, and a profile of workbench's path.

Run beside the call-overhead benchmark so a missed goal comes with its reason: the cost of the
event-loop primitives any live, awaitable call needs (a loop pass, a task, a thread hop), the
CPU time spent per call including the history writer, and the functions that take the most of
it under cProfile (whose own overhead inflates small functions, so read shares, not sums).
"""

from __future__ import annotations

import asyncio
import cProfile
import os
import pstats
import sys
import time
from pathlib import Path
from typing import Any

import workbench as wb

ARGS: dict[str, Any] = {"a": "1", "b": 2, "c": 3}

SQLITE_STEP = "the SQLite transaction"
"""How the step that stores a call's row begins, in ``stages``."""

REST = "the rest (events, state, locks, glue)"
"""The step ``stages`` finds by subtraction: the whole call less every step timed."""


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


def stages(n: int = 3_000) -> list[dict[str, Any]]:
    """Microseconds per step of a ``def`` call waited for from a script (it runs on the waiting
    thread) with the history in a SQLite file, each step timed alone (the SQLite transaction
    timed inside the call, beside its time alone), beside the whole call."""
    import sqlite3
    import tempfile
    from pathlib import Path

    from workbench.families import render
    from workbench.history.row import encode
    from workbench.history.store import INSERT as _INSERT
    from workbench.history.store import prepare
    from workbench.runtime import record_of
    from workbench.runtime._outcome import project_result

    with tempfile.TemporaryDirectory(prefix="workbench-bench-") as scratch:
        directory = Path(scratch)
        tools = wb.Registry(history=directory / "history.sqlite")
        tools.register(add)
        tool = tools["add"]
        whole = _timed(lambda: tools.invoke("add", ARGS).wait(), n)
        in_the_call = _commit_in_the_call(tools, n)
        call = tools.prepare("add", ARGS)
        call.sheet.asked.spec = tool.spec
        checked = tool.preflight(ARGS)
        arguments = checked.arguments or {}
        envelope = project_result(call, tool, 6)
        receipt = render(envelope, tools.budgets)
        values = encode(record_of(call, envelope, receipt, "succeeded"))
        conn = sqlite3.connect(directory / "alone.sqlite", isolation_level=None)
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA synchronous=NORMAL")
        conn.execute("PRAGMA wal_autocheckpoint=0")
        prepare(conn)  # the history's own table and indexes: every commit writes them
        counter = iter(range(10 * n + 100))

        def commit() -> None:
            row = list(values)
            row[0] = f"row_{next(counter)}"
            conn.execute("BEGIN")
            conn.execute(_INSERT, row)
            conn.execute("COMMIT")

        def body() -> int:
            args, kwargs = tool.bind(arguments)
            return add(*args, **kwargs)

        steps = {
            "the Call object and its queued event": lambda: tools.prepare("add", ARGS),
            "preflight (coerce '1' to 1, validate)": lambda: tool.preflight(ARGS),
            "binding and running the body": body,
            "projection to the envelope": lambda: project_result(call, tool, 6),
            "the receipt": lambda: render(envelope, tools.budgets),
            "the row: CallRecord and its encoding": lambda: encode(
                record_of(call, envelope, receipt, "succeeded")
            ),
        }
        rows = [{"step": name, "us_per_call": _timed(step, n)} for name, step in steps.items()]
        alone = _timed(commit, n)
        rows.append(
            {
                "step": f"{SQLITE_STEP} (insert, commit to the WAL), inside the call "
                f"(alone, in a loop of its own: {alone:.0f})",
                "us_per_call": in_the_call,
            }
        )
        conn.close()
        tools.history.close()
    parts = sum(row["us_per_call"] for row in rows)
    rows.append({"step": REST, "us_per_call": whole - parts})
    rows.append({"step": "the whole call: invoke(...).wait()", "us_per_call": whole})
    for row in rows:
        row["share"] = row["us_per_call"] / whole
    return rows


def own_steps_us(rows: list[dict[str, Any]]) -> float:
    """The time of a call's own steps in ``stages`` rows, each timed alone, the SQLite
    transaction and the glue left out: what every call that keeps a row does besides storing
    it, at the fastest each step runs today."""
    return sum(
        row["us_per_call"]
        for row in rows[:-1]  # the last row is the whole call
        if row["step"] != REST and not row["step"].startswith(SQLITE_STEP)
    )


def _commit_in_the_call(tools: wb.Registry, n: int) -> float:
    """Microseconds the history's commit of one row takes inside ``invoke(...).wait()``, its
    encoding left out: more than the same transaction alone in a tight loop, where SQLite's
    code and pages stay in the CPU's caches between commits."""
    import workbench.history.store._writer as history_module

    history = tools.history
    write, keyed = history.write, history_module.keyed
    spent = {"commit": 0.0, "encoding": 0.0}

    def timed(into: str, step: Any) -> Any:
        def run(*args: Any) -> Any:
            started = time.perf_counter()
            try:
                return step(*args)
            finally:
                spent[into] += time.perf_counter() - started

        return run

    history.write = timed("commit", write)  # type: ignore[method-assign]
    history_module.keyed = timed("encoding", keyed)
    try:
        best = float("inf")
        for _ in range(3):
            spent.update(commit=0.0, encoding=0.0)
            for _ in range(n):
                tools.invoke("add", ARGS).wait()
            best = min(best, (spent["commit"] - spent["encoding"]) / n * 1e6)
    finally:
        del history.write
        history_module.keyed = keyed
    return best


def _timed(step: Any, n: int) -> float:
    for _ in range(max(1, n // 10)):
        step()
    best = float("inf")
    for _ in range(3):
        started = time.perf_counter()
        for _ in range(n):
            step()
        best = min(best, (time.perf_counter() - started) / n * 1e6)
    return best


def _short(filename: str) -> str:
    """A profiled file named without the machine's paths."""
    for marker in ("workbench/", "benchmarks/", "asyncio/", "site-packages/"):
        if marker in filename:
            return marker + filename.split(marker, 1)[1]
    for prefix in sorted({sys.base_prefix, sys.prefix}, key=len, reverse=True):
        if filename.startswith(prefix + os.sep):
            return "<python>/" + Path(filename).name  # the standard library
    return filename


if __name__ == "__main__":
    for row in stages() + floors() + cpu_per_call() + hot_functions():
        print(row)
