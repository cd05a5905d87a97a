"""Preflight throughput: the resilience matrix of every built-in tool, as calls per second.

Each case is a mistake models really make (string-encoded numbers, JSON-encoded arrays, empty
fillers, wrapped arguments, unknown keys, ...), generated from the tool's schema; every case goes
through the tool's compiled preflight, accepted, coerced or refused.
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path
from typing import Any

import workbench as wb
from workbench.preflight._resilience import mistakes


def run(repeats: int = 200) -> list[dict[str, Any]]:
    """Preflight every built-in's cases ``repeats`` times; one row per tool plus a total."""
    with tempfile.TemporaryDirectory() as root:
        tools = wb.Registry(history=":memory:", artifacts=Path(root) / "artifacts")
        wb.builtins.register(tools, root=root)
        rows = []
        total_calls, total_seconds = 0, 0.0
        for tool in tools:
            cases = [case.raw for case in mistakes(tool.spec.input_schema)]
            check = tool.preflight
            for raw in cases:  # warm up: compile paths, build lazily made messages once
                check(raw)
            started = time.perf_counter()
            for _ in range(repeats):
                for raw in cases:
                    check(raw)
            seconds = time.perf_counter() - started
            calls = repeats * len(cases)
            total_calls += calls
            total_seconds += seconds
            rows.append(
                {"tool": tool.name, "cases": len(cases), "calls_per_second": calls / seconds}
            )
        rows.append(
            {
                "tool": "all built-ins",
                "cases": sum(r["cases"] for r in rows),
                "calls_per_second": total_calls / total_seconds,
            }
        )
        tools.history.close()
    return rows


if __name__ == "__main__":
    for row in run():
        print(
            f"{row['tool']:<16} {row['cases']:>4} cases {row['calls_per_second']:>12,.0f} calls/s"
        )
