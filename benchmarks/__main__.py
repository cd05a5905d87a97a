"""``make bench``: every benchmark in one run, printed and written to benchmarks/results.md.

Figures are ratios against the alternatives measured in the same run, never wall-clock limits;
where a goal of issue 10 is missed the table says so, and the notes say why.
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from benchmarks import (
    call_overhead,
    compaction,
    first_cells,
    history_disk,
    import_time,
    inspect_reader,
    listing,
    mcp_start,
    preflight,
    profile_call,
    runtime_paths,
    streaming,
    study,
    transcripts,
)

RESULTS = Path(__file__).with_name("results.md")


def machine() -> str:
    """One line naming the machine the figures came from."""
    model = "unknown CPU"
    cpuinfo = Path("/proc/cpuinfo")
    if cpuinfo.exists():
        for line in cpuinfo.read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    load = ", ".join(f"{value:.2f}" for value in os.getloadavg())
    return (
        f"{model}, {os.cpu_count()} cores, {platform.system()} {platform.machine()}, "
        f"Python {platform.python_version()}; load average at start {load}"
    )


def table(rows: list[dict[str, Any]], columns: list[str]) -> str:
    """A markdown table of ``rows`` with numbers rounded for reading."""

    def cell(value: Any) -> str:
        if value is None:
            return "n/a"
        if isinstance(value, bool):
            return "yes" if value else "no"
        if isinstance(value, float):
            return f"{value:,.2f}" if abs(value) < 1000 else f"{value:,.0f}"
        if isinstance(value, int):
            return f"{value:,}"
        return str(value)

    lines = ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    lines += ["| " + " | ".join(cell(row.get(name)) for name in columns) + " |" for row in rows]
    return "\n".join(lines)


JSON_VERDICT_COLUMNS = ["format", "import_s", "json_load_s", "times_json_load", "goal", "met"]


def json_verdicts(imports: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Issue 39's import goal for each format's row: at most 2x the time ``json.load`` takes
    to parse the same file."""
    goal = inspect_reader.JSON_LOADS_GOAL
    found = []
    for row in imports:
        times = row["import_s"] / row["json_load_s"]
        found.append(
            {
                "format": row["format"],
                "import_s": row["import_s"],
                "json_load_s": row["json_load_s"],
                "times_json_load": times,
                "goal": f"≤ {goal:g}x",
                "met": "met" if times <= goal else "MISSED",
            }
        )
    return found


def _section(title: str, intro: str, body: str) -> str:
    return f"## {title}\n\n{intro}\n\n{body}\n"


def run_all(small: bool = False, only: set[int] | None = None) -> str:
    """Run every benchmark (``small``: tiny sizes, for the test suite; ``only``: just the
    sections of these numbers) and return the report."""
    started = datetime.datetime.now(datetime.UTC)
    header = (
        "# Benchmarks\n\n"
        f"Run {started:%Y-%m-%d %H:%M} UTC on {machine()}.\n"
        "Every figure below comes from this one run; compare rows, not machines.\n"
    )
    if only:
        numbers = ", ".join(str(number) for number in sorted(only))
        header = header.replace("Run ", f"Sections {numbers} run ", 1).replace(
            "Every figure below comes from this one run",
            "Every figure of a section comes from one run, named at its head",
        )
    sections = [header]
    steps: list[tuple[str, Callable[[], str]]] = []

    def overhead() -> str:
        rows = call_overhead.run(n=200 if small else 5_000, rounds=2 if small else 5)
        verdicts = call_overhead.goals(rows)
        for verdict in verdicts:
            verdict["met"] = "met" if verdict["met"] else "MISSED"
        scale = 10 if small else 1
        investigation = (
            "\n\n### Where the time goes\n\nWhat asyncio's own primitives cost on this "
            "machine (any call that returns at once and can be awaited needs some of them):\n\n"
            + table(profile_call.floors(n=20_000 // scale), ["primitive", "us_per_use"])
            + "\n\nWall and CPU time per awaited call, with the SQLite history and without it "
            "(the history is built on the ending thread and written by a batching thread):\n\n"
            + table(
                profile_call.cpu_per_call(n=5_000 // scale),
                ["tool", "history", "wall_us", "cpu_us"],
            )
            + "\n\nThe functions with the most own time per async call under cProfile (its "
            "overhead inflates small functions: read the shares):\n\n"
            + table(
                profile_call.hot_functions(n=3_000 // scale), ["function", "us_per_call", "share"]
            )
        )
        return _section(
            "1. Call overhead",
            "A trivial three-argument tool called with a string-encoded integer, end to end to "
            "an envelope and its receipt (preflight, execution, projection, rendering, history "
            "in `:memory:`), against what people would use instead. Best of several rounds.",
            table(rows, ["contender", "us_per_call"])
            + "\n\n"
            + table(verdicts, ["ours", "theirs", "ratio", "goal", "met"])
            + investigation,
        )

    def stream() -> str:
        rows = streaming.run(size=2_000_000, memory_size=4_000_000) if small else streaming.run()
        ratio = rows[2]["ratio"]
        growth = rows[3]["peak_memory_growth_mb"]
        verdict = (
            f"Ratio {ratio:.2f} (goal ≥ 0.7: {'met' if ratio >= 0.7 else 'MISSED'}); peak memory "
            f"growth {growth:.1f} MB for {rows[3]['bytes'] / 1e9:.1f} GB "
            f"(goal < 64 MB for 1 GB: {'met' if growth < 64 else 'MISSED'})."
        )
        return _section(
            "2. Streaming",
            "The same command read from a raw asyncio pipe and through `shell_exec` with a live "
            "card attached (widget state updated headless).",
            table(
                rows,
                [
                    "measure",
                    "bytes",
                    "mb_per_s",
                    "ratio",
                    "widget_updates",
                    "seconds",
                    "peak_memory_growth_mb",
                ],
            )
            + "\n\n"
            + verdict,
        )

    def compact() -> str:
        sizes = (200, 2_000) if small else (1_000, 10_000, 100_000)
        rows = compaction.run(sizes=sizes, rounds=1 if small else 3)
        return _section(
            "3. Compaction",
            "Synthetic histories compacted to a budget that needs all four steps; the goal is "
            "a flat cost per call as the history grows.",
            table(
                rows,
                ["calls", "before_chars", "after_chars", "steps", "us_per_call", "cpu_us_per_call"],
            ),
        )

    def listing_100k() -> str:
        rows = listing.run(count=2_000 if small else 100_000)
        return _section(
            "4. A listing of 100,000 entries",
            "Projection, receipt and card (tree) build time, for `file_read`'s cut listing and "
            "for a listing kept whole.",
            table(
                rows,
                [
                    "shape",
                    "entries",
                    "entries_kept",
                    "receipt_chars",
                    "project_ms",
                    "receipt_ms",
                    "card_ms",
                ],
            ),
        )

    def checks() -> str:
        rows = preflight.run(repeats=5 if small else 200)
        return _section(
            "5. Preflight of the resilience matrix",
            "Every built-in tool's resilience cases (the mistakes models make) through its "
            "compiled preflight.",
            table(rows, ["tool", "cases", "calls_per_second"]),
        )

    def history_on_disk() -> str:
        rows = history_disk.run(n=200 if small else 2_000, rounds=1 if small else 3)
        return _section(
            "6. Per-call overhead with the history on disk, before and after",
            "The same calls with the history in a real SQLite file: *before* is the previous "
            "write path (queued for a batching thread, the call ends before its row is "
            "written), *after* is today's (the call ends once its row is committed), beside no "
            "history at all. Microseconds per call, best of several rounds. "
            "`benchmarks/README.md` explains the growth.",
            table(rows, ["history", "tool", "calls", "wall_us", "cpu_us"]),
        )

    def first_import() -> str:
        rows = import_time.run(rounds=2 if small else 5)
        cells = first_cells.run(["01-author-a-tool"] if small else None)
        return _section(
            "7. Import time and first cards",
            "`import workbench` in a fresh interpreter (the first cell of every notebook), best "
            f"of several rounds, against the goal of {import_time.GOAL_S} s, and `import "
            f"workbench.mcp` against {import_time.MCP_GOAL_S} s (the MCP SDK is loaded on the "
            "first use of a name that needs it); `import pydantic` beside them as the floor. "
            "Heavy optional packages are imported where they are used.",
            table(rows, ["import", "best_s", "worst_s", "goal_s", "met", "modules", "heavy_loaded"])
            + "\n\nEach notebook run in a fresh kernel until a cell shows a workbench view: "
            f"that cell's time (`first_card_s`, against the goal of {first_cells.GOAL_S} s) and "
            "the cells before it together (`before_s`, the imports included).\n\n"
            + table(cells, ["notebook", "cell", "before_s", "first_card_s", "goal_s", "met"]),
        )

    def person_paths() -> str:
        steps = profile_call.stages(n=200 if small else 3_000)
        report = runtime_paths.run(
            n=100 if small else 2_000,
            rounds=1 if small else 3,
            many=500 if small else 10_000,
            replays=500 if small else runtime_paths.REPLAY_GOAL_CALLS,
            steps_us=profile_call.own_steps_us(steps),
        )
        return _section(
            "8. The runtime's person-facing paths (history on disk)",
            "A trivial tool through `tools.invoke(...).wait()` from a script and `await "
            "tools.invoke(...)` from a running loop, for a `def` and an `async def` tool, with "
            "the history in a SQLite file and every row committed before the call is seen to "
            "end; beside LangChain's `StructuredTool.invoke`, timed between the rounds of each "
            "path (`langchain_us`) so that other work on the machine weighs on both alike, and "
            f"the `mcp` SDK's in-memory `call_tool` ({report['mcp_us']:.0f} µs) in this run; "
            "`cpu_us` is the CPU time of every thread of the process per call; "
            "`switches_per_call` the voluntary context switches of every thread per call, "
            "each one a thread that waited for another (a hop; one costs "
            f"{report['hop_us']:.0f} µs here, `benchmarks/hops.py`): a `def` or `async def` "
            "tool waited for with `wait()` runs on the waiting thread (0 hops); an awaited `def` "
            "tool on a worker, there and back (one crossing, which keeps the awaiting loop "
            "free), an awaited `async def` tool as a task on the awaiting loop (0 hops; in a "
            "Jupyter kernel on the runtime loop instead, which keeps the kernel free); on every "
            "path the call's row is committed to SQLite before the call is seen to end, by the "
            "thread that ends it or by a group commit it joins. "
            "Then `invoke_many` of each tool (the `async def` tool runs on the runtime loop, "
            "the `def` tool in lanes: worker threads that run a burst of calls inline and "
            "commit their rows together), and a replay of imported calls "
            "(`wb.transcripts.load`, then `tools.replay` of every row, each linked to its "
            "original). "
            "`benchmarks/README.md` reads the misses.",
            table(report["rows"], runtime_paths.ROW_COLUMNS)
            + "\n\nWhere each path's switches go, per call, by the thread that waited (the "
            "caller's, the runtime loop's, the worker threads', the history's thread behind "
            "the calls, and all others together: the watchdog's heartbeat, the ticker):\n\n"
            + table(report["switches"], runtime_paths.SWITCH_COLUMNS)
            + "\n\n"
            + table(report["verdicts"], runtime_paths.VERDICT_COLUMNS)
            + "\n\nThe floor of an awaited `def` call: the same call waited for (`waited_us`, "
            "run on the waiting thread) plus one bare crossing from a running loop to a worker "
            "thread and back with nothing run (`crossing_us`, `benchmarks/hops.py`), which an "
            "awaited `def` call pays to keep the awaiting loop free; beside LangChain's call. "
            "A `floor_share_of_langchain` under 1 means the crossing does not stop the goal, "
            "and what the path costs beyond `floor_us` is its own glue:\n\n"
            + table(report["crossing"], runtime_paths.CROSSING_COLUMNS)
            + "\n\n"
            + table(report["invoke_many"], runtime_paths.MANY_COLUMNS)
            + "\n\n"
            + table([report["replay"]], runtime_paths.REPLAY_COLUMNS)
            + "\n\n### The storage floor\n\n"
            "SQLite alone, which is the commit, for the rows these calls kept (re-inserted "
            "already encoded, with the "
            "history's own table, `INSERT` and pragmas, no workbench code in the timed loop; "
            "`benchmarks/floors.py`), beside the time per call each goal allows. A share of 1 or "
            "more means no change to the call path can meet the goal while each call keeps its "
            "row in SQLite. `steps_us_per_call` adds what every call does besides storing its "
            "row, each step timed alone at its fastest (the Call object, preflight, the body, "
            "projection, the receipt, building and encoding the row: the table below, without "
            "its SQLite step and its glue); a `with_steps_share_of_budget` of 1 or more means "
            "the goal cannot be met without making those steps themselves faster, however "
            "little the glue between them costs:\n\n"
            + table(report["floor"], runtime_paths.FLOOR_COLUMNS)
            + "\n\n### The commit, one row a transaction and grouped\n\n"
            "What committing an ended call's row to SQLite costs the caller, history on disk: "
            "`commit_us_per_row` is the history's own `write` of one row a transaction (a call "
            "waited for) and of 64 rows a transaction (the lanes of `invoke_many`, replay, "
            "imports), encoding included; beside them, interleaved in this one run, "
            "`invoke_wait_us` and `invoke_wait_cpu_us` the whole `invoke().wait()` of the `def` "
            "tool:\n\n"
            + table(report["commit"], runtime_paths.COMMIT_COLUMNS)
            + "\n\n### Where each µs of a `def` call goes\n\n"
            "The steps of one `invoke(...).wait()` of the `def` tool (run on the waiting "
            "thread, history on disk), each timed alone, beside the whole call; the SQLite "
            "transaction is timed inside the call, where it costs more than alone in a loop "
            "of its own (the floor above), and its time alone is named beside it. What is "
            "left is the glue between them (events, state, locks, the ticker's "
            "bookkeeping):\n\n" + table(steps, ["step", "us_per_call", "share"]),
        )

    def real_runs() -> str:
        calls = 1_000 if small else 10_000
        imports = transcripts.run(calls=calls, rounds=1 if small else 3)
        first = transcripts.first_load(rounds=1 if small else 3)
        paint = transcripts.first_paint(rows=2_000 if small else 100_000, rounds=1 if small else 3)
        inspect_logs = inspect_reader.run(calls=500 if small else 5_000, rounds=1 if small else 3)
        remembered = transcripts.verdicts(calls=500 if small else 10_000, rounds=1 if small else 3)
        return _section(
            "9. Importing real runs (transcripts)",
            f"A {calls:,}-call transcript of each format through `wb.transcripts.load` (envelope "
            "rules, preflight verdicts and the SQLite rows included), in calls per second "
            "against the goal of 100,000, beside `json.load` of the same file (parsing only) "
            "and reading it into pandas and matching calls to results by hand, which checks "
            "nothing; peak Python allocation of the import beside `json.load`'s. Then the "
            "first load in a fresh interpreter (goal 0.2 s) and the history view's time to "
            "first paint against reading the whole history into a DataFrame.",
            table(imports, transcripts.IMPORT_COLUMNS)
            + "\n\n"
            + table(first, transcripts.FIRST_LOAD_COLUMNS)
            + "\n\n"
            + table(paint, transcripts.PAINT_COLUMNS)
            + "\n\n### The preflight's verdicts, remembered\n\n"
            "CPU µs per imported call's verdict, remembered per tool and argument key (the "
            "import's way) beside checking every call, runs alternating:\n\n"
            + table(remembered, transcripts.VERDICT_COLUMNS)
            + "\n\n### inspect_ai's own logs, beside inspect_ai's reader\n\n"
            "A log written by inspect_ai itself (a scripted run of its mock model, its samples "
            "repeated and written again with inspect_ai's `write_eval_log`), as `.json` and "
            "as `.eval`, read by `wb.transcripts.load`, by inspect_ai's `read_eval_log` and "
            "by `json.loads` of the same JSON, interleaved round by round after one warm-up "
            "each (the first use of either reader imports jsonschema). Issue 39's goals: at "
            f"least {inspect_reader.FASTER_THAN_INSPECT_GOAL:g}x faster than inspect_ai's "
            f"reader, at most {inspect_reader.JSON_LOADS_GOAL:g}x `json.loads`; the same "
            "2x is judged on the synthetic rows above (`vs_json_load`):\n\n"
            + table(inspect_logs, inspect_reader.COLUMNS)
            + "\n\n"
            + table(json_verdicts(imports), JSON_VERDICT_COLUMNS),
        )

    def at_scale() -> str:
        imports = study.import_rate(calls_per_run=500 if small else 25_000)
        views = study.history_view((2_000,) if small else (100_000, 1_000_000))
        query = study.failures_by_kind(100_000 if small else 10_000_000)
        return _section(
            "10. A study at scale",
            "Runs of every format through `wb.transcripts.load_many` into one Parquet dataset "
            "(calls per second, beside `json.load` of the same files); the history view of a "
            "history file at two sizes, each in a fresh process (first paint, the slowest of "
            "five Older pages, a filter, rows read from SQLite, peak RSS of that process); and "
            "failures counted by kind over a Parquet dataset with DuckDB (`wb.open_dataset`) "
            "and with pandas, each in a fresh process.",
            table(imports, study.IMPORT_COLUMNS)
            + "\n\n"
            + table(views, study.VIEW_COLUMNS)
            + "\n\n"
            + table(query, study.QUERY_COLUMNS),
        )

    def served_start() -> str:
        rows = mcp_start.run(rounds=1 if small else 5)
        return _section(
            "11. A served registry's start",
            "`python -m workbench.mcp serve workbench.mcp.demo:registry` over stdio, from the "
            "moment the process is started to its answer to `initialize` (issue 49's goal: "
            f"{mcp_start.GOAL_S:g} s, idle), with the CPU the server spent until then, which load "
            "inflates less than the wall clock; beside it the floors no served registry goes "
            "under: a fresh interpreter importing the `mcp` SDK alone, and importing `workbench` "
            "with the SDK's server. Best of several rounds, interleaved.",
            table(rows, mcp_start.COLUMNS),
        )

    steps = [
        ("call overhead", overhead),
        ("streaming", stream),
        ("compaction", compact),
        ("listing", listing_100k),
        ("preflight", checks),
        ("history on disk", history_on_disk),
        ("import time", first_import),
        ("runtime paths", person_paths),
        ("transcripts", real_runs),
        ("study at scale", at_scale),
        ("served registry start", served_start),
    ]
    for number, (name, step) in enumerate(steps, start=1):
        if only and number not in only:
            continue
        print(f"running {name}…", file=sys.stderr, flush=True)
        sections.append(step())
    return "\n".join(sections)


def merged(previous: str, report: str) -> str:
    """``previous`` (a whole results.md) with the sections ``report`` holds put in place of
    its own, each kept section headed by the run it came from."""
    heads = re.compile(r"^## (\d+)\. ", re.MULTILINE)

    def split(text: str) -> tuple[str, dict[int, str]]:
        marks = list(heads.finditer(text))
        if not marks:
            return text, {}
        bounds = [mark.start() for mark in marks] + [len(text)]
        return text[: marks[0].start()], {
            int(mark[1]): text[start:end].rstrip() + "\n"
            for mark, start, end in zip(marks, bounds, bounds[1:], strict=False)
        }

    old_header, old = split(previous)
    new_header, new = split(report)
    run_line = re.search(r"^(?:Sections [\d, ]+ run|Run) (.*)$", old_header, re.MULTILINE)
    earlier = f"\n*From the earlier run: {run_line[1]}*\n\n" if run_line else "\n"
    parts = [new_header.rstrip() + "\n"]
    for number in sorted({*old, *new}):
        if number in new:
            parts.append(new[number])
            continue
        title, _, rest = old[number].partition("\n")
        if rest.lstrip().startswith("*From the earlier run:"):
            parts.append(old[number])  # headed by its own run already
        else:
            parts.append(f"{title}\n{earlier}{rest.lstrip()}")
    return "\n".join(parts)


def main() -> None:
    """Run, print, and write benchmarks/results.md (unless ``--small``)."""
    parser = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__)
    parser.add_argument("--small", action="store_true", help="tiny sizes; do not write results")
    parser.add_argument(
        "--only",
        type=int,
        nargs="+",
        metavar="N",
        help="run only these sections; the others are kept from the results.md there is",
    )
    options = parser.parse_args()
    only = set(options.only or ())
    report = run_all(small=options.small, only=only)
    print(report)
    if not options.small:
        if only and RESULTS.exists():
            report = merged(RESULTS.read_text(encoding="utf-8"), report)
        RESULTS.write_text(report, encoding="utf-8")
        print(f"written to {RESULTS}", file=sys.stderr)


if __name__ == "__main__":
    main()
