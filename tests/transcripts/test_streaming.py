"""An MCP capture in JSON lines is read line by line: memory stays near the size of one message
(plus the calls still waiting for their result), whatever the size of the file."""

from __future__ import annotations

import tracemalloc

import pytest

import workbench as wb
from benchmarks import transcripts as synthetic
from tests.transcripts.support import RUN_KEY
from workbench.transcripts import TranscriptWarning
from workbench.transcripts._source import open_source


def peak_of_load(path, history) -> tuple[int, int]:
    """(peak Python allocation in bytes, rows) of importing ``path`` into a history file."""
    tracemalloc.start()
    try:
        loaded = wb.transcripts.load(path, history=history)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    rows = len(loaded)
    loaded.close()
    return peak, rows


def peak_of_import(tmp_path, calls: int) -> tuple[float, int, int]:
    """(peak Python allocation in bytes, file size, rows) of importing ``calls`` calls of an
    MCP capture into a history file."""
    path = synthetic.write(tmp_path, "mcp_jsonl", calls)
    moved = path.rename(tmp_path / f"capture-{calls}.jsonl")
    peak, rows = peak_of_load(moved, tmp_path / f"history-{calls}.sqlite")
    return peak, moved.stat().st_size, rows


def test_memory_does_not_grow_with_the_file(tmp_path):
    peak_of_import(tmp_path, 50)  # the first import pays for what it imports, not measured
    small_peak, small_size, small_rows = peak_of_import(tmp_path, 1_000)
    large_peak, large_size, large_rows = peak_of_import(tmp_path, 4_000)
    assert (small_rows, large_rows) == (1_000, 4_000)
    assert large_size > 3.5 * small_size
    # four times the file, not twice the memory: one line, the calls waiting for a result and
    # the rows waiting for the history's writer (WRITE_AHEAD at most), however long the file
    assert large_peak < 2 * small_peak
    assert large_peak < large_size / 2


def test_a_streamed_capture_reads_like_the_same_lines_in_memory(tmp_path):
    path = synthetic.write(tmp_path, "mcp_jsonl", 40)
    text = path.read_text(encoding="utf-8")
    lines = text.splitlines()
    lines.insert(70, "{not json")  # past the lines detection reads: met while streaming
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with pytest.warns(TranscriptWarning, match="1 part"):
        streamed = wb.transcripts.load(path)
    assert path.stat().st_size > 0 and open_source(path).streamed
    with pytest.warns(TranscriptWarning, match="1 part"):
        whole = wb.transcripts.load(("\n".join(lines) + "\n").encode())
    assert len(streamed) == len(whole) == 40
    assert [row["receipt"] for row in streamed.rows()] == [row["receipt"] for row in whole.rows()]
    assert [str(item) for item in streamed.unreadable] == [str(item) for item in whole.unreadable]
    assert str(streamed.unreadable[0]).startswith("line 71: not JSON")
    assert sorted(streamed.tools) == ["read_file"]


def write_eval_log(path, samples: int, calls_per_sample: int):
    """An inspect_ai log of ``samples`` samples, each its own run: a ``.eval`` archive (one
    member per sample) or a ``.json`` log (one object, its ``samples`` a list)."""
    import json
    import zipfile

    made = []
    for number in range(samples):
        sample = synthetic.inspect_ai(calls_per_sample)["samples"][0]
        sample["id"] = number
        made.append(sample)
    header = {"version": 2, "status": "success", "eval": {"eval_id": "big-eval"}}
    if path.suffix == ".json":
        path.write_text(json.dumps({**header, "samples": made, "reductions": []}))
        return path
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("header.json", json.dumps(header))
        for number, sample in enumerate(made):
            archive.writestr(f"samples/{number:05d}_epoch_1.json", json.dumps(sample))
    return path


def peak_of_log_import(tmp_path, samples: int, suffix: str) -> tuple[int, int]:
    path = write_eval_log(tmp_path / f"log-{samples}{suffix}", samples, 40)
    return peak_of_load(path, tmp_path / f"history-{samples}.sqlite")


@pytest.mark.parametrize("suffix", [".eval", ".json"])
def test_an_inspect_log_is_read_one_sample_at_a_time(tmp_path, suffix):
    peak_of_log_import(tmp_path, 5, suffix)  # the first import pays for its imports
    small_peak, small_rows = peak_of_log_import(tmp_path, 50, suffix)
    large_peak, large_rows = peak_of_log_import(tmp_path, 200, suffix)
    assert (small_rows, large_rows) == (50 * 40, 200 * 40)
    # four times the samples, not three times the memory: one sample, the rows not yet
    # written and a few bytes of bookkeeping per sample
    assert large_peak < 3 * small_peak


@pytest.mark.parametrize("suffix", [".eval", ".json"])
def test_a_streamed_inspect_log_gives_the_rows_of_the_same_samples_in_memory(tmp_path, suffix):
    import json
    import zipfile

    path = write_eval_log(tmp_path / f"log{suffix}", 6, 10)
    if suffix == ".eval":
        with zipfile.ZipFile(path, "a") as archive:  # a member that is not JSON, met mid-way
            archive.writestr("samples/00003_bad.json", "{not json")
        with zipfile.ZipFile(path) as archive:
            names = sorted(n for n in archive.namelist() if n.startswith("samples/"))
            samples = [json.loads(archive.read(n)) for n in names if "bad" not in n]
        bad = "samples/00003_bad.json"
    else:  # the text stops being JSON in the last sample: the samples before it are read
        samples = json.loads(path.read_text())["samples"][:5]
        text = path.read_text()
        cut = text.rindex('"messages"')
        path.write_text(text[:cut] + '"messages": [{"role": nonsense')
        bad = "samples[5] onwards"
    with pytest.warns(TranscriptWarning, match="1 part"):
        streamed = wb.transcripts.load(path)
    whole = wb.transcripts.load({"eval": {"eval_id": "big-eval"}, "samples": samples})
    assert len(streamed) == len(whole) == len(samples) * 10
    keep = ("call_id", "tool", "raw_args", "arguments", "receipt", "status", "run_id")
    assert [{k: row[k] for k in keep} for row in streamed.rows()] == [
        {k: row[k] for k in keep} for row in whole.rows()
    ]
    assert [str(item).split(":")[0] for item in streamed.unreadable] == [bad]
    assert sorted(streamed.tools) == ["read_file"]


def assert_memory_bounded(tmp_path, run_of) -> None:
    """Eight times the calls (``run_of(calls)``, written as one JSON file) do not take twice
    the memory to import."""
    import json

    def peak(calls: int) -> int:
        path = tmp_path / f"run-{calls}.json"
        path.write_text(json.dumps(run_of(calls)))
        found, rows = peak_of_load(path, tmp_path / f"h-{calls}.sqlite")
        assert rows == calls
        return found

    peak(50)  # the first import pays for its imports
    small, large = peak(1_000), peak(8_000)
    assert large < 2 * small


REQUEST_FORMATS = ["openai_chat", "anthropic", "openai_responses", "gemini"]


def gemini_contents(calls: int) -> list[dict]:
    """A Gemini run: each call a model turn, its answer a user turn; every third call carries
    no id (the reader pairs it by name and keeps no made-up id)."""
    contents: list[dict] = [{"role": "user", "parts": [{"text": "Lies alle Dateien."}]}]
    for index in range(calls):
        ids = {} if index % 3 == 2 else {"id": f"call_{index}"}
        args = {"path": f"src/datei_{index}.txt", "limit": str(index % 50 + 1)}
        answer = {"output": f"Zeile 1 von datei_{index}: Grüße ✓"}
        contents.append(
            {
                "role": "model",
                "parts": [{"functionCall": {**ids, "name": "read_file", "args": args}}],
            }
        )
        contents.append(
            {
                "role": "user",
                "parts": [{"functionResponse": {**ids, "name": "read_file", "response": answer}}],
            }
        )
    return contents


def request_document(format: str, calls: int, *, tools_last: bool) -> dict:
    """A request logged whole: its run (Chat and Anthropic ``messages``, Responses ``input``)
    and its ``tools``, before or after the run."""
    if format == "gemini":
        run = gemini_contents(calls)
    else:
        made = synthetic.WRITERS[format](calls)
        run = made if isinstance(made, list) else made.get("messages") or made.get("output")
    key = RUN_KEY.get(format, "messages")
    tools = {
        "openai_chat": [
            {"type": "function", "function": {"name": "read_file", "parameters": synthetic.SCHEMA}}
        ],
        "anthropic": [{"name": "read_file", "input_schema": synthetic.SCHEMA}],
        "openai_responses": [
            {"type": "function", "name": "read_file", "parameters": synthetic.SCHEMA}
        ],
        "gemini": [
            {"functionDeclarations": [{"name": "read_file", "parameters": synthetic.SCHEMA}]}
        ],
    }[format]
    if tools_last:
        return {"id": "run-1", "model": "m", key: run, "tools": tools}
    return {"id": "run-1", "tools": tools, "model": "m", key: run}


@pytest.mark.parametrize("format", REQUEST_FORMATS)
@pytest.mark.parametrize("tools_last", [True, False])
def test_a_request_file_read_message_by_message_gives_the_rows_of_the_object(
    tmp_path, format, tools_last
):
    import json

    document = request_document(format, 300, tools_last=tools_last)  # past detection's head
    path = tmp_path / "request.json"
    path.write_text(json.dumps(document, ensure_ascii=False, indent=1))
    assert open_source(path).stream_key == RUN_KEY.get(format, "messages")
    streamed = wb.transcripts.load(path)
    whole = wb.transcripts.load(document)
    assert streamed.format == whole.format == format
    assert len(streamed) == len(whole) == 300
    assert streamed.tools == whole.tools and sorted(streamed.tools) == ["read_file"]
    keep = ("call_id", "tool", "raw_args", "arguments", "receipt", "status", "run_id")
    keep += ("model_call_id",)
    assert [{k: row[k] for k in keep} for row in streamed.rows()] == [
        {k: row[k] for k in keep} for row in whole.rows()
    ]
    assert streamed.to_dataframe()["preflight"].iloc[0] == "coerced"  # the schema was read


@pytest.mark.parametrize("format", REQUEST_FORMATS)
def test_a_request_file_is_read_in_memory_bounded_by_a_message(tmp_path, format):

    assert_memory_bounded(tmp_path, lambda calls: request_document(format, calls, tools_last=True))


def test_a_request_file_that_stops_being_json_is_named_where_it_stops(tmp_path):
    import json

    text = json.dumps(request_document("openai_chat", 200, tools_last=False), indent=1)
    cut = text.index('"role": "assistant"', len(text) // 2)
    path = tmp_path / "cut.json"
    path.write_text(text[:cut] + "nonsense")
    # the first pass over the file (for the members besides the messages) meets it: nothing is
    # imported, and the error names the line and column, as for any document read whole
    line = text[:cut].count("\n") + 1
    with pytest.raises(wb.transcripts.TranscriptError, match=f"line {line} column"):
        wb.transcripts.load(path)


def responses_document(calls: int, *, shape: str) -> dict:
    """A Responses run logged as one object: a response alone (its ``output`` items), or a
    request with its response (``input`` items, then ``output`` items, halves of the run)."""
    items = synthetic.WRITERS["openai_responses"](calls)["output"]
    tools = [{"type": "function", "name": "read_file", "parameters": synthetic.SCHEMA}]
    if shape == "response":
        return {"id": "resp_1", "object": "response", "tools": tools, "output": items}
    half = len(items) // 2
    return {
        "id": "resp_1",
        "tools": tools,
        "input": items[:half],
        "model": "m",
        "output": items[half:],
    }


@pytest.mark.parametrize("shape", ["response", "request and response"])
def test_a_responses_object_is_read_item_by_item_through_input_then_output(tmp_path, shape):
    import json

    document = responses_document(300, shape=shape)  # past detection's head
    path = tmp_path / "responses.json"
    path.write_text(json.dumps(document, ensure_ascii=False, indent=1))
    source = open_source(path)
    assert (source.stream_key, source.stream_sequel) == (
        ("output", None) if shape == "response" else ("input", "output")
    )
    streamed, whole = wb.transcripts.load(path), wb.transcripts.load(document)
    assert streamed.format == whole.format == "openai_responses"
    assert len(streamed) == len(whole) == 300
    keep = ("call_id", "tool", "raw_args", "arguments", "receipt", "status", "run_id")
    keep += ("model_call_id",)
    assert [{k: row[k] for k in keep} for row in streamed.rows()] == [
        {k: row[k] for k in keep} for row in whole.rows()
    ]
    assert streamed.tools == whole.tools and sorted(streamed.tools) == ["read_file"]


@pytest.mark.parametrize("shape", ["response", "request and response"])
def test_a_responses_object_is_read_in_memory_bounded_by_an_item(tmp_path, shape):

    assert_memory_bounded(tmp_path, lambda calls: responses_document(calls, shape=shape))


def test_a_responses_object_with_output_before_input_is_read_whole_in_run_order(tmp_path):
    import json

    document = responses_document(300, shape="request and response")
    backwards = {key: document[key] for key in ("id", "tools", "output", "input")}
    path = tmp_path / "backwards.json"
    path.write_text(json.dumps(backwards))
    assert open_source(path).stream_key is None  # one pass could not read input first
    history = wb.transcripts.load(path)
    assert len(history) == 300
    assert [row["model_call_id"] for row in history.rows()] == [
        row["model_call_id"] for row in wb.transcripts.load(document).rows()
    ]


def bare_list(format: str, calls: int) -> list:
    """A run saved as a bare list: Chat or Anthropic messages, Responses items, Gemini contents."""
    return request_document(format, calls, tools_last=True)[RUN_KEY.get(format, "messages")]


@pytest.mark.parametrize("format", REQUEST_FORMATS)
def test_a_bare_list_file_read_item_by_item_gives_the_rows_of_the_list(tmp_path, format):
    import json

    run = bare_list(format, 300)
    path = tmp_path / "run.json"
    path.write_text(json.dumps(run, ensure_ascii=False))
    assert open_source(path).stream_key == "[]"
    streamed, whole = wb.transcripts.load(path), wb.transcripts.load(run)
    assert streamed.format == whole.format == format
    # (a run with no id of its own is named after its content: a file's bytes, an object's shape)
    keep = ("tool", "raw_args", "arguments", "receipt", "status", "model_call_id", "message_id")
    assert [{k: row[k] for k in keep} for row in streamed.rows()] == [
        {k: row[k] for k in keep} for row in whole.rows()
    ]
    assert len(streamed) == 300


@pytest.mark.parametrize("format", ["openai_chat", "gemini"])
def test_a_bare_list_file_is_read_in_memory_bounded_by_a_message(tmp_path, format):

    assert_memory_bounded(tmp_path, lambda calls: bare_list(format, calls))


def test_a_list_whose_first_calls_come_late_is_still_detected(tmp_path):
    import json

    talk = [{"role": "user" if n % 2 else "assistant", "content": f"hello {n}"} for n in range(80)]
    run = talk + bare_list("openai_chat", 5)
    path = tmp_path / "late.json"
    path.write_text(json.dumps(run))
    history = wb.transcripts.load(path)  # the first messages hold no call: all are looked at
    assert history.format == "openai_chat" and len(history) == 5
