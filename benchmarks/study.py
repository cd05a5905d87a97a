"""A study at scale: many runs imported, a history of a million calls in the view, and a query
over ten million calls.

- **Import**: synthetic runs of every format through ``wb.transcripts.load_many`` into one
  Parquet dataset, in calls per second, beside ``wb.transcripts.load`` of each file alone (the
  same rows built, written to a SQLite history in memory instead of straight to Parquet) and
  ``json.load`` of the same files (which reads and does nothing else).
- **The history view**: a history file of ``rows`` calls; the seconds until the view has its
  first rows (built and displayed; then the best of three more views, warm), per Older page
  (the median and the slowest of five), and the peak memory of a fresh Jupyter kernel that
  does it: the kernel's own figure; beside it, failures by kind with ``history.sql`` over
  the same file (time and peak memory).
- **Failures by kind**: ``rows`` calls written as Parquet (partitioned by run, in chunks so
  writing stays bounded), then failures counted by kind with DuckDB (``wb.open_dataset``) and
  with pandas (``read_parquet`` of the two columns it needs, then ``groupby``), each in a fresh
  process with its peak memory.

Run ``python -m benchmarks.study`` for the tables.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path
from typing import Any

from benchmarks.transcripts import WRITERS
from workbench.history import CallRecord, History
from workbench.history.row import encode
from workbench.history.store import INSERT as _INSERT

KINDS = ("not_found", "timeout", "invalid_args", "execution_error", "rejected")
TOOLS = ("read_file", "shell_exec", "search", "write_file")


def _in_fresh_process(code: str) -> dict[str, Any]:
    """Run ``code`` (which prints one JSON object) in a new interpreter; add its peak RSS
    (``VmHWM``: unlike ``ru_maxrss``, it is not carried over from the parent across exec)."""
    wrapped = code + textwrap.dedent(
        """
        _peak = [line for line in open("/proc/self/status") if line.startswith("VmHWM")]
        print(json.dumps({**RESULT, "peak_rss_mb": int(_peak[0].split()[1]) / 1024}))
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", wrapped], capture_output=True, text=True, check=False, timeout=900
    )
    if done.returncode:
        raise RuntimeError(f"the measuring process failed:\n{done.stderr[-3000:]}")
    return dict(json.loads(done.stdout.strip().splitlines()[-1]))


def _in_kernel(code: str) -> dict[str, Any]:
    """Run ``code`` (which sets ``RESULT``) in a real Jupyter kernel; add the kernel's peak
    RSS (``VmHWM``), the figure a person sees grow while the notebook works."""
    from jupyter_client.manager import start_new_kernel

    printed: list[str] = []

    def keep(message: dict[str, Any]) -> None:
        if message["msg_type"] == "stream":
            printed.append(message["content"]["text"])
        elif message["msg_type"] == "error":
            printed.append("\n".join(message["content"]["traceback"]))

    report = textwrap.dedent(
        """
        _peak = [line for line in open("/proc/self/status") if line.startswith("VmHWM")]
        print(json.dumps({**RESULT, "peak_rss_mb": int(_peak[0].split()[1]) / 1024}))
        """
    )
    manager, client = start_new_kernel(kernel_name="python3")
    try:
        client.execute_interactive(code + report, timeout=900, output_hook=keep)
    finally:
        client.stop_channels()
        manager.shutdown_kernel(now=True)
    text = "".join(printed).strip()
    try:
        return dict(json.loads(text.splitlines()[-1]))
    except (ValueError, IndexError):
        raise RuntimeError(f"the kernel did not report its figures:\n{text[-3000:]}") from None


def import_rate(calls_per_run: int = 25_000, runs_per_format: int = 1) -> list[dict[str, Any]]:
    """Calls per second through ``load_many`` beside ``json.load`` of the same files."""
    with tempfile.TemporaryDirectory() as scratch:
        directory = Path(scratch) / "runs"
        directory.mkdir()
        paths = []
        for format, writer in WRITERS.items():
            for number in range(runs_per_format):
                data = writer(calls_per_run)
                suffix = "jsonl" if format == "mcp_jsonl" else "json"
                path = directory / f"{format}-{number}.{suffix}"
                text = data if isinstance(data, str) else json.dumps(data, ensure_ascii=False)
                path.write_text(text, encoding="utf-8")
                paths.append(path)
        import workbench as wb

        started = time.perf_counter()
        for path in paths:
            wb.transcripts.load(path).close()
        loading = time.perf_counter() - started
        started = time.perf_counter()
        dataset = wb.transcripts.load_many(directory, out=Path(scratch) / "study")
        ours = time.perf_counter() - started
        calls = len(dataset)
        started = time.perf_counter()
        for path in paths:
            text = path.read_text(encoding="utf-8")
            if path.suffix == ".jsonl":
                [json.loads(line) for line in text.splitlines() if line.strip()]
            else:
                json.loads(text)
        floor = time.perf_counter() - started
    return [
        {
            "measure": "wb.transcripts.load alone, file by file",
            "files": len(paths),
            "calls": calls,
            "seconds": loading,
            "calls_per_second": calls / loading,
        },
        {
            "measure": "load_many into Parquet",
            "files": len(paths),
            "calls": calls,
            "seconds": ours,
            "calls_per_second": calls / ours,
        },
        {
            "measure": "json.load of the same files",
            "files": len(paths),
            "calls": calls,
            "seconds": floor,
            "calls_per_second": calls / floor,
        },
    ]


def write_history(path: Path, rows: int) -> None:
    """A history file of ``rows`` calls, written in bulk (one encoded row, varied)."""
    history = History(path)
    template = encode(
        CallRecord(
            call_id="x",
            tool="read_file",
            state="imported",
            status="success",
            summary_text="Zeile 1 von datei: Grüße ✓",
            receipt="Zeile 1 von datei: Grüße ✓\nZeile 2: ok",
            receipt_chars=40,
        )
    )
    from workbench.history import SCALARS

    at = {name: SCALARS.index(name) for name in ("call_id", "tool", "status", "kind")}
    conn = history._database.connection()
    chunk = 100_000
    for start in range(0, rows, chunk):
        values = []
        for index in range(start, min(rows, start + chunk)):
            row = list(template)
            row[at["call_id"]] = f"run:{index}"
            row[at["tool"]] = TOOLS[index % len(TOOLS)]
            if index % 5 == 4:
                row[at["status"]] = "error"
                row[at["kind"]] = KINDS[(index // 5) % len(KINDS)]
            values.append(row)
        with conn:
            conn.executemany(_INSERT, values)
    history.close()


_VIEW = """
import json, time
from workbench.history import History
from workbench.widgets.history import HistoryView
history = History({path!r})
started = time.perf_counter()
view = HistoryView(history, max_rows=500)
display(view)
first = time.perf_counter() - started
again = []
for _ in range(3):
    started = time.perf_counter()
    HistoryView(history, max_rows=500)
    again.append(time.perf_counter() - started)
pages = []
for _ in range(5):
    started = time.perf_counter()
    view.older()
    pages.append(time.perf_counter() - started)
started = time.perf_counter()
view.kind_filter.value = "timeout"
filtered = time.perf_counter() - started
pages.sort()
RESULT = {{"first_paint_s": first, "warm_paint_s": min(again),
          "page_s": pages[len(pages) // 2], "slowest_page_s": pages[-1], "filter_s": filtered,
          "rows_drawn": len(view.table.rows), "rows_read": view.source.rows_read}}
"""


_HISTORY_SQL = """
import json, time
from workbench.history import History
started = time.perf_counter()
answer = History({path!r}).sql(
    "SELECT kind, count(*) AS n FROM calls WHERE status = 'error' GROUP BY kind")
RESULT = {{"history_sql_s": time.perf_counter() - started}}
"""


def history_view(sizes: tuple[int, ...] = (100_000, 1_000_000)) -> list[dict[str, Any]]:
    """First paint, paging and peak memory of the history view, each size in a fresh kernel
    (the view displayed, as in a notebook)."""
    found = []
    with tempfile.TemporaryDirectory() as scratch:
        for rows in sizes:
            path = Path(scratch) / f"history-{rows}.sqlite"
            started = time.perf_counter()
            write_history(path, rows)
            written = time.perf_counter() - started
            result = _in_kernel(_VIEW.format(path=str(path)))
            query = _in_fresh_process(_HISTORY_SQL.format(path=str(path)))
            found.append(
                {
                    "rows": rows,
                    "write_s": written,
                    **result,
                    "goal_paint_0.3s": result["first_paint_s"] <= 0.3,
                    "goal_page_0.1s": result["page_s"] <= 0.1,
                    "goal_300mb": result["peak_rss_mb"] <= 300,
                    "history_sql_s": query["history_sql_s"],
                    "history_sql_rss_mb": query["peak_rss_mb"],
                }
            )
    return found


def write_calls_parquet(directory: Path, rows: int, runs: int = 10) -> None:
    """``rows`` calls as a Parquet dataset of ``runs`` partitions, written run by run."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq

    generator = np.random.default_rng(23)
    per_run = rows // runs
    for run in range(runs):
        count = per_run + (rows - per_run * runs if run == runs - 1 else 0)
        failed = generator.random(count) < 0.2
        kinds = np.array(KINDS, dtype=object)[generator.integers(0, len(KINDS), count)]
        table = pa.table(
            {
                "call_id": pa.array([f"r{run}:{index}" for index in range(count)]),
                "tool": pa.array(
                    np.array(TOOLS, dtype=object)[generator.integers(0, len(TOOLS), count)]
                ),
                "status": pa.array(np.where(failed, "error", "success").astype(object)),
                "kind": pa.array(np.where(failed, kinds, None)),
                "receipt_chars": pa.array(generator.integers(10, 5_000, count)),
            }
        )
        target = directory / f"run=r{run:02d}"
        target.mkdir(parents=True)
        pq.write_table(table, target / "part-0.parquet", compression="zstd")


_DUCKDB = """
import json, time
import workbench as wb
started = time.perf_counter()
answer = wb.open_dataset({path!r}).sql(
    "SELECT kind, count(*) AS n FROM calls WHERE status = 'error' GROUP BY kind ORDER BY kind")
RESULT = {{"seconds": time.perf_counter() - started,
          "answer": dict(zip(answer["kind"], map(int, answer["n"])))}}
"""

_PANDAS = """
import json, time
import pandas as pd
started = time.perf_counter()
frame = pd.read_parquet({path!r}, columns=["status", "kind"])
counts = frame[frame["status"] == "error"].groupby("kind").size().sort_index()
RESULT = {{"seconds": time.perf_counter() - started,
          "answer": {{str(k): int(v) for k, v in counts.items()}}}}
"""


def failures_by_kind(rows: int = 10_000_000) -> list[dict[str, Any]]:
    """Failures by kind over ``rows`` calls of Parquet: DuckDB beside pandas."""
    with tempfile.TemporaryDirectory() as scratch:
        path = Path(scratch) / "calls"
        started = time.perf_counter()
        write_calls_parquet(path, rows)
        written = time.perf_counter() - started
        duck = _in_fresh_process(_DUCKDB.format(path=str(path)))
        panda = _in_fresh_process(_PANDAS.format(path=str(path)))
    same = duck.pop("answer") == panda.pop("answer")
    return [
        {"engine": "DuckDB (wb.open_dataset)", "rows": rows, "write_s": written, **duck},
        {"engine": "pandas read_parquet + groupby", "rows": rows, "same_answer": same, **panda},
    ]


IMPORT_COLUMNS = ["measure", "files", "calls", "seconds", "calls_per_second"]
VIEW_COLUMNS = [
    "rows",
    "write_s",
    "first_paint_s",
    "warm_paint_s",
    "page_s",
    "slowest_page_s",
    "filter_s",
    "rows_drawn",
    "rows_read",
    "peak_rss_mb",
    "goal_paint_0.3s",
    "goal_page_0.1s",
    "goal_300mb",
    "history_sql_s",
    "history_sql_rss_mb",
]
QUERY_COLUMNS = ["engine", "rows", "write_s", "seconds", "peak_rss_mb", "same_answer"]


def main() -> None:
    from benchmarks.__main__ import table

    print(table(import_rate(), IMPORT_COLUMNS))
    print(table(history_view(), VIEW_COLUMNS))
    print(table(failures_by_kind(), QUERY_COLUMNS))


if __name__ == "__main__":
    main()
