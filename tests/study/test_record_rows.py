"""``load_many`` writes each run's Parquet rows straight from its records: the dataset holds
exactly what writing the same run from a history in memory (the way it was written before)
holds, for every format the benchmarks write, every transcript fixture and records that storing
changes (lone surrogates, NaN, integers past 64 bits or too long to print, values of another
kind than their column's, nesting at the history's limit, control characters)."""

from __future__ import annotations

import json
import warnings
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

import workbench as wb
from benchmarks import transcripts as synthetic
from workbench.history import CallRecord, History
from workbench.study._parquet import PART_FILE, write_batches, write_run
from workbench.study._record_rows import record_batches

DATA = Path(__file__).parents[1] / "data" / "transcripts"
FIXTURES = sorted(path.name for path in DATA.iterdir() if path.suffix in {".json", ".jsonl"})


def rows(directory: Path) -> list[dict[str, Any]]:
    return pq.read_table(directory / PART_FILE).to_pylist()


def through_a_history(path: Path, directory: Path) -> list[dict[str, Any]]:
    """The run written the way it was before: imported into a history in memory, read back."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        history = wb.transcripts.load(path)
    write_run(history, directory, format=history.format, source=str(path.resolve()))
    history.close()
    return rows(directory)


def straight(path: Path, out: Path) -> tuple[list[dict[str, Any]], Any]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        dataset = wb.transcripts.load_many(path, out=out)
    [part] = dataset.files()
    return rows(Path(part).parent), dataset


def synthetic_files(directory: Path) -> list[Path]:
    directory.mkdir(parents=True)
    paths = [synthetic.write(directory, format, 60) for format in synthetic.WRITERS]
    paths.append(synthetic.write_eval(directory, 60))
    log = directory / "responses-log.jsonl"
    log.write_text(synthetic.responses_log(60), encoding="utf-8")
    return [*paths, log]


def test_every_benchmark_format_gives_the_rows_a_history_gave(tmp_path):
    for path in synthetic_files(tmp_path / "runs"):
        got, dataset = straight(path, tmp_path / "new" / path.name)
        partition = Path(dataset.files()[0]).parent.name
        expected = through_a_history(path, tmp_path / "old" / path.name / partition)
        assert got == expected, path.name
        assert len(got) == 60
        old = wb.open_dataset(tmp_path / "old" / path.name)
        query = "SELECT * EXCLUDE (run) FROM calls ORDER BY seq"
        assert dataset.sql(query).equals(old.sql(query)), path.name


@pytest.mark.parametrize("name", FIXTURES)
def test_every_fixture_gives_the_rows_a_history_gave(tmp_path, name):
    path = DATA / name
    try:
        expected = through_a_history(path, tmp_path / "old")
    except wb.transcripts.TranscriptError:
        return  # not a transcript at all: test_study lists such a file with its error
    got, dataset = straight(path, tmp_path / "new")
    assert got == expected
    [run] = dataset.runs
    assert run["calls"] == len(expected) and run["error"] is None


def odd_records() -> list[CallRecord]:
    nested: Any = "leaf"
    deep = []
    for depth in range(97, 103):
        while _depth(nested) < depth:
            nested = [nested]
        deep.append(nested)
    records = [
        CallRecord(
            call_id="plain", tool="t", receipt="ok", raw_args='{"a": 1}', arguments={"a": 1}
        ),
        CallRecord(call_id="surrogate", tool="t\ud800", receipt="r\udfff", raw_args="\ud83d"),
        CallRecord(call_id="nan", tool="t", arguments={"x": float("nan")}, elapsed_ms=float("inf")),
        CallRecord(call_id="long", tool="t", raw_args={"n": 10**5000}, receipt_chars=2**62),
        CallRecord(call_id="kinds", tool="t", model_call_id=5, run_id=1.5e20, message_id=True),  # type: ignore[arg-type]
        CallRecord(call_id="reals", tool="t", started_at=5, ended_at=10**20, retryable=1),  # type: ignore[arg-type]
        CallRecord(call_id="control", tool="t", receipt="nul\x00 tab\t \x1f \x7f é ✓"),
        CallRecord(call_id="nul", tool="t\x00u", model_call_id="a\x00", raw_args="\x00"),
        CallRecord(call_id="bytes", tool="t", raw_args=b"\xff\x00", canonical={"k": {1, 2}}),  # type: ignore[arg-type]
        CallRecord(call_id="floats", tool="t", arguments={"f": [-0.0, 1e-07, 1e16, 2.5, 10**30]}),
        CallRecord(
            call_id="imported",
            tool="t",
            events=[
                {"type": "other"},
                {"type": "transcript.imported", "rule": "r", "preflight": 1},
            ],
        ),
    ]
    records += [CallRecord(call_id=f"deep{i}", tool="t", arguments=d) for i, d in enumerate(deep)]
    return records


def _depth(value: Any) -> int:
    return 1 + _depth(value[0]) if isinstance(value, list) else 0


def test_records_storing_changes_give_the_rows_a_history_gave_seq_and_all(tmp_path):
    history = History(None)
    history.write(odd_records())
    write_run(history, tmp_path / "old", format="f", source="s")
    history.close()
    written = write_batches(record_batches(odd_records()), tmp_path / "new", format="f", source="s")
    assert written == len(odd_records())
    new, old = rows(tmp_path / "new"), rows(tmp_path / "old")
    # Every odd value is stored in a form its column keeps (an integer past 64 bits in the
    # "reals" row as a real), so every row is in SQLite: both paths give every row, seq and all.
    assert [row["seq"] for row in old] == list(range(1, len(old) + 1))
    assert new == old
    by_id = {row["call_id"]: row for row in new}
    assert "surrogates" in by_id["surrogate"]["warnings"]  # storing named what it changed
    assert json.loads(by_id["floats"]["arguments"]) == {"f": [-0.0, 1e-07, 1e16, 2.5, 10**30]}
