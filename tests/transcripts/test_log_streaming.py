"""A run logged as API traffic (request/response pairs, or the objects one after another, in a
JSON list or JSON lines) is read entry by entry: the rows are those of the same log read whole,
and memory holds one entry, not the log, whose size grows with the square of the run."""

from __future__ import annotations

import json
import warnings
from collections.abc import Callable
from typing import Any

import pytest

import workbench as wb
from benchmarks import transcripts as synthetic
from tests.transcripts.support import as_pairs
from tests.transcripts.test_streaming import peak_of_load, request_document
from workbench.transcripts._source import open_source

FORMATS = ["openai_chat", "anthropic", "openai_responses", "gemini"]
KEEP = ("tool", "raw_args", "arguments", "receipt", "status", "model_call_id", "message_id")


def exchanges(format: str, calls: int) -> list[dict[str, Any]]:
    """A generated run of ``calls`` calls logged as request/response pairs."""
    return as_pairs(format, request_document(format, calls, tools_last=False))


def write(path, log: list[dict[str, Any]], *, lines: bool):
    if lines:
        path.write_text("".join(json.dumps(entry, ensure_ascii=False) + "\n" for entry in log))
    else:
        path.write_text(json.dumps(log, ensure_ascii=False))
    return path


def rows_of(history) -> list[dict[str, Any]]:
    """What a row says of its call, and where in the log the call and its result were read."""
    found = []
    for row in history.rows():
        (imported,) = row["events"]
        places = {key: imported[key] for key in ("where", "result_where", "preflight")}
        found.append({**{key: row[key] for key in KEEP}, **places})
    return found


@pytest.mark.parametrize("format", FORMATS)
@pytest.mark.parametrize("lines", [True, False], ids=["json lines", "json list"])
def test_a_log_read_entry_by_entry_gives_the_rows_of_the_log_in_memory(tmp_path, format, lines):
    log = exchanges(format, 120)  # 60 exchanges and more: past detection's head
    path = write(tmp_path / ("log.jsonl" if lines else "log.json"), log, lines=lines)
    source = open_source(path)
    assert source.exchanges and source.streamed == lines
    # the same text read whole (in memory, so not streamed): lines keep their numbers
    streamed, whole = wb.transcripts.load(path), wb.transcripts.load(path.read_bytes())
    assert streamed.format == whole.format == format
    assert len(streamed) == len(whole) == 120
    assert rows_of(streamed) == rows_of(whole)
    # and they are the calls of the run sent once, each with its own result
    alone = wb.transcripts.load(request_document(format, 120, tools_last=False))
    same = ("tool", "raw_args", "receipt", "status", "model_call_id")
    assert [{k: row[k] for k in same} for row in streamed.rows()] == [
        {k: row[k] for k in same} for row in alone.rows()
    ]
    assert streamed.tools == whole.tools and sorted(streamed.tools) == ["read_file"]
    assert set(streamed.to_dataframe()["preflight"]) == {"coerced"}  # the schema was read
    assert streamed.unreadable == whole.unreadable == []


def test_entries_of_a_log_are_named_by_line_and_by_exchange(tmp_path):
    log = exchanges("openai_chat", 120)
    by_line = wb.transcripts.load(write(tmp_path / "log.jsonl", log, lines=True))
    by_exchange = wb.transcripts.load(write(tmp_path / "log.json", log, lines=False))
    # call 0 is first sent in the first response, on line 1 / exchange 0
    first_line, first_exchange = rows_of(by_line)[0], rows_of(by_exchange)[0]
    assert first_line["where"] == "line 1 response, choices[0]"
    assert first_exchange["where"] == "exchange 0 response, choices[0]"
    assert first_line["result_where"] == "line 2 request, message 2"


def test_a_repeated_result_that_changed_is_named_and_the_rest_is_read(tmp_path):
    log = exchanges("openai_chat", 120)
    later = log[30]["request"]["messages"]
    changed = next(n for n, message in enumerate(later) if message.get("role") == "tool")
    later[changed] = {**later[changed], "content": "a different answer"}
    path = write(tmp_path / "log.jsonl", log, lines=True)
    streamed, whole = wb.transcripts.load(path), wb.transcripts.load(path.read_bytes())
    assert [str(item) for item in streamed.unreadable] == [str(item) for item in whole.unreadable]
    (problem,) = streamed.unreadable
    assert problem.where == f"line 31 request, message {changed}"
    assert "a second, different result" in problem.reason
    assert rows_of(streamed) == rows_of(whole) and len(streamed) == 120


def test_a_log_whose_first_entries_hold_no_mark_is_detected_from_all_of_them(tmp_path):
    """Detection reads the first entries; finding no mark there, it reads every line, and then
    looks at every line, not again at the first ones."""
    quiet = [{"model": "m", "messages": [{"role": "user", "content": f"hi {n}"}]} for n in range(8)]
    call = {"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}
    conversation = [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "c1", "content": "done"},
    ]
    path = write(
        tmp_path / "log.jsonl", [*quiet, {"model": "m", "messages": conversation}], lines=True
    )
    history = wb.transcripts.load(path)
    assert history.format == "openai_chat"
    assert [(row["tool"], row["receipt"]) for row in history.rows()] == [("f", "done")]


def test_an_entry_that_is_no_api_object_is_listed_where_it_is_met(tmp_path):
    log = exchanges("anthropic", 120)
    log.insert(55, {"note": "the proxy restarted"})  # past the entries detection reads
    streamed = wb.transcripts.load(write(tmp_path / "log.jsonl", log, lines=True))
    (problem,) = streamed.unreadable
    assert problem.where == "line 56"
    assert "expected a request or response object" in problem.reason
    assert len(streamed) == 120


def test_a_log_that_stops_being_json_keeps_what_came_before(tmp_path):
    log = exchanges("openai_chat", 120)
    text = json.dumps(log)
    cut = text.index('{"request"', len(text) * 3 // 4)
    path = tmp_path / "cut.json"
    path.write_text(text[:cut] + "nonsense")
    # the list is not JSON: the first pass over the file finds it and it is read (and named)
    # as a document read whole, as before logs were read entry by entry
    with pytest.raises(wb.transcripts.TranscriptError, match="line 1 column"):
        wb.transcripts.load(path)
    lines = write(tmp_path / "cut.jsonl", log, lines=True)
    broken = lines.read_text().splitlines()
    broken[40] = broken[40][: len(broken[40]) // 2]  # one line torn in two: that line is lost
    lines.write_text("\n".join(broken) + "\n")
    with pytest.warns(wb.transcripts.TranscriptWarning):
        history = wb.transcripts.load(lines)
    assert [item.where for item in history.unreadable] == ["line 41"]
    assert len(history) == 120  # the next request repeats the run: nothing is lost


def peaks(tmp_path, lines_of: Callable[[int], str], sizes: tuple[int, int]):
    """(peak, file size) of importing the JSON lines ``lines_of(calls)`` for each of
    ``sizes``."""
    found = []
    for calls in (10, *sizes):  # the first import pays for its imports: not counted
        path = tmp_path / f"log-{calls}.jsonl"
        path.write_text(lines_of(calls), encoding="utf-8")
        peak, rows = peak_of_load(path, tmp_path / f"h-{calls}.sqlite")
        assert rows == calls
        found.append((peak, path.stat().st_size))
    return found[1:]


@pytest.mark.parametrize("format", FORMATS)
def test_a_log_is_read_in_memory_bounded_by_its_largest_entry(tmp_path, format):
    def lines_of(calls: int) -> str:
        return "".join(json.dumps(entry) + "\n" for entry in exchanges(format, calls))

    (small, small_size), (large, large_size) = peaks(tmp_path, lines_of, (100, 400))
    assert large_size > 12 * small_size  # each request repeats the run: the log grows as n²
    # the largest entry grows four times; the memory follows it, not the file
    assert large < 6 * small
    assert large < large_size / 4


def test_a_stateful_responses_log_is_read_in_memory_of_a_few_bytes_a_call(tmp_path):
    # requests that carry only the items since the last response: the log grows as n
    (small, small_size), (large, large_size) = peaks(
        tmp_path, synthetic.responses_log, (2000, 16000)
    )
    assert large_size > 7 * small_size
    # what grows is a hash of each call's id and of its result, to tell a call (or result) met
    # again: about 100 bytes a call, where its text in the file takes about 450
    assert (large - small) / 14_000 < 160
    assert large < large_size / 3  # json.load of the same lines takes about 7 times the file


def run_with_a_call_never_answered(later: int) -> list[dict[str, Any]]:
    """A Chat run whose first call gets no result until the very end, ``later`` calls after it,
    each answered at once."""

    def call(number: int) -> dict[str, Any]:
        arguments = json.dumps({"path": f"datei_{number}.txt"})
        function = {"name": "read_file", "arguments": arguments}
        return {"role": "assistant", "tool_calls": [{"id": f"c{number}", "function": function}]}

    run: list[dict[str, Any]] = [{"role": "user", "content": "Lies alles."}, call(0)]
    for number in range(1, later + 1):
        run += [call(number), {"role": "tool", "tool_call_id": f"c{number}", "content": "ok"}]
    run.append({"role": "tool", "tool_call_id": "c0", "content": "too late"})
    return run


def test_a_call_never_answered_holds_back_a_bounded_number_of_calls(tmp_path):
    from workbench.transcripts._parsed import HELD_MAX

    def peak(later: int):
        path = tmp_path / f"run-{later}.json"
        path.write_text(json.dumps(run_with_a_call_never_answered(later)))
        with warnings.catch_warnings():  # the late result is listed: asserted below
            warnings.simplefilter("ignore", wb.transcripts.TranscriptWarning)
            return peak_of_load(path, tmp_path / f"h-{later}.sqlite"), path

    peak(10)  # the first import pays for its imports
    (small, rows), _ = peak(HELD_MAX + 2_000)
    (large, _), path = peak(2 * HELD_MAX + 4_000)
    assert rows == HELD_MAX + 2_001
    # twice the calls behind the unanswered one, not twice the memory: it is handed on once
    # HELD_MAX calls wait behind it, so they are written and let go
    assert large < 1.3 * small
    with pytest.warns(wb.transcripts.TranscriptWarning, match="1 part"):
        history = wb.transcripts.load(path)
    first = history.rows()[0]  # the order sent is kept
    assert first["model_call_id"] == "c0" and first["receipt"] == ""
    assert any(
        "no result for this call among the 10,000 calls after it" in w for w in first["warnings"]
    )
    (late,) = history.unreadable
    assert late.where == f"message {len(run_with_a_call_never_answered(2 * HELD_MAX + 4_000)) - 1}"
    assert late.reason.startswith("the result of call id 'c0', which was stored without it")
    assert len(history) == 2 * HELD_MAX + 4_001


def test_a_call_answered_within_the_window_keeps_its_result_and_its_place(tmp_path):
    from workbench.transcripts._parsed import HELD_MAX

    run = run_with_a_call_never_answered(HELD_MAX - 1)  # answered while it still waits
    path = tmp_path / "run.json"
    path.write_text(json.dumps(run))
    history = wb.transcripts.load(path)
    assert history.unreadable == []
    first = history.rows()[0]
    assert first["model_call_id"] == "c0" and first["receipt"] == "too late"


def server_calls(calls: int) -> list[dict[str, Any]]:
    """A Responses run of web searches the provider ran, each item holding its own result."""
    return [
        {
            "type": "web_search_call",
            "id": f"ws_{number}",
            "status": "completed",
            "action": {"type": "search", "query": f"Wetter {number}", "sources": [f"s{number}"]},
        }
        for number in range(calls)
    ]


def test_calls_read_with_their_result_are_not_kept_waiting(tmp_path):
    def lines_of(calls: int) -> str:
        return json.dumps(server_calls(calls))

    (small, _), (large, large_size) = peaks(tmp_path, lines_of, (2_000, 16_000))
    # eight times the calls, not eight times the memory: a call whose item holds its result
    # is handed on at once, and nothing keeps it
    assert large < 2 * small
    assert large < large_size / 4
