"""Two source trees of workbench, before and after a change, compared in one run by the CPU
instructions each spends on the same work (valgrind's callgrind counts them; the count does
not move with the machine's load, where wall-clock time on a shared machine does), or with
``--wall`` by the wall-clock time of the work itself, or with ``--cpu`` by the CPU time of
the whole process doing it, the trees interleaved run by run; ``--only=NAME`` runs the
workloads whose name holds NAME.

    python -m benchmarks.before_after BEFORE_TREE AFTER_TREE [REPEATS] [--wall | --cpu]
        [--only=NAME]

Each workload runs in a fresh interpreter on each tree through the public API only, once with
its work and once without (imports and set-up alone); the difference is the work's own count.
A ratio under 1 means the after tree spends fewer instructions. A path whose threads wait by
wall time (``await``, a wait with a timeout: the awaiting loop and the ticker spin while they
wait, and valgrind stretches that time) counts very differently from run to run, in either
direction: ``repeats`` runs of each give the spread, which is the noise; judge such a row by
CPU time measured interleaved instead.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

WORKLOAD = r'''
import asyncio, json, os, sys, tempfile, time
from pathlib import Path
import workbench as wb

name, count = sys.argv[1], int(sys.argv[2])
directory = Path(tempfile.mkdtemp())
tools = wb.Registry(history=directory / "history.sqlite")

@tools.tool
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b

@tools.tool
async def add_async(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b

def chat_log(calls):
    messages = [{"role": "user", "content": "add"}]
    for n in range(calls):
        arguments = json.dumps({"a": n, "b": 1})
        function = {"name": "add", "arguments": arguments}
        messages.append({"role": "assistant", "content": None, "tool_calls": [
            {"id": f"c{n}", "type": "function", "function": function}]})
        messages.append({"role": "tool", "tool_call_id": f"c{n}", "content": str(n + 1)})
    return {"messages": messages}

tools.invoke("add", {"a": 1, "b": 2}).wait()
tools.invoke("add_async", {"a": 1, "b": 2}).wait()
log = directory / "log.json"
# The log holds the workload's full size in each run, with its work and without, so loading it
# is never counted as the work of replaying a part of it.
log.write_text(json.dumps(chat_log(int(sys.argv[3]))))
imported = wb.transcripts.load(log) if name == "replay imported calls" else None
started, cpu_started = time.perf_counter(), time.process_time()
if name == "def wait()":
    for n in range(count):
        tools.invoke("add", {"a": n, "b": "1"}).wait()
elif name == "async def wait()":
    for n in range(count):
        tools.invoke("add_async", {"a": n, "b": 1}).wait()
elif name == "def await":
    async def main():
        for n in range(count):
            await tools.invoke("add", {"a": n, "b": 1})
    asyncio.run(main())
elif name == "import a chat log":
    if count:
        wb.transcripts.load(log)
elif name == "compact the history":
    for n in range(count):
        tools.invoke("add", {"a": n, "b": 1}).wait(30)
    wb.compact(tools.history, budget_chars=2000)
elif name in ("invoke_many def", "invoke_many async def"):
    tool = "add" if name == "invoke_many def" else "add_async"
    for call in tools.invoke_many([(tool, {"a": n, "b": 1}) for n in range(count)]):
        call.wait(60)
elif name == "replay imported calls":
    replays = [tools.replay(row["call_id"], history=imported) for row in imported.rows()[:count]]
    for replayed in replays:
        replayed.wait(60)
if os.environ.get("WORKBENCH_BENCH_WALL"):
    print(time.perf_counter() - started, time.process_time() - cpu_started)
tools.history.close()
'''

WORKLOADS = {
    "def wait()": 400,
    "async def wait()": 400,
    "def await": 400,
    "import a chat log": 1000,
    "compact the history": 200,
    "invoke_many def": 1000,
    "invoke_many async def": 1000,
    "replay imported calls": 400,
}


def _run(
    tree: Path, workload: str, count: int, prefix: list[str], timed: bool
) -> subprocess.CompletedProcess[str]:
    """``workload`` run once in a fresh interpreter on ``tree`` (behind ``prefix``, a tool that
    runs it; ``timed``: it prints the wall and CPU seconds of its work)."""
    with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False) as script:
        script.write(WORKLOAD)
    env = {**os.environ, "PYTHONPATH": str(tree)}
    if timed:
        env["WORKBENCH_BENCH_WALL"] = "1"
    try:
        return subprocess.run(
            [*prefix, sys.executable, script.name, workload, str(count), str(WORKLOADS[workload])],
            cwd=tree,
            env=env,
            capture_output=True,
            text=True,
            check=True,
        )
    finally:
        Path(script.name).unlink()


def instructions(tree: Path, workload: str, count: int) -> int:
    """Instructions one fresh interpreter spends running ``workload`` on ``tree``."""
    callgrind = ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null"]
    ran = _run(tree, workload, count, callgrind, timed=False)
    found = re.search(r"Collected : (\d+)", ran.stderr)
    if found is None:
        raise RuntimeError(f"callgrind reported no count for {workload!r}: {ran.stderr[-500:]}")
    return int(found[1])


def seconds(tree: Path, workload: str, count: int, cpu: bool = False) -> float:
    """Wall-clock seconds (with ``cpu``, the CPU seconds of every thread of the process) the
    work of ``workload`` takes in one fresh interpreter on ``tree`` (its set-up, imports and
    the closing of its history left out)."""
    wall, cpu_s = _run(tree, workload, count, [], timed=True).stdout.split()[-2:]
    return float(cpu_s if cpu else wall)


def compare(
    before: Path,
    after: Path,
    repeats: int = 2,
    wall: bool = False,
    cpu: bool = False,
    only: str = "",
) -> Iterator[dict[str, object]]:
    """One row per workload (those whose name holds ``only``), as each is measured: each
    tree's instructions (with ``wall``, wall-clock microseconds; with ``cpu``, CPU
    microseconds of the whole process, which load on the machine moves far less) per unit of
    work (the best and the spread of ``repeats`` runs) and the after/before ratio of the
    bests."""
    for workload, count in WORKLOADS.items():
        if only not in workload:
            continue
        per_unit: dict[str, list[float]] = {"before": [], "after": []}
        for _ in range(repeats):
            for label, tree in (("before", before), ("after", after)):  # interleaved
                if wall or cpu:
                    work = seconds(tree, workload, count, cpu=cpu) * 1e6
                else:
                    work = instructions(tree, workload, count) - instructions(tree, workload, 0)
                per_unit[label].append(work / count)
        best = {label: min(values) for label, values in per_unit.items()}
        yield {
            "workload": f"{workload} x{count}",
            "before_per_unit": best["before"],
            "after_per_unit": best["after"],
            "ratio": best["after"] / best["before"],
            "noise": max((max(values) - min(values)) / min(values) for values in per_unit.values()),
        }


def main(argv: list[str]) -> int:
    wall, cpu = "--wall" in argv, "--cpu" in argv
    only = next((arg.split("=", 1)[1] for arg in argv if arg.startswith("--only=")), "")
    argv = [arg for arg in argv if arg not in ("--wall", "--cpu") and not arg.startswith("--")]
    if len(argv) not in (2, 3):
        print(__doc__, file=sys.stderr)
        return 2
    before, after = (Path(arg).resolve() for arg in argv[:2])
    repeats = int(argv[2]) if len(argv) == 3 else 2
    unit = "cpu µs" if cpu else "µs" if wall else "instr"
    print(f"| workload | before {unit}/unit | after {unit}/unit | after/before | noise |")
    print("|---|---|---|---|---|")
    for row in compare(before, after, repeats, wall, cpu, only):
        print(
            f"| {row['workload']} | {row['before_per_unit']:,.0f} | {row['after_per_unit']:,.0f}"
            f" | {row['ratio']:.3f} | {row['noise']:.1%} |",
            flush=True,
        )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
