"""Importing real runs: 10,000 tool calls per format, the first load in a fresh process, and
the history view of 100,000 rows.

For each format a synthetic transcript of ``calls`` tool calls is written in that format's real
shape (two parallel calls per assistant turn, every fifth result an error, non-ASCII text, a
JSON result every third call) and read three ways, best of ``rounds``:

- ``wb.transcripts.load``: everything a row holds (arguments parsed, the envelope recognised
  by the rules, the preflight verdict against the transcript's schemas, the SQLite row), as
  calls per second against the goal of 100,000;
- ``json.load`` of the same file (``json.loads`` per line for JSON lines): only parsing, the
  floor any reader of the file pays;
- the same file read with ``json`` into pandas and the calls matched to their results by
  hand (``json_normalize`` plus a merge on the call id): what people do without workbench;
  it recognises nothing and checks nothing, so it is a floor, not an equal.

Beside them, the storage floor (``benchmarks.floors``): the same rows, already encoded,
inserted 64 to a transaction into an in-memory table of the history's own schema, as the
import writes them; no import that keeps a SQLite row per call is faster.

Memory is the peak Python allocation (``tracemalloc``) of one more, untimed, import beside the
peak of ``json.load`` of the same file and the file's size: an import that streams (an MCP
capture, a request or response read item by item (the ``openai_chat``, ``anthropic`` and
``openai_responses`` rows), an inspect_ai ``.eval`` log, which has a row of its own: the same
calls in samples of 25) stays near the size of its largest message or sample whatever the
file's size. The ``inspect_ai`` row's ``.json`` log is one sample, so it is held whole.

The preflight's verdicts are timed alone (CPU time, best of ``rounds``): remembered per tool and
argument key, as an import computes them, against checking every call, for the benchmark's own
calls (a free string path and fifty numeric texts for the limit) under its plain schema and
under one with a length limit on the path (checked by jsonschema, so every path is a key of its
own), and for twenty argument sets sent again and again.

The first load is timed in fresh interpreters: ``import workbench``, then the first
``wb.transcripts.load`` of a small transcript (goal 0.2 s), and which heavy packages it loaded.

The history view is timed to its first paint: building the view of a 100,000-row history
until the rows it draws are set, against reading the whole history into a DataFrame.

Run ``python -m benchmarks.transcripts`` for the tables.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import time
import tracemalloc
import zipfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pandas as pd

import workbench as wb
from benchmarks import floors
from workbench.history import CallRecord

SCHEMA = {
    "type": "object",
    "properties": {"path": {"type": "string"}, "limit": {"type": "integer"}},
    "required": ["path"],
    "additionalProperties": False,
}


def _result(index: int) -> tuple[str, bool]:
    if index % 5 == 4:
        failure = {"ok": False, "kind": "not_found", "message": f"datei_{index}.txt fehlt"}
        return json.dumps(failure, ensure_ascii=False), True
    if index % 3 == 0:
        return json.dumps({"path": f"src/modul_{index}.py", "zeilen": index % 400}), False
    return f"Zeile 1 von datei_{index}: Grüße ✓\nZeile 2: ok", False


def _pairs(calls: int) -> Iterator[tuple[int, int]]:
    """(first index, how many) per assistant turn: two parallel calls each."""
    for start in range(0, calls, 2):
        yield start, min(2, calls - start)


def _args(index: int) -> str:
    return json.dumps({"path": f"src/datei_{index}.txt", "limit": str(index % 50 + 1)})


def openai_chat(calls: int) -> Any:
    messages: list[dict[str, Any]] = [{"role": "user", "content": "Lies alle Dateien."}]
    for start, count in _pairs(calls):
        ids = [f"call_{start + k}" for k in range(count)]
        messages.append(
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": ids[k],
                        "type": "function",
                        "function": {"name": "read_file", "arguments": _args(start + k)},
                    }
                    for k in range(count)
                ],
            }
        )
        for k in range(count):
            messages.append(
                {"role": "tool", "tool_call_id": ids[k], "content": _result(start + k)[0]}
            )
    tools = [{"type": "function", "function": {"name": "read_file", "parameters": SCHEMA}}]
    return {"id": "chatcmpl-bench", "tools": tools, "messages": messages}


def openai_responses(calls: int) -> Any:
    items: list[dict[str, Any]] = []
    for start, count in _pairs(calls):
        for k in range(count):
            items.append(
                {
                    "type": "function_call",
                    "id": f"fc_{start + k}",
                    "call_id": f"call_{start + k}",
                    "name": "read_file",
                    "arguments": _args(start + k),
                }
            )
        for k in range(count):
            items.append(
                {
                    "type": "function_call_output",
                    "call_id": f"call_{start + k}",
                    "output": _result(start + k)[0],
                }
            )
    tools = [{"type": "function", "name": "read_file", "parameters": SCHEMA}]
    return {"id": "resp_bench", "tools": tools, "input": [], "output": items}


def anthropic(calls: int) -> Any:
    messages: list[dict[str, Any]] = []
    for start, count in _pairs(calls):
        messages.append(
            {
                "role": "assistant",
                "content": [
                    {
                        "type": "tool_use",
                        "id": f"toolu_{start + k}",
                        "name": "read_file",
                        "input": json.loads(_args(start + k)),
                    }
                    for k in range(count)
                ],
            }
        )
        results = []
        for k in range(count):
            text, error = _result(start + k)
            results.append(
                {
                    "type": "tool_result",
                    "tool_use_id": f"toolu_{start + k}",
                    "content": text,
                    "is_error": error,
                }
            )
        messages.append({"role": "user", "content": results})
    return {"tools": [{"name": "read_file", "input_schema": SCHEMA}], "messages": messages}


def mcp_jsonl(calls: int) -> str:
    lines = [
        {"jsonrpc": "2.0", "id": "list", "method": "tools/list"},
        {
            "jsonrpc": "2.0",
            "id": "list",
            "result": {"tools": [{"name": "read_file", "inputSchema": SCHEMA}]},
        },
    ]
    for index in range(calls):
        text, error = _result(index)
        lines.append(
            {
                "jsonrpc": "2.0",
                "id": index,
                "method": "tools/call",
                "params": {"name": "read_file", "arguments": json.loads(_args(index))},
            }
        )
        lines.append(
            {
                "jsonrpc": "2.0",
                "id": index,
                "result": {"content": [{"type": "text", "text": text}], "isError": error},
            }
        )
    return "\n".join(json.dumps(line, ensure_ascii=False) for line in lines) + "\n"


def inspect_ai(calls: int) -> Any:
    messages: list[dict[str, Any]] = []
    for start, count in _pairs(calls):
        messages.append(
            {
                "id": f"m{start}",
                "role": "assistant",
                "content": "",
                "tool_calls": [
                    {
                        "id": f"call_{start + k}",
                        "function": "read_file",
                        "arguments": json.loads(_args(start + k)),
                        "type": "function",
                    }
                    for k in range(count)
                ],
            }
        )
        for k in range(count):
            text, error = _result(start + k)
            message: dict[str, Any] = {
                "id": f"t{start + k}",
                "role": "tool",
                "tool_call_id": f"call_{start + k}",
                "function": "read_file",
                "content": "" if error else text,
            }
            if error:
                message["error"] = {"type": "unknown", "message": text}
            messages.append(message)
    model_event = {"event": "model", "tools": [{"name": "read_file", "parameters": SCHEMA}]}
    sample = {"id": 1, "epoch": 1, "messages": messages, "events": [model_event]}
    return {"version": 2, "status": "success", "eval": {"eval_id": "bench"}, "samples": [sample]}


WRITERS: dict[str, Callable[[int], Any]] = {
    "openai_chat": openai_chat,
    "openai_responses": openai_responses,
    "anthropic": anthropic,
    "mcp_jsonl": mcp_jsonl,
    "inspect_ai": inspect_ai,
}


EVAL_LOG = "inspect_ai (.eval)"
"""The row of an inspect_ai ``.eval`` archive: the same calls in samples of ``SAMPLE_CALLS``."""
SAMPLE_CALLS = 25


def write_eval(directory: Path, calls: int) -> Path:
    """An inspect_ai ``.eval`` archive of ``calls`` tool calls, ``SAMPLE_CALLS`` per sample."""
    path = directory / "inspect_ai.eval"
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("header.json", json.dumps({"eval": {"eval_id": "bench"}}))
        for number, start in enumerate(range(0, calls, SAMPLE_CALLS)):
            sample = inspect_ai(min(SAMPLE_CALLS, calls - start))["samples"][0]
            sample["id"] = number
            member = f"samples/{number:05d}_epoch_1.json"
            archive.writestr(member, json.dumps(sample, ensure_ascii=False))
    return path


LOG = "openai_responses log (.jsonl)"
"""The row of a run logged call by call: JSON lines of request/response pairs."""


def responses_log(calls: int) -> str:
    """A Responses run logged call by call as JSON lines of request/response pairs, each
    request carrying the items since the last response (``previous_response_id``) and each
    response the model's turn, so the log grows with the run; a last request carries the
    results of the last turn."""
    document = openai_responses(calls)
    lines: list[str] = []
    since: list[dict[str, Any]] = []  # items since the last response
    turn: list[dict[str, Any]] = []  # the model's calls of the turn under way
    for item in [*document["output"], None]:
        if item is not None and item["type"] == "function_call":
            turn.append(item)
            continue
        if turn:
            request = {"model": "m", "tools": document["tools"], "input": since}
            if lines:
                request["previous_response_id"] = f"resp_{len(lines) - 1}"
            response = {"object": "response", "id": f"resp_{len(lines)}", "output": turn}
            lines.append(json.dumps({"request": request, "response": response}))
            since, turn = [], []
        if item is not None:
            since.append(item)
    last = {"model": "m", "tools": document["tools"], "input": since}
    lines.append(json.dumps({"request": last}, ensure_ascii=False))
    return "\n".join(lines) + "\n"


def _eval_samples(path: Path) -> list[Any]:
    with zipfile.ZipFile(path) as archive:
        names = sorted(n for n in archive.namelist() if n.startswith("samples/"))
        return [json.loads(archive.read(name)) for name in names]


def write(directory: Path, format: str, calls: int) -> Path:
    """A synthetic transcript of ``calls`` tool calls in ``format``."""
    data = WRITERS[format](calls)
    path = directory / f"{format}.{'jsonl' if format == 'mcp_jsonl' else 'json'}"
    text = data if isinstance(data, str) else json.dumps(data, ensure_ascii=False)
    path.write_text(text, encoding="utf-8")
    return path


def by_hand(path: Path, format: str) -> pd.DataFrame:
    """Calls matched to results with ``json`` and pandas only, as one would without workbench."""
    if format == EVAL_LOG:  # each sample is a run of its own: its calls are matched in it
        return pd.concat([_matched_by_hand(s["messages"]) for s in _eval_samples(path)])
    text = path.read_text(encoding="utf-8")
    if format == "mcp_jsonl":
        frame = pd.json_normalize([json.loads(line) for line in text.splitlines()], max_level=1)
        calls = frame[frame["method"] == "tools/call"][["id", "params.name", "params.arguments"]]
        results = frame[frame["method"].isna()][["id", "result.content", "result.isError"]]
        return calls.merge(results, on="id", how="left")
    if format == LOG:  # each request's input items, then its response's output items
        pairs = [json.loads(line) for line in text.splitlines()]
        sides = [
            (pair["request"]["input"], pair.get("response", {}).get("output", [])) for pair in pairs
        ]
        data = {"output": [item for sent, answered in sides for item in (*sent, *answered)]}
        format = "openai_responses"
    else:
        data = json.loads(text)
    if format == "openai_responses":
        items = pd.json_normalize(data["output"])
        calls = items[items["type"] == "function_call"][["call_id", "name", "arguments"]]
        outputs = items[items["type"] == "function_call_output"][["call_id", "output"]]
        return calls.merge(outputs, on="call_id", how="left")
    if format == "anthropic":
        blocks = pd.json_normalize([b for m in data["messages"] for b in m["content"]])
        uses = blocks[blocks["type"] == "tool_use"][["id", "name"]]
        results = blocks[blocks["type"] == "tool_result"][["tool_use_id", "content", "is_error"]]
        return uses.merge(results, left_on="id", right_on="tool_use_id", how="left")
    messages = data["messages"] if format == "openai_chat" else data["samples"][0]["messages"]
    return _matched_by_hand(messages)


def _matched_by_hand(messages: list[Any]) -> pd.DataFrame:
    frame = pd.json_normalize(messages)
    calls = frame.explode("tool_calls").dropna(subset=["tool_calls"])
    calls = pd.json_normalize(calls["tool_calls"].tolist())
    results = frame[frame["role"] == "tool"][["tool_call_id", "content"]]
    return calls.merge(results, left_on="id", right_on="tool_call_id", how="left")


def json_load(path: Path, format: str) -> Any:
    """The file parsed and nothing more: the floor of any reader."""
    if format == EVAL_LOG:
        return _eval_samples(path)
    with path.open(encoding="utf-8") as handle:
        if format in ("mcp_jsonl", LOG):
            return [json.loads(line) for line in handle if line.strip()]
        return json.load(handle)


def peak_mb(function: Callable[[], Any]) -> float:
    """The peak of Python's allocations while ``function`` runs, in MB."""
    tracemalloc.start()
    try:
        function()
        return tracemalloc.get_traced_memory()[1] / 1e6
    finally:
        tracemalloc.stop()


def _best(function: Callable[[], Any], rounds: int) -> tuple[float, Any]:
    best, value = float("inf"), None
    for _ in range(rounds):
        started = time.perf_counter()
        value = function()
        best = min(best, time.perf_counter() - started)
    return best, value


CALLS_PER_S_GOAL = 100_000
FIRST_LOAD_GOAL_S = 0.2


def run(calls: int = 10_000, rounds: int = 3, *, memory: bool = True) -> list[dict[str, Any]]:
    """One row per format: import speed in calls per second beside ``json.load`` of the same
    file and pandas by hand, and (``memory``) the peak allocation beside ``json.load``'s."""
    rows = []
    with tempfile.TemporaryDirectory() as directory:
        for format in (*WRITERS, EVAL_LOG, LOG):
            if format == EVAL_LOG:
                path = write_eval(Path(directory), calls)
            elif format == LOG:
                path = Path(directory) / "responses-log.jsonl"
                path.write_text(responses_log(calls), encoding="utf-8")
            else:
                path = write(Path(directory), format, calls)
            ours, history = _best(lambda p=path: wb.transcripts.load(p), rounds)
            assert len(history) == calls, (format, len(history))
            history.close()
            parse_s, _ = _best(lambda p=path, f=format: json_load(p, f), rounds)
            theirs, frame = _best(lambda p=path, f=format: by_hand(p, f), rounds)
            assert len(frame) == calls, (format, len(frame))
            kept = Path(directory) / f"{format}-rows.sqlite"
            wb.transcripts.load(path, history=kept).close()
            floor = floors.insert_calls_per_s(
                floors.stored_rows(kept, calls), calls, on_disk=False, rounds=rounds
            )
            row: dict[str, Any] = {
                "format": format,
                "calls": calls,
                "file_mb": path.stat().st_size / 1e6,
                "import_s": ours,
                "calls_per_s": calls / ours,
                "json_load_s": parse_s,
                "vs_json_load": ours / parse_s,
                "pandas_by_hand_s": theirs,
                "ratio": ours / theirs,
                "sqlite_floor_calls_per_s": floor,
                "goal": f">= {CALLS_PER_S_GOAL:,} calls/s",
                "met": "met" if calls / ours >= CALLS_PER_S_GOAL else "MISSED",
            }
            if memory:
                row["peak_mb"] = peak_mb(lambda p=path: wb.transcripts.load(p).close())
                row["json_load_peak_mb"] = peak_mb(lambda p=path, f=format: json_load(p, f))
            rows.append(row)
    return rows


CONSTRAINED = {
    **SCHEMA,
    "properties": {**SCHEMA["properties"], "path": {"type": "string", "maxLength": 200}},
}


def verdicts(calls: int = 10_000, rounds: int = 3) -> list[dict[str, Any]]:
    """CPU µs per preflight verdict, remembered per argument key (as an import does) beside
    checking every call."""
    from workbench.transcripts._verdicts import Preflights

    text = wb.transcripts.parse(openai_chat(calls))[1]
    cases = {
        "plain schema, distinct paths": (SCHEMA, text.calls),
        "maxLength on path, distinct paths": (CONSTRAINED, text.calls),
        "maxLength on path, 20 repeated sets": (
            CONSTRAINED,
            [text.calls[index % 20] for index in range(len(text.calls))],
        ),
    }
    rows = []
    for case, (schema, imported) in cases.items():
        timing: dict[bool, float] = {}
        checks: dict[bool, int] = {}
        for round_ in range(rounds):
            # interleaved, first one then the other: the first of a pair runs slower here
            for remember in (True, False) if round_ % 2 else (False, True):
                preflights = Preflights({"read_file": schema}, remember=remember)
                started = time.process_time()
                for call in imported:
                    preflights.verdict(call)
                spent = time.process_time() - started
                timing[remember] = min(timing.get(remember, spent), spent)
                checks[remember] = preflights.checks
        rows.append(
            {
                "case": case,
                "calls": len(imported),
                "checks": checks[True],
                "remembered_us": timing[True] / len(imported) * 1e6,
                "every_call_us": timing[False] / len(imported) * 1e6,
                "speedup": timing[False] / timing[True],
            }
        )
    return rows


_FIRST_LOAD = """
import json, sys, time
started = time.perf_counter()
import workbench as wb
imported = time.perf_counter()
history = wb.transcripts.load(sys.argv[1])
loaded = time.perf_counter()
heavy = [name for name in json.loads(sys.argv[2]) if name in sys.modules]
print(json.dumps({"import_s": imported - started, "first_load_s": loaded - imported,
                  "rows": len(history), "heavy": heavy}))
"""
HEAVY = ("jsonschema", "pandas", "numpy", "ipywidgets", "anywidget", "IPython", "inspect_ai")


def first_load(rounds: int = 3, calls: int = 20) -> list[dict[str, Any]]:
    """The first ``wb.transcripts.load`` in fresh interpreters (best of ``rounds``), after
    ``import workbench``, and the heavy packages it left loaded."""
    with tempfile.TemporaryDirectory() as directory:
        path = write(Path(directory), "openai_chat", calls)
        results = []
        for _ in range(rounds):
            done = subprocess.run(
                [sys.executable, "-c", _FIRST_LOAD, str(path), json.dumps(HEAVY)],
                capture_output=True,
                text=True,
                timeout=300,
                check=True,
            )
            results.append(json.loads(done.stdout))
    best = min(results, key=lambda result: result["first_load_s"])
    return [
        {
            "calls": best["rows"],
            "import_workbench_s": min(result["import_s"] for result in results),
            "first_load_s": best["first_load_s"],
            "heavy_loaded": ", ".join(best["heavy"]) or "none",
            "goal_s": FIRST_LOAD_GOAL_S,
            "met": "met" if best["first_load_s"] <= FIRST_LOAD_GOAL_S else "MISSED",
        }
    ]


def _history(rows: int, directory: Path) -> wb.History:
    history = wb.History(directory / "history.sqlite")
    for index in range(rows):
        text, error = _result(index)
        history.append(
            CallRecord(
                call_id=f"bench:{index}",
                tool="read_file",
                state="imported",
                status="error" if error else "success",
                kind="execution_error" if error else None,
                summary_text=text.splitlines()[0][:100],
                receipt=text,
                receipt_chars=len(text),
                raw_args=_args(index),
                canonical={
                    "tool_name": "read_file",
                    "status": "success",
                    "summary_text": "ok",
                    "result": {"text": text},
                    "error": None,
                    "warnings": [],
                    "artifacts": [],
                    "call_id": None,
                },
            )
        )
    history.flush()
    return history


def first_paint(rows: int = 100_000, rounds: int = 3) -> list[dict[str, Any]]:
    """Seconds until the history view of ``rows`` rows has the rows it draws, against reading
    the whole history into a DataFrame."""
    from workbench.widgets.history import HistoryView

    with tempfile.TemporaryDirectory() as directory:
        history = _history(rows, Path(directory))
        view_s, view = _best(lambda: HistoryView(history), rounds)
        drawn = len(view.table.rows)
        frame_s, _ = _best(history.to_dataframe, rounds)
        history.close()
    return [
        {
            "rows": rows,
            "rows_drawn": drawn,
            "first_paint_s": view_s,
            "whole_dataframe_s": frame_s,
            "ratio": view_s / frame_s,
        }
    ]


def main() -> None:
    from benchmarks.__main__ import table

    print(table(run(), IMPORT_COLUMNS))
    print(table(verdicts(), VERDICT_COLUMNS))
    print(table(first_load(), FIRST_LOAD_COLUMNS))
    print(table(first_paint(), PAINT_COLUMNS))


IMPORT_COLUMNS = [
    "format",
    "calls",
    "file_mb",
    "import_s",
    "calls_per_s",
    "json_load_s",
    "vs_json_load",
    "pandas_by_hand_s",
    "ratio",
    "sqlite_floor_calls_per_s",
    "peak_mb",
    "json_load_peak_mb",
    "goal",
    "met",
]
VERDICT_COLUMNS = ["case", "calls", "checks", "remembered_us", "every_call_us", "speedup"]
FIRST_LOAD_COLUMNS = [
    "calls",
    "import_workbench_s",
    "first_load_s",
    "heavy_loaded",
    "goal_s",
    "met",
]
PAINT_COLUMNS = ["rows", "rows_drawn", "first_paint_s", "whole_dataframe_s", "ratio"]

if __name__ == "__main__":
    main()
