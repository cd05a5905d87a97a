"""Many runs into one Parquet dataset (``wb.transcripts.load_many``), queried with DuckDB
(``wb.open_dataset``, ``history.sql``), and spread over a real Dask cluster."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pandas as pd
import pytest

import workbench as wb
from benchmarks.transcripts import WRITERS
from workbench.study import MissingExtra, QueryError

RUNS = [("openai_chat", 30), ("anthropic", 20), ("mcp_jsonl", 24), ("openai_responses", 16)]


def write_runs(directory: Path) -> list[Path]:
    """One synthetic run per format, in each format's real shape."""
    directory.mkdir(parents=True, exist_ok=True)
    paths = []
    for number, (format, calls) in enumerate(RUNS):
        data = WRITERS[format](calls)
        path = directory / f"run{number}-{format}.{'jsonl' if format == 'mcp_jsonl' else 'json'}"
        text = data if isinstance(data, str) else json.dumps(data, ensure_ascii=False)
        path.write_text(text, encoding="utf-8")
        paths.append(path)
    return paths


def by_pandas(paths: list[Path]) -> pd.DataFrame:
    """The same runs loaded one by one into one DataFrame: what the dataset must agree with."""
    frames = [wb.transcripts.load(path).to_dataframe().assign(source=str(path)) for path in paths]
    return pd.concat(frames, ignore_index=True)


@pytest.fixture
def runs(tmp_path) -> list[Path]:
    return write_runs(tmp_path / "runs")


def failures_by_kind(frame: pd.DataFrame) -> dict[str, int]:
    counts = frame[frame["status"] == "error"].groupby("kind").size()
    return {str(kind): int(count) for kind, count in counts.items()}


def test_load_many_writes_one_partition_per_run(runs, tmp_path):
    out = tmp_path / "study"
    dataset = wb.transcripts.load_many(str(tmp_path / "runs" / "*.json*"), out=out)

    assert sorted(path.parent.name.rsplit("-", 1)[0] for path in dataset.files()) == [
        f"run={path.name}" for path in sorted(runs)
    ]
    expected = by_pandas(runs)
    assert len(dataset) == len(expected) == sum(calls for _, calls in RUNS)
    assert [run["calls"] for run in dataset.runs] == [calls for _, calls in RUNS]
    assert {run["format"] for run in dataset.runs} == {format for format, _ in RUNS}

    query = "SELECT kind, count(*) AS n FROM calls WHERE status = 'error' GROUP BY kind"
    answer = dataset.sql(query)
    assert dict(zip(answer["kind"], answer["n"], strict=True)) == failures_by_kind(expected)
    per_run = dataset.sql("SELECT run, count(*) AS n FROM calls GROUP BY run ORDER BY run")
    assert sorted(per_run["n"]) == sorted(calls for _, calls in RUNS)

    frame = dataset.to_dataframe(["call_id", "tool", "receipt", "rule"])
    merged = frame.merge(expected, on="call_id", suffixes=("", "_one_by_one"))
    assert len(merged) == len(expected)
    assert (merged["receipt"] == merged["receipt_one_by_one"]).all()
    assert (merged["rule"] == merged["rule_one_by_one"]).all()


def test_importing_again_replaces_a_run_and_a_bad_file_is_listed(runs, tmp_path):
    out = tmp_path / "study"
    wb.transcripts.load_many(runs[:2], out=out)
    bad = tmp_path / "runs" / "broken.json"
    bad.write_text("{ not json", encoding="utf-8")
    dataset = wb.transcripts.load_many([runs[0], bad], out=out)

    assert len(dataset.files()) == 2
    assert len(dataset) == RUNS[0][1] + RUNS[1][1]
    broken = [run for run in dataset.runs if run["source"].endswith("broken.json")]
    assert broken and broken[0]["error"] and broken[0]["calls"] == 0
    with pytest.raises(FileNotFoundError, match="no transcript files match"):
        wb.transcripts.load_many(str(tmp_path / "nothing-*.json"), out=out)
    with pytest.raises(ValueError, match="none of the 1 file"):
        wb.transcripts.load_many([bad], out=tmp_path / "other")


def test_a_bad_query_and_a_missing_dataset_say_what_is_wrong(runs, tmp_path):
    dataset = wb.transcripts.load_many(runs[:1], out=tmp_path / "study")
    with pytest.raises(QueryError, match="columns: seq, call_id, tool"):
        dataset.sql("SELECT no_such_column FROM calls")
    with pytest.raises(FileNotFoundError, match="not a directory"):
        wb.open_dataset(tmp_path / "missing")
    (tmp_path / "empty").mkdir()
    with pytest.raises(FileNotFoundError, match="load_many"):
        wb.open_dataset(tmp_path / "empty")


def test_history_sql_queries_the_sqlite_file_with_duckdb(tmp_path):
    registry = wb.Registry(history=tmp_path / "history.sqlite", artifacts=tmp_path / "artifacts")

    @registry.tool
    def halve(n: int) -> float:
        """Half of an even number."""
        if n % 2:
            raise ValueError(f"{n} is odd")
        return n / 2

    for n in [*range(9), "x"]:
        registry.invoke("halve", {"n": n}).wait(10)
    registry.history.flush()
    expected = failures_by_kind(registry.history.to_dataframe())
    answer = registry.history.sql(
        "SELECT kind, count(*) AS n FROM calls WHERE status = 'error' GROUP BY kind"
    )
    assert dict(zip(answer["kind"], answer["n"], strict=True)) == expected
    assert expected == {"execution_error": 4, "invalid_args": 1}
    receipts = registry.history.sql(
        "SELECT record->>'$.receipt' AS receipt FROM calls WHERE status = 'success' ORDER BY seq"
    )
    assert receipts["receipt"].tolist()[:3] == ["0.0", "1.0", "2.0"]
    with pytest.raises(QueryError, match="queued_ms"):
        registry.history.sql("SELECT nope FROM calls")


def test_history_sql_reads_an_imported_run_in_memory():
    history = wb.transcripts.load(
        Path(__file__).parents[1] / "data" / "transcripts" / "openai_chat.json"
    )
    answer = history.sql("SELECT tool, count(*) AS n FROM calls GROUP BY tool ORDER BY tool")
    frame = history.to_dataframe().groupby("tool").size()
    assert answer.set_index("tool")["n"].to_dict() == frame.to_dict()


def test_a_missing_package_names_the_extra(monkeypatch, runs, tmp_path):
    wb.transcripts.load_many(runs[:1], out=tmp_path / "study")
    monkeypatch.setitem(sys.modules, "duckdb", None)
    with pytest.raises(MissingExtra, match=r"workbench\[study\]"):
        wb.open_dataset(tmp_path / "study").sql("SELECT 1")
    monkeypatch.setitem(sys.modules, "pyarrow", None)
    with pytest.raises(MissingExtra, match=r"'pyarrow'.*workbench\[study\]"):
        wb.transcripts.load_many(runs[:1], out=tmp_path / "other")


@pytest.mark.slow
def test_a_dask_cluster_spreads_the_imports_over_its_worker_processes(runs, tmp_path):
    from dask.distributed import Client, LocalCluster, get_task_stream

    with (
        LocalCluster(
            n_workers=2,
            threads_per_worker=1,
            processes=True,
            dashboard_address=None,
            host="127.0.0.1",
            memory_limit="400MB",
        ) as cluster,
        Client(cluster) as client,
    ):
        workers = set(cluster.scheduler_info["workers"])
        worker_pids = set(client.run(lambda: __import__("os").getpid()).values())
        with get_task_stream(client) as stream:
            dataset = wb.transcripts.load_many(runs, out=tmp_path / "study", client=client)
        tasks = [task for task in stream.data if "import_run" in str(task["key"])]
        assert stream.data, "the task stream recorded no task"

    import os

    assert len(worker_pids) == 2 and os.getpid() not in worker_pids
    assert len(tasks) == len(runs)
    assert {task["worker"] for task in tasks} <= workers
    local = wb.transcripts.load_many(runs, out=tmp_path / "here")
    assert len(dataset) == len(local) == sum(calls for _, calls in RUNS)
    query = "SELECT run, kind, count(*) AS n FROM calls GROUP BY ALL ORDER BY ALL"
    assert dataset.sql(query).equals(local.sql(query))


def test_the_history_view_pages_a_parquet_dataset(runs, tmp_path):
    from workbench.widgets.history import HistoryView

    dataset = wb.transcripts.load_many(runs, out=tmp_path / "study")
    everything = dataset.sql("SELECT call_id FROM calls ORDER BY run, seq")["call_id"].tolist()
    view = HistoryView(dataset, max_rows=25)
    assert view.table.note == "the newest 25 calls drawn; Older for more"
    seen = [row["call_id"] for row in view.table.rows]
    while not view.older_button.disabled:
        view.older()
        seen = [row["call_id"] for row in view.table.rows] + seen
    assert seen == everything
    assert view.source.rows_read <= len(everything) + 4 * 26

    view.kind_filter.value = "not_found"
    shown = [row["call_id"] for row in view.table.rows]
    expected = dataset.sql("SELECT call_id FROM calls WHERE kind = 'not_found' ORDER BY run, seq")
    assert shown == expected["call_id"].tolist()[-25:]
    view.select(shown[-1])
    assert view.inspector.envelope is not None
    assert view.inspector.envelope.error.kind.value == "not_found"
    assert view.inspector.receipt == dataset.get(shown[-1])["receipt"]


def test_a_row_sqlite_cannot_parse_is_still_written(tmp_path):
    import sqlite3

    import pyarrow.parquet as pq

    from workbench.history import CallRecord
    from workbench.study._parquet import write_run

    history = wb.History(tmp_path / "history.sqlite")
    for index in range(3):
        history.append(
            CallRecord(
                call_id=f"c{index}",
                tool="t",
                status="success",
                receipt=f"Grüße {index}",
                raw_args='{"a": 1',
                arguments={"a": index},
            )
        )
    history.flush()
    write_run(history, tmp_path / "whole", source="here")
    whole = pq.read_table(tmp_path / "whole" / "part-0.parquet").to_pylist()
    assert [row["receipt"] for row in whole] == ["Grüße 0", "Grüße 1", "Grüße 2"]
    assert json.loads(whole[0]["raw_args"]) == '{"a": 1'  # a string stays a string
    assert json.loads(whole[2]["arguments"]) == {"a": 2}

    with sqlite3.connect(tmp_path / "history.sqlite") as conn:
        conn.execute("UPDATE calls SET record = '{not json' WHERE call_id = 'c1'")
    write_run(history, tmp_path / "damaged", source="here")
    damaged = pq.read_table(tmp_path / "damaged" / "part-0.parquet").to_pylist()
    assert [row["call_id"] for row in damaged] == ["c0", "c1", "c2"]
    assert damaged[0] == whole[0] and damaged[2] == whole[2]
    assert damaged[1]["receipt"] is None and "not JSON" in damaged[1]["warnings"]
    history.close()


def test_an_empty_query_is_refused_before_any_row_is_read(tmp_path):
    history = wb.History(tmp_path / "history.sqlite")
    with pytest.raises(QueryError, match="give an SQL query"):
        history.sql("  ")
    with pytest.raises(TypeError, match=r"dask\.distributed\.Client"):
        wb.transcripts.load_many(
            Path(__file__).parents[1] / "data" / "transcripts" / "anthropic.json",
            out=tmp_path / "study",
            client=object(),
        )


def test_the_study_packages_are_imported_only_when_used():
    import subprocess

    code = (
        "import sys, workbench as wb, workbench.transcripts, workbench.widgets.history\n"
        "print(sorted(name for name in ('duckdb', 'pyarrow', 'dask', 'distributed')"
        " if name in sys.modules))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"


def test_history_sql_copies_only_the_columns_a_query_names(tmp_path):
    from workbench.history._sql import COLUMNS, columns_named

    assert columns_named("SELECT kind, count(*) FROM calls WHERE status = 'error'") == [
        "status",
        "kind",
    ]
    assert columns_named("SELECT count(*) FROM calls") == ["seq"]
    assert columns_named("SELECT * FROM calls") == list(COLUMNS[:-1])  # record only if named
    assert "record" in columns_named("SELECT *, record->>'$.receipt' FROM calls")

    history = wb.transcripts.load(
        Path(__file__).parents[1] / "data" / "transcripts" / "openai_chat.json"
    )
    frame = history.to_dataframe()
    whole = history.sql("SELECT * FROM calls ORDER BY seq")
    assert list(whole.columns) == list(COLUMNS[:-1])
    assert whole["call_id"].tolist() == frame["call_id"].tolist()
    assert history.sql("SELECT count(*) AS n FROM calls")["n"].tolist() == [len(frame)]
    doubled = history.sql("SELECT sum(receipt_chars * 2) AS twice FROM calls")["twice"]
    assert doubled.tolist() == [2 * frame["receipt_chars"].sum()]


def test_a_partly_unreadable_run_keeps_its_warning_and_the_output_is_not_read_back(tmp_path):
    runs = tmp_path / "runs"
    runs.mkdir()
    source = Path(__file__).parents[1] / "data" / "transcripts" / "mcp.jsonl"
    (runs / "mcp.jsonl").write_text(source.read_text(encoding="utf-8"), encoding="utf-8")
    dataset = wb.transcripts.load_many(str(tmp_path / "**" / "*"), out=runs / "study")
    [run] = dataset.runs
    assert run["unreadable"] > 0 and "could not be read" in run["warnings"][0]
    again = wb.transcripts.load_many(str(tmp_path / "**" / "*"), out=runs / "study")
    assert [item["source"] for item in again.runs] == [str(runs / "mcp.jsonl")]
