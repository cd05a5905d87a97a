"""The compaction benchmark runs (on a small history); its figures are measured, not asserted."""

from __future__ import annotations

from benchmarks.compaction import BUDGET_PER_CALL, run, synthetic_history
from workbench.families._compaction import compact


def test_the_benchmark_reports_each_size():
    rows = run(sizes=(200,), rounds=1)
    assert len(rows) == 1
    row = rows[0]
    assert set(row) == {
        "calls",
        "budget",
        "before_chars",
        "after_chars",
        "steps",
        "over_budget",
        "seconds",
        "us_per_call",
        "cpu_us_per_call",
    }
    assert row["calls"] == 200 and row["budget"] == 200 * BUDGET_PER_CALL
    assert row["after_chars"] < row["before_chars"] and row["over_budget"] is (
        row["after_chars"] > row["budget"]
    )
    assert row["steps"] > 0 and row["us_per_call"] > 0


def test_the_synthetic_history_needs_every_step():
    result = compact(synthetic_history(80), 80 * BUDGET_PER_CALL)
    assert {step.step for step in result.steps} == {1, 2, 3, 4}
    assert {envelope.status for envelope in result.envelopes} == {"success", "error"}
