"""The import-time benchmark measures a fresh interpreter and reports the goal beside it."""

from __future__ import annotations

import pytest

from benchmarks import import_time

pytestmark = pytest.mark.slow


def test_import_time_reports_the_goal_and_what_the_import_loaded():
    ours, floor = import_time.run(rounds=1)
    assert (ours["import"], floor["import"]) == ("workbench", "pydantic")
    assert ours["goal_s"] == 0.3 and ours["met"] in {"met", "MISSED"}
    assert 0 < ours["best_s"] <= ours["worst_s"]
    # What the goal depends on, checked without a clock: no heavy optional package is loaded.
    assert ours["heavy_loaded"] == "none"
