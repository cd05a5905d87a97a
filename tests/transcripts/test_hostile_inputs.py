"""Transcripts built to crash or hang a load: an integer of 5,001 digits, values nested 100,000
deep, a damaged LZMA member of an ``.eval``, a FIFO and ``/dev/zero``. Each file is a
``TranscriptError`` naming it, or the part that holds the fault is listed in ``unreadable`` and
the rest is read; ``load_many`` lists each such file and goes on with the others. Every load
runs in a child process with a bounded wait and a memory cap."""

from __future__ import annotations

import json
import os
import zipfile
from pathlib import Path
from typing import Any

import pytest

import workbench as wb
from tests.transcripts.capped import MIB, in_child, load_in_child
from tests.transcripts.test_inspect_parts import HEADER, damage, sample, varied, write_eval

DEEP = "[" * 100_000 + "]" * 100_000
LONG_INTEGER = "7" * 5_001
FAULTS = {"nested 100,000 deep": DEEP, "an integer of 5,001 digits": LONG_INTEGER}
MARK = "__FAULT__"


def chat(calls: int) -> list[dict[str, Any]]:
    """A Chat Completions run of ``calls`` answered calls."""
    messages: list[dict[str, Any]] = []
    for n in range(calls):
        call = {"id": f"c{n}", "type": "function", "function": {"name": "f", "arguments": "{}"}}
        messages.append({"role": "assistant", "tool_calls": [call]})
        messages.append({"role": "tool", "tool_call_id": f"c{n}", "content": f"result {n}"})
    return messages


def with_fault(document: Any, fault: str) -> str:
    """``document`` as JSON text, the string ``MARK`` in it replaced by the fault's text."""
    return json.dumps(document).replace(json.dumps(MARK), fault)


def written(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


@pytest.fixture(params=sorted(FAULTS))
def fault(request) -> str:
    return FAULTS[request.param]


def test_a_message_list_holding_the_value_is_an_error_naming_the_file(tmp_path, fault):
    messages = [*chat(3), {"role": "user", "content": MARK}]
    result = load_in_child(written(tmp_path / "run.json", with_fault(messages, fault)))
    assert result["error"].startswith("run.json: "), result


def test_a_request_read_by_parts_holding_the_value_is_an_error_naming_the_file(tmp_path, fault):
    messages = [*chat(40), {"role": "user", "content": MARK}]  # past the head detection reads
    request = {"model": "m", "messages": messages, "tools": []}
    result = load_in_child(written(tmp_path / "request.json", with_fault(request, fault)))
    assert result["error"].startswith("request.json: "), result


def test_a_json_lines_line_holding_the_value_is_listed_and_the_others_read(tmp_path, fault):
    lines = [json.dumps(message) for message in chat(3)]
    lines.insert(2, json.dumps({"role": "user", "content": MARK}).replace(json.dumps(MARK), fault))
    result = load_in_child(written(tmp_path / "run.jsonl", "\n".join(lines) + "\n"))
    assert result["rows"] == 3
    assert [item.split(":")[0] for item in result["unreadable"]] == ["line 3"]


def test_an_inspect_json_log_keeps_the_samples_before_the_one_holding_the_value(tmp_path, fault):
    log = {**HEADER, "samples": [sample(0), {**sample(1), "input": MARK}, sample(2)]}
    result = load_in_child(written(tmp_path / "log.json", with_fault(log, fault)))
    whole = load_in_child(
        written(tmp_path / "first.json", json.dumps({**HEADER, "samples": [sample(0)]}))
    )
    assert result["rows"] == whole["rows"] > 0
    assert result["unreadable"][-1].startswith("samples[1] onwards: ")


@pytest.mark.parametrize("size", ["small", "read by parts"])
def test_an_eval_member_holding_the_value_is_listed_and_the_others_read(tmp_path, fault, size):
    padding = varied(5 * MIB) if size != "small" else ""
    members = {
        f"samples/0000{n}_epoch_2.json": json.dumps({**sample(n), "input": padding})
        for n in range(3)
    }
    members["samples/00001_epoch_2.json"] = with_fault({**sample(1), "input": MARK}, fault)
    result = load_in_child(write_eval(tmp_path / "log.eval", members))
    assert "escaped" not in result, result
    faulty = [item for item in result["unreadable"] if item.startswith("samples/00001")]
    assert len(faulty) == 1 and result["rows"] > 0


def test_arguments_sent_as_text_nested_100_000_deep_are_kept_as_sent(tmp_path):
    messages = chat(2)
    messages[0]["tool_calls"][0]["function"]["arguments"] = DEEP
    body = """
    def read():
        history = wb.transcripts.load(sys.argv[2])
        row = history.rows()[0]
        return {"raw": len(row["raw_args"]), "arguments": row["arguments"],
                "warnings": row["warnings"]}
    result = run(read)
    """
    path = written(tmp_path / "run.json", json.dumps(messages))
    result = in_child(body, path, cwd=tmp_path)
    assert result["raw"] == len(DEEP) and result["arguments"] is None, result
    assert "arguments: the arguments are JSON nested too deeply to read" in result["warnings"]


def test_a_run_in_memory_nested_100_000_deep_is_read():
    nested: list[Any] = []
    inner = nested
    for _ in range(100_000):
        inner.append([])
        inner = inner[0]
    history = wb.transcripts.load([{"role": "user", "content": nested}, *chat(2)])
    assert [row["receipt"] for row in history.rows()] == ["result 0", "result 1"]


def lzma_eval(path: Path) -> Path:
    """An ``.eval`` of three samples whose members are LZMA-compressed, the middle one damaged."""
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_LZMA) as archive:
        archive.writestr("header.json", json.dumps(HEADER))
        for n in range(3):
            archive.writestr(f"samples/0000{n}_epoch_2.json", json.dumps(sample(n)))
    damage(path, "samples/00001_epoch_2.json")
    return path


def test_a_damaged_lzma_member_is_listed_and_the_others_are_read(tmp_path):
    result = load_in_child(lzma_eval(tmp_path / "lzma.eval"))
    assert "escaped" not in result, result
    (damaged,) = [item for item in result["unreadable"] if item.startswith("samples/00001")]
    assert damaged.startswith("samples/00001_epoch_2.json: damaged in the archive (")
    assert result["rows"] > 0


@pytest.fixture
def fifo(tmp_path) -> Path:
    path = tmp_path / "pipe.json"
    os.mkfifo(path)
    return path


@pytest.mark.parametrize("which", ["a FIFO no one writes to", "/dev/zero"])
def test_a_file_that_never_ends_is_refused_at_once(fifo, which):
    path = fifo if which != "/dev/zero" else Path("/dev/zero")
    result = load_in_child(path, timeout=60)
    kind = "a named pipe (FIFO)" if which != "/dev/zero" else "a character device"
    assert result["error"] == (
        f"{path.name}: the path: it is {kind}, not a regular file; it is not read; "
        "expected a transcript file"
    )


def unharmed(numbers: list[int]) -> wb.transcripts.TranscriptHistory:
    """The import of the samples ``numbers`` alone."""
    with pytest.warns(wb.transcripts.TranscriptWarning):
        return wb.transcripts.load({**HEADER, "samples": [sample(n) for n in numbers]})


def test_load_many_lists_each_hostile_file_and_imports_the_others(tmp_path, fifo):
    runs = tmp_path / "runs"
    runs.mkdir()
    good = written(runs / "good.json", json.dumps(chat(3)))
    deep = written(
        runs / "deep.json", with_fault([*chat(1), {"role": "user", "content": MARK}], DEEP)
    )
    log = {**HEADER, "samples": [sample(0), {**sample(1), "input": MARK}]}
    long = written(runs / "long.json", with_fault(log, LONG_INTEGER))
    lzma = lzma_eval(runs / "lzma.eval")
    body = """
    def study():
        dataset = wb.transcripts.load_many([*sys.argv[3:], "/dev/zero"], out=sys.argv[2])
        return {"runs": [{key: run[key] for key in ("source", "calls", "unreadable", "error")}
                         for run in dataset.runs]}
    result = run(study)
    """
    paths = [good, deep, long, lzma, fifo]
    out = tmp_path / "study"
    result = in_child(body, out, *paths, cap=2048 * MIB, timeout=180, cwd=tmp_path)
    assert "escaped" not in result, result
    listed = {Path(run["source"]).name: run for run in result["runs"]}
    assert sorted(listed) == sorted([*(path.name for path in paths), "zero"])
    assert listed["good.json"]["calls"] == 3 and listed["good.json"]["error"] is None
    for name, readable in (("long.json", [0]), ("lzma.eval", [0, 2])):
        alone = unharmed(readable)  # the samples without the fault, and one part more unread
        assert (listed[name]["calls"], listed[name]["unreadable"]) == (
            len(alone),
            len(alone.unreadable) + 1,
        )
    for name in ("deep.json", "pipe.json", "zero"):
        assert listed[name]["error"].startswith(f"{name}: "), listed[name]
