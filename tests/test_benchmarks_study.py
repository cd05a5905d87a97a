"""The study benchmark runs on a small size; its figures are reported, never asserted."""

from __future__ import annotations

import pytest

from benchmarks import study

pytestmark = pytest.mark.slow


def test_the_history_view_benchmark_reads_a_page_and_measures_memory():
    [row] = study.history_view((3_000,))
    assert 0 < row["rows_drawn"] <= 500 and row["rows_read"] < 4_000
    assert row["first_paint_s"] > 0 and row["peak_rss_mb"] > 0


def test_duckdb_and_pandas_count_the_same_failures():
    duck, panda = study.failures_by_kind(50_000)
    assert panda["same_answer"] is True
    assert duck["seconds"] > 0 and panda["seconds"] > 0
