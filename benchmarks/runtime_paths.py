"""The person-facing paths of the runtime, with the history on disk and committed before each
call is seen to end: ``tools.invoke(...).wait()`` from a script and ``await tools.invoke(...)``
from a running loop, for a ``def`` and an ``async def`` tool, beside LangChain's
``StructuredTool.invoke`` and the ``mcp`` SDK's in-memory ``call_tool`` measured in the same
run; ``tools.invoke_many`` of many trivial calls, in calls per second; and a replay of many
imported calls (``tools.replay`` of every row ``wb.transcripts.load`` read), in seconds.

Each goal of issue 39 is judged on ratios from this one run: every path at least as fast as
LangChain (the moonshot, 3x, is shown beside it) and at least 2x faster than MCP,
``invoke_many`` at 20,000 calls/s, 100,000 replays in 10 s.
Beside them, the storage floor (``benchmarks.floors``): what SQLite alone costs for the rows
these calls kept, against the time per call each goal allows.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import workbench as wb
from benchmarks import floors, hops
from benchmarks.call_overhead import ARGS, _mcp, add, add_async


def _registry(directory: Path) -> wb.Registry:
    tools = wb.Registry(history=directory / "history.sqlite")
    tools.register(add)
    tools.register(add_async)
    return tools


def _langchain_body() -> Callable[[], object] | None:
    try:
        from langchain_core.tools import StructuredTool
    except ImportError:
        return None
    tool = StructuredTool.from_function(add)
    return lambda: tool.invoke(ARGS)


def _interleaved(
    ours: Callable[[int], float], theirs: Callable[[], object] | None, n: int, rounds: int
) -> tuple[float, float, float | None]:
    """Best wall µs and CPU µs (every thread) of ``ours``, and LangChain's best wall µs measured
    in the rounds between, so that other work on the machine weighs on both alike."""
    ours(max(1, n // 10))
    best = cpu_best = float("inf")
    best_theirs: float | None = None
    for _ in range(rounds):
        if theirs is not None:
            started = time.perf_counter()
            for _ in range(n):
                theirs()
            took = (time.perf_counter() - started) / n * 1e6
            best_theirs = took if best_theirs is None else min(best_theirs, took)
        cpu = time.process_time()
        best = min(best, ours(n) / n * 1e6)
        cpu_best = min(cpu_best, (time.process_time() - cpu) / n * 1e6)
    return best, cpu_best, best_theirs


def _paths(tools: wb.Registry, n: int, rounds: int) -> list[dict[str, Any]]:
    langchain = _langchain_body()
    if langchain is not None:
        langchain()
    found: list[dict[str, Any]] = []
    for name, label in (("add", "def tool"), ("add_async", "async def tool")):
        assert tools.invoke(name, ARGS).wait(10).result == 6

        def waited(count: int, name: str = name) -> float:
            started = time.perf_counter()
            for _ in range(count):
                tools.invoke(name, ARGS).wait()
            return time.perf_counter() - started

        async def many(count: int, name: str = name) -> float:
            started = time.perf_counter()
            for _ in range(count):
                await tools.invoke(name, ARGS)
            return time.perf_counter() - started

        loop = asyncio.new_event_loop()
        try:
            bodies: list[tuple[str, Callable[[int], float]]] = [
                (f"{label}: invoke().wait() from a script", waited),
                (
                    f"{label}: await invoke() from a running loop",
                    lambda count, loop=loop: loop.run_until_complete(many(count)),
                ),
            ]
            for path, body in bodies:
                wall, cpu, beside = _interleaved(body, langchain, n, rounds)
                switches = hops.switches_per_call(body, n)
                by_thread = hops.where_switches_go(body, n)
                found.append(
                    {
                        "path": path,
                        "us_per_call": wall,
                        "cpu_us": cpu,
                        "switches_per_call": switches,
                        "by_thread": by_thread,
                        "langchain_us": beside,
                    }
                )
        finally:
            loop.close()
    return found


GROUP = floors.BATCH
"""Rows a grouped commit holds: the lanes' and the imports' group size."""
ALONE = "one row a transaction (a call waited for)"
GROUPED = f"{GROUP} rows a transaction (invoke_many, replay, imports)"
COMMIT_COLUMNS = ["commit", "commit_us_per_row", "invoke_wait_us", "invoke_wait_cpu_us"]


def commit_cost(directory: Path, n: int, rounds: int) -> list[dict[str, Any]]:
    """What committing an ended call's row to SQLite costs the caller, alone and grouped, with
    the history on disk: the history's own ``write`` of one row a transaction and of ``GROUP``
    rows a transaction (best µs per row), beside ``invoke().wait()`` of the ``def`` tool (best
    wall and CPU µs per call), all measured interleaved in one run."""
    tools = _registry(directory / "commit")
    tools.invoke("add", ARGS).wait(10)
    record = tools.history.records()[-1]
    history = tools.history
    best: dict[str, dict[str, float]] = {ALONE: {}, GROUPED: {}}

    def keep(label: str, key: str, value: float) -> None:
        best[label][key] = min(best[label].get(key, value), value)

    for round_ in range(rounds):
        for label, size in ((ALONE, 1), (GROUPED, GROUP)):
            rows = [
                dataclasses.replace(record, call_id=f"{record.call_id}-{round_}-{size}-{index}")
                for index in range(n)
            ]
            started = time.perf_counter()
            for start in range(0, n, size):
                history.write(rows[start : start + size])
            keep(label, "commit_us_per_row", (time.perf_counter() - started) / n * 1e6)
            cpu = time.process_time()
            started = time.perf_counter()
            for _call in range(n):
                tools.invoke("add", ARGS).wait()
            keep(label, "invoke_wait_us", (time.perf_counter() - started) / n * 1e6)
            keep(label, "invoke_wait_cpu_us", (time.process_time() - cpu) / n * 1e6)
    history.close()
    return [{"commit": label, **figures} for label, figures in best.items()]


def throughput(tools: wb.Registry, count: int, rounds: int, name: str = "add_async") -> float:
    """Calls per second of ``invoke_many`` of one tool, waiting for every envelope."""
    best = float("inf")
    for _ in range(rounds):
        started = time.perf_counter()
        calls = tools.invoke_many([(name, ARGS)] * count)
        for call in calls:
            call.wait()
        best = min(best, time.perf_counter() - started)
    return count / best


ROW_COLUMNS = [
    "path",
    "us_per_call",
    "cpu_us",
    "switches_per_call",
    "langchain_us",
    "vs_langchain",
    "vs_mcp",
]
VERDICT_COLUMNS = ["path", "against", "times_faster", "goal", "met", "moonshot"]
MANY_COLUMNS = ["tool", "calls", "calls_per_second", "goal", "met"]
FLOOR_COLUMNS = [
    "floor",
    "floor_us_per_call",
    "goal",
    "budget_us_per_call",
    "floor_share_of_budget",
    "steps_us_per_call",
    "with_steps_share_of_budget",
]
REPLAY_COLUMNS = ["calls", "seconds", "calls_per_second", "seconds_for_100k", "goal", "met"]
LANGCHAIN_GOAL = 1.0
LANGCHAIN_MOONSHOT = 3.0
MCP_GOAL = 2.0
CALLS_PER_SECOND_GOAL = 20_000
REPLAY_GOAL_S = 10.0
REPLAY_GOAL_CALLS = 100_000


def replay_imported(directory: Path, calls: int) -> dict[str, Any]:
    """Seconds to replay ``calls`` imported calls: a synthetic OpenAI chat transcript is
    imported by ``wb.transcripts.load`` (not timed), then every row is replayed against a
    registered ``def`` tool and waited for, each replay's row linked to its original."""
    from benchmarks.transcripts import openai_chat

    source = directory / "run.json"
    source.write_text(json.dumps(openai_chat(calls)), encoding="utf-8")
    imported = wb.transcripts.load(source, history=directory / "imported.sqlite")
    rows = imported.rows()
    tools = wb.Registry(history=directory / "replays.sqlite")

    @tools.tool
    def read_file(path: str, limit: int = 10) -> str:
        """Read the first lines of a file."""
        return f"{path}: {limit} lines"

    started = time.perf_counter()
    replays = [tools.replay(row) for row in rows]
    for replay in replays:
        replay.wait()
    seconds = time.perf_counter() - started
    assert all(replay.call.envelope is not None for replay in replays)
    tools.history.close()
    imported.close()
    scaled = seconds * REPLAY_GOAL_CALLS / max(1, len(rows))
    return {
        "calls": len(rows),
        "seconds": seconds,
        "calls_per_second": len(rows) / seconds,
        "seconds_for_100k": scaled,
        "goal": f"≤ {REPLAY_GOAL_S:g} s for {REPLAY_GOAL_CALLS:,}",
        "met": scaled <= REPLAY_GOAL_S,
    }


SWITCH_COLUMNS = ["path", "caller", "runtime_loop", "workers", "history_writer", "others"]
_THREAD_GROUPS = {
    "MainThread": "caller",
    "workbench-runtime": "runtime_loop",
    "workbench-worker": "workers",
    "workbench-history": "history_writer",
    "workbench-history-checkpoint": "history_writer",
}


CROSSING_COLUMNS = [
    "path",
    "us_per_call",
    "waited_us",
    "crossing_us",
    "floor_us",
    "langchain_us",
    "floor_share_of_langchain",
]


def await_floor(rows: list[dict[str, Any]], crossing: float) -> list[dict[str, Any]]:
    """What an awaited ``def`` call cannot go below while it keeps the awaiting loop free: the
    same call waited for (``def`` + ``wait()``, run on the waiting thread) plus one bare
    crossing to a worker thread and back (``hops.crossing_us``), beside LangChain's call
    measured between that path's rounds. A share under 1 means the crossing does not stop the
    goal: what the path costs beyond the floor is its own glue."""
    by_path = {row["path"]: row for row in rows}
    waited = by_path["def tool: invoke().wait() from a script"]
    awaited = by_path["def tool: await invoke() from a running loop"]
    floor = waited["us_per_call"] + crossing
    langchain = awaited["langchain_us"]
    return [
        {
            "path": awaited["path"],
            "us_per_call": awaited["us_per_call"],
            "waited_us": waited["us_per_call"],
            "crossing_us": crossing,
            "floor_us": floor,
            "langchain_us": langchain,
            "floor_share_of_langchain": None if langchain is None else floor / langchain,
        }
    ]


def switches_by_thread(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Where each path's switches go: per call, by the thread that waited (the caller's, the
    runtime loop's, the workers', the history writer's, and every other thread together)."""
    found = []
    for row in rows:
        groups = dict.fromkeys(SWITCH_COLUMNS[1:], 0.0)
        for name, count in row["by_thread"].items():
            groups[_THREAD_GROUPS.get(name, "others")] += count
        found.append({"path": row["path"], **groups})
    return found


def verdicts(rows: list[dict[str, Any]], mcp: float | None) -> list[dict[str, Any]]:
    """One row per path and alternative: how many times faster workbench was, against the goal
    (LangChain as measured between that path's rounds), and against LangChain's moonshot."""
    found = []
    for row in rows:
        for name, theirs, goal, moonshot in (
            (
                "LangChain StructuredTool.invoke",
                row["langchain_us"],
                LANGCHAIN_GOAL,
                LANGCHAIN_MOONSHOT,
            ),
            ("mcp call_tool (in-memory)", mcp, MCP_GOAL, None),
        ):
            if theirs is None:
                continue
            times = theirs / row["us_per_call"]
            found.append(
                {
                    "path": row["path"],
                    "against": name,
                    "times_faster": times,
                    "goal": f"≥ {goal:g}x",
                    "met": "met" if times >= goal else "MISSED",
                    "moonshot": "n/a"
                    if moonshot is None
                    else f"{'met' if times >= moonshot else 'not yet'} (≥ {moonshot:g}x)",
                }
            )
    return found


def run(
    n: int = 2_000,
    rounds: int = 3,
    many: int = 10_000,
    replays: int = REPLAY_GOAL_CALLS,
    steps_us: float | None = None,
) -> dict[str, Any]:
    """Every figure of this section: rows per path, goals, ``invoke_many`` (of an ``async def``
    tool, run on the loop, and of a ``def`` tool, run in lanes), the replay, and the floors
    (with a call's own steps added when ``steps_us`` is given)."""
    loop = asyncio.new_event_loop()
    try:
        mcp = _mcp(loop, max(1, n // 5), rounds)
    finally:
        loop.close()
    with tempfile.TemporaryDirectory() as directory:
        tools = _registry(Path(directory))
        measured = _paths(tools, n, rounds)
        per_second = {
            label: throughput(tools, many, rounds, name)
            for label, name in (("async def", "add_async"), ("def", "add"))
        }
        rows_kept = len(tools.history)
        tools.history.close()
        stored = floors.stored_rows(Path(directory) / "history.sqlite", 1_000)
        replay = replay_imported(Path(directory), replays)
        commit = commit_cost(Path(directory), n, rounds)
        floor = storage_floor(stored, measured, rounds, steps_us)
    rows = [
        {
            **row,
            "vs_langchain": None
            if row["langchain_us"] is None
            else row["us_per_call"] / row["langchain_us"],
            "vs_mcp": None if mcp is None else row["us_per_call"] / mcp,
        }
        for row in measured
    ]
    return {
        "rows": rows,
        "switches": switches_by_thread(measured),
        "verdicts": verdicts(rows, mcp),
        "mcp_us": mcp,
        "hop_us": hops.hop_us(),
        "crossing": await_floor(rows, hops.crossing_us()),
        "invoke_many": [
            {
                "tool": label,
                "calls": many,
                "calls_per_second": rate,
                "goal": f"≥ {CALLS_PER_SECOND_GOAL:,} calls/s",
                "met": "met" if rate >= CALLS_PER_SECOND_GOAL else "MISSED",
                "history_rows": rows_kept,
            }
            for label, rate in per_second.items()
        ],
        "replay": {**replay, "met": "met" if replay["met"] else "MISSED"},
        "floor": floor,
        "commit": commit,
    }


def storage_floor(
    stored: list[list[Any]],
    measured: list[dict[str, Any]],
    rounds: int,
    steps_us: float | None = None,
) -> list[dict[str, Any]]:
    """SQLite alone, for the rows these calls kept, beside the budget each goal leaves:
    LangChain's call (the slowest LangChain time measured between the rounds, the most
    generous budget), a fiftieth of a millisecond per call for 20,000 calls/s, and a
    ten-thousandth of a second per replay for 100,000 replays in 10 s.

    With ``steps_us`` (a call's own steps, each timed alone: ``profile_call.own_steps_us``),
    each floor is also set beside the budget with those steps added: a share of 1 or more
    there means the goal cannot be met without making the steps themselves faster, whatever
    the glue between them costs."""
    langchain = [row["langchain_us"] for row in measured if row["langchain_us"] is not None]
    commit = floors.commit_us(stored, rounds=rounds)
    grouped = 1e6 / floors.insert_calls_per_s(stored, on_disk=True, rounds=rounds)

    def beside(floor: str, floor_us: float, goal: str, budget_us: float) -> dict[str, Any]:
        row = {
            "floor": floor,
            "floor_us_per_call": floor_us,
            "goal": goal,
            "budget_us_per_call": budget_us,
            "floor_share_of_budget": floor_us / budget_us,
        }
        if steps_us is not None:
            row["steps_us_per_call"] = steps_us
            row["with_steps_share_of_budget"] = (floor_us + steps_us) / budget_us
        return row

    in_groups = f"rows committed {floors.BATCH} at a time, on disk"
    found = []
    if langchain:
        found.append(
            beside(
                "one row committed per call, on disk",
                commit,
                f"≥ {LANGCHAIN_GOAL:g}x LangChain",
                max(langchain) / LANGCHAIN_GOAL,
            )
        )
    found.append(
        beside(
            in_groups, grouped, f"≥ {CALLS_PER_SECOND_GOAL:,} calls/s", 1e6 / CALLS_PER_SECOND_GOAL
        )
    )
    found.append(
        beside(
            in_groups,
            grouped,
            f"≤ {REPLAY_GOAL_S:g} s for {REPLAY_GOAL_CALLS:,} replays",
            REPLAY_GOAL_S * 1e6 / REPLAY_GOAL_CALLS,
        )
    )
    return found


if __name__ == "__main__":
    from benchmarks.__main__ import table

    report = run()
    print(f"mcp {report['mcp_us']:.1f} µs")
    print(table(report["rows"], ROW_COLUMNS))
    print(table(report["verdicts"], VERDICT_COLUMNS))
    print(table(report["invoke_many"], MANY_COLUMNS))
    print(table([report["replay"]], REPLAY_COLUMNS))
    print(table(report["commit"], COMMIT_COLUMNS))
