"""How soon a served registry answers ``initialize``, against issue 49's goal of 1 s, idle.

Each round starts ``python -m workbench.mcp serve workbench.mcp.demo:registry`` (stdio), writes
the ``initialize`` request at once and times the reply from the moment the process was started;
``cpu_s`` is the CPU the server process spent until then (from /proc), which load on the
machine inflates far less than the wall clock. The best round is the figure. Beside it, the
floor no served registry can go under: a fresh interpreter that only imports the ``mcp`` SDK,
and the two imports a server makes before it can answer (``workbench``, then ``mcp``), timed in
the same way.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

GOAL_S = 1.0
REGISTRY = "workbench.mcp.demo:registry"
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "benchmark", "version": "0"},
    },
}
_IMPORTS = """
import json, time
{imports}
print(json.dumps({{"cpu_s": time.process_time()}}))
"""


def _env() -> dict[str, str]:
    root = str(Path(__file__).resolve().parent.parent)
    return {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(filter(None, [root, os.environ.get("PYTHONPATH")])),
    }


def _cpu_s(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def serve_once() -> dict[str, float]:
    """One served registry's start: seconds from ``Popen`` to the ``initialize`` reply, and
    the server's CPU seconds until then."""
    argv = [sys.executable, "-m", "workbench.mcp", "serve", REGISTRY]
    started = time.perf_counter()
    process = subprocess.Popen(
        argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=_env()
    )
    assert process.stdin is not None and process.stdout is not None
    try:
        process.stdin.write((json.dumps(INITIALIZE) + "\n").encode())
        process.stdin.flush()
        reply = json.loads(process.stdout.readline())
        wall = time.perf_counter() - started
        cpu = _cpu_s(process.pid)
    finally:
        process.stdin.close()
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        process.stdout.close()
    assert reply.get("id") == 1 and "result" in reply, reply
    return {"wall_s": wall, "cpu_s": cpu}


def imports_once(imports: str) -> dict[str, float]:
    """A fresh interpreter that runs ``imports``: wall seconds from ``Popen`` to its exit, and
    its CPU seconds (interpreter start included, as a server's are)."""
    started = time.perf_counter()
    out = subprocess.run(
        [sys.executable, "-c", _IMPORTS.format(imports=imports)],
        capture_output=True,
        text=True,
        check=True,
        env=_env(),
    )
    wall = time.perf_counter() - started
    return {"wall_s": wall, "cpu_s": json.loads(out.stdout)["cpu_s"]}


def _best(samples: list[dict[str, float]]) -> dict[str, float]:
    best = min(samples, key=lambda sample: sample["wall_s"])
    return {
        "best_wall_s": best["wall_s"],
        "worst_wall_s": max(sample["wall_s"] for sample in samples),
        "best_cpu_s": min(sample["cpu_s"] for sample in samples),
    }


def run(rounds: int = 5) -> list[dict[str, Any]]:
    """The served registry's start and its floors, each the best of ``rounds``, interleaved
    round by round so that load on the machine weighs on each alike."""
    served: list[dict[str, float]] = []
    sdk: list[dict[str, float]] = []
    both: list[dict[str, float]] = []
    for _ in range(rounds):
        served.append(serve_once())
        sdk.append(imports_once("import mcp"))
        both.append(imports_once("import workbench, mcp.server.lowlevel, mcp.server.stdio"))
    ours = {"measure": f"serve {REGISTRY}: initialize answered", **_best(served)}
    ours["goal_s"] = GOAL_S
    ours["met"] = "met" if ours["best_wall_s"] < GOAL_S else "MISSED"
    return [
        ours,
        {"measure": "import mcp (the SDK alone)", **_best(sdk)},
        {"measure": "import workbench and the SDK's server", **_best(both)},
    ]


COLUMNS = ["measure", "best_wall_s", "worst_wall_s", "best_cpu_s", "goal_s", "met"]

if __name__ == "__main__":
    for row in run():
        print(row)
