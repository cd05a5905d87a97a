"""Compaction cost per call as the history grows: 1,000, 10,000 and 100,000 synthetic calls.

A synthetic history cycles through the shapes a real one holds (listings, commands with cut
output, file reads, JSON and text results, background promotions, timeouts with output kept),
each with its own content. The budget is ``BUDGET_PER_CALL`` characters per call, tight enough
that every step runs somewhere in the history and most older calls end as one line. Each row
reports the time of one whole ``wb.compact`` (rendering every receipt included) and that time
per call: flat across sizes is the goal.

Run ``python -m benchmarks.compaction`` for the table.
"""

from __future__ import annotations

import time
from typing import Any

from workbench.envelope._envelope import ArtifactRef, Envelope
from workbench.envelope._errors import ErrorKind, ToolError
from workbench.families._compaction import Compaction, compact

BUDGET_PER_CALL = 120
ARTIFACTS = "/tmp/workbench-bench/artifacts"  # never read: compaction does not open artifacts


def _lines(prefix: str, count: int) -> str:
    return "".join(f"{prefix} {line}: some output of the command\n" for line in range(count))


def _command(index: int) -> Envelope:
    head, tail = _lines(f"[{index}] build", 60), _lines(f"[{index}] test", 60)
    preview = f"{head}[output truncated: showing first 60 and last 60 lines]\n{tail}"
    return Envelope(
        tool_name="shell_exec",
        status="success",
        summary_text="command exited with status 0",
        result={
            "kind": "command",
            "background": False,
            "exit_code": 0,
            "cwd": ".",
            "duration_ms": index % 900,
            "stdout_preview": preview,
            "stdout_bytes": 250_000 + index,
            "stderr_preview": None,
            "stderr_bytes": 0,
            "truncated": True,
            "stdout_truncated": True,
            "stderr_truncated": False,
            "stdout_artifact": 0,
        },
        artifacts=(ArtifactRef(path=f"{ARTIFACTS}/call_{index}/stdout.log"),),
        call_id=f"call_{index}",
    )


def _listing(index: int) -> Envelope:
    path = f"src/pkg_{index}"
    entries = [
        {"name": f"module_{entry}.py", "path": f"{path}/module_{entry}.py", "type": "file"}
        for entry in range(30)
    ]
    return Envelope(
        tool_name="file_read",
        status="success",
        summary_text=f"30 entries in {path}",
        result={
            "kind": "listing",
            "path": path,
            "entries": entries,
            "entry_count": 30,
            "truncated": False,
        },
        call_id=f"call_{index}",
    )


def _file(index: int) -> Envelope:
    text = "".join(f"def function_{index}_{line}(): return {line}\n" for line in range(80))
    return Envelope(
        tool_name="file_read",
        status="success",
        summary_text=f"read src/mod_{index}.py (80 lines)",
        result={
            "kind": "file",
            "path": f"src/mod_{index}.py",
            "text": text,
            "start_line": 1,
            "end_line": 80,
            "selected_lines": 80,
            "total_lines": 80,
            "bytes": len(text),
            "truncated": False,
        },
        call_id=f"call_{index}",
    )


def _json(index: int) -> Envelope:
    result = {"user_id": f"u{index}", **{f"field_{key}": key * index for key in range(25)}}
    return Envelope(tool_name="lookup", status="success", result=result, call_id=f"call_{index}")


def _text(index: int) -> Envelope:
    text = f"Search results for query {index}:\n" + _lines("match", 25)
    return Envelope(
        tool_name="search", status="success", result={"text": text}, call_id=f"call_{index}"
    )


def _background(index: int) -> Envelope:
    log = f"{ARTIFACTS}/call_{index}/shell_exec.log"
    return Envelope(
        tool_name="shell_exec",
        status="success",
        summary_text=f"command promoted to background task {10_000 + index}",
        result={
            "kind": "command",
            "background": True,
            "pid": 10_000 + index,
            "cwd": ".",
            "log_file": log,
            "log_artifact": 0,
            "running": True,
            "exit_code": None,
            "duration_ms": 500,
            "initial_output_preview": _lines(f"[{index}] server", 30),
            "initial_output_truncated": False,
        },
        artifacts=(ArtifactRef(path=log),),
        call_id=f"call_{index}",
    )


def _timeout(index: int) -> Envelope:
    error = ToolError(
        kind=ErrorKind.TIMEOUT,
        message=f"`shell_exec` printed nothing for 2 s and was stopped [{index}]",
        recovery_hint="raise `timeout`, or run it with background: true",
        retryable=True,
        details={
            "stdout_preview": _lines(f"[{index}] waiting", 90),
            "stdout_bytes": 9_000,
            "stdout_truncated": True,
            "stdout_artifact": 0,
        },
    )
    return Envelope(
        tool_name="shell_exec",
        status="error",
        error=error,
        killed_by="idle_timeout",
        artifacts=(ArtifactRef(path=f"{ARTIFACTS}/call_{index}/stdout.log"),),
        call_id=f"call_{index}",
    )


SHAPES = (_listing, _command, _file, _json, _text, _background, _timeout, _command)


def synthetic_history(size: int) -> list[Envelope]:
    """``size`` canonical records cycling through the shapes of a real history, oldest first."""
    return [SHAPES[index % len(SHAPES)](index) for index in range(size)]


def _timed(history: list[Envelope], budget: int) -> tuple[float, float, Compaction]:
    wall, cpu = time.perf_counter(), time.process_time()
    result = compact(history, budget)
    return time.perf_counter() - wall, time.process_time() - cpu, result


def run(sizes: tuple[int, ...] = (1_000, 10_000, 100_000), rounds: int = 3) -> list[dict[str, Any]]:
    """Compact a synthetic history of each size; one row per size with the totals, the steps
    applied, and the best of ``rounds`` runs (one for 100,000 calls and more) in seconds and in
    microseconds per call, both wall-clock and CPU time (CPU time is steadier on a busy
    machine)."""
    rows: list[dict[str, Any]] = []
    compact(synthetic_history(50), 50 * BUDGET_PER_CALL)  # warm up imports and validators
    for size in sizes:
        history = synthetic_history(size)
        budget = size * BUDGET_PER_CALL
        runs = [_timed(history, budget) for _ in range(rounds if size < 100_000 else 1)]
        wall = min(run[0] for run in runs)
        cpu = min(run[1] for run in runs)
        result = runs[0][2]
        rows.append(
            {
                "calls": size,
                "budget": budget,
                "before_chars": result.before_chars,
                "after_chars": result.after_chars,
                "steps": len(result.steps),
                "over_budget": result.over_budget,
                "seconds": wall,
                "us_per_call": wall / size * 1e6,
                "cpu_us_per_call": cpu / size * 1e6,
            }
        )
    return rows


if __name__ == "__main__":
    print(
        f"{'calls':>8} {'before':>12} {'after':>11} {'steps':>8} {'seconds':>8} "
        f"{'µs/call':>8} {'cpu µs/call':>11}"
    )
    for row in run():
        print(
            f"{row['calls']:>8} {row['before_chars']:>12} {row['after_chars']:>11} "
            f"{row['steps']:>8} {row['seconds']:>8.2f} {row['us_per_call']:>8.1f} "
            f"{row['cpu_us_per_call']:>11.1f}"
        )
