"""The import-time benchmark measures a fresh interpreter and reports the goal beside it."""

from __future__ import annotations

import pytest

from benchmarks import import_time

pytestmark = pytest.mark.slow


def test_import_time_reports_the_goal_and_what_the_import_loaded():
    ours, mcp, floor = import_time.run(rounds=1)
    assert [row["import"] for row in (ours, mcp, floor)] == [
        "workbench",
        "workbench.mcp",
        "pydantic",
    ]
    assert (ours["goal_s"], mcp["goal_s"]) == (0.3, 0.5)
    for row in (ours, mcp):
        assert row["met"] in {"met", "MISSED"}
        assert 0 < row["best_s"] <= row["worst_s"]
        # What the goal depends on, checked without a clock: no heavy optional package (the
        # MCP SDK among them) is loaded.
        assert row["heavy_loaded"] == "none"
