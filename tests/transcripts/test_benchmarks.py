"""The transcript benchmarks run on small sizes; their figures are reported, never asserted."""

from __future__ import annotations

import pytest

from benchmarks import transcripts

pytestmark = pytest.mark.slow


def test_every_format_imports_every_synthetic_call_and_matches_by_hand():
    rows = transcripts.run(calls=200, rounds=1)
    formats = [*transcripts.WRITERS, transcripts.EVAL_LOG, transcripts.LOG]
    assert [row["format"] for row in rows] == formats
    assert all(row["calls"] == 200 and row["import_s"] > 0 for row in rows)
    assert all(row["pandas_by_hand_s"] > 0 and row["ratio"] > 0 for row in rows)
    # beside json.load of the same file, in calls per second against the goal, with memory
    assert all(row["json_load_s"] > 0 and row["vs_json_load"] > 0 for row in rows)
    assert all(row["calls_per_s"] == 200 / row["import_s"] for row in rows)
    assert all(row["met"] in {"met", "MISSED"} for row in rows)
    assert all(row["peak_mb"] > 0 and row["json_load_peak_mb"] > 0 for row in rows)
    assert all(row["sqlite_floor_calls_per_s"] > 0 for row in rows)  # the storage floor


def test_first_load_is_timed_in_a_fresh_interpreter_and_names_what_it_loaded():
    [row] = transcripts.first_load(rounds=1)
    assert row["calls"] == 20 and row["first_load_s"] > 0 and row["goal_s"] == 0.2
    # what the goal depends on, checked without a clock: no heavy package is loaded
    assert row["heavy_loaded"] == "none"


def test_synthetic_transcripts_carry_errors_and_parallel_calls(tmp_path):
    import workbench as wb

    for format in transcripts.WRITERS:
        history = wb.transcripts.load(transcripts.write(tmp_path, format, 10))
        frame = history.to_dataframe()
        assert len(frame) == 10, format
        assert (frame["status"] == "error").sum() == 2, format
        assert frame["preflight"].iloc[0] == "coerced", format  # "limit" sent as a string


def test_first_paint_draws_a_page_not_the_whole_history():
    [row] = transcripts.first_paint(rows=1_200, rounds=1)
    assert row["rows"] == 1_200
    assert 0 < row["rows_drawn"] < 1_200


def test_the_verdicts_benchmark_runs_small():
    rows = transcripts.verdicts(calls=100, rounds=1)
    checks = {row["case"]: row["checks"] for row in rows}
    # fifty numeric limits under the plain schema; every path its own key under maxLength
    assert checks == {
        "plain schema, distinct paths": 50,
        "maxLength on path, distinct paths": 100,
        "maxLength on path, 20 repeated sets": 20,
    }
