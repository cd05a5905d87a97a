"""Bad input is a clear error naming the file, where in it and what was expected; a partly
unreadable transcript imports every readable call and lists the rest."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import workbench as wb
from workbench.transcripts import TranscriptError, TranscriptWarning, Unreadable

DATA = Path(__file__).parents[1] / "data" / "transcripts"


def write(tmp_path, name: str, text: str | bytes):
    path = tmp_path / name
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


def error_of(source, **kwargs) -> TranscriptError:
    with pytest.raises(TranscriptError) as caught:
        wb.transcripts.load(source, **kwargs)
    return caught.value


def test_a_missing_file(tmp_path):
    error = error_of(tmp_path / "nope.json")
    assert str(error).startswith("nope.json: the file: ")
    assert "does not exist" in str(error)


def test_broken_json_names_the_line_and_column(tmp_path):
    path = write(tmp_path, "run.json", '{\n  "messages": [\n    {"role": "user",,}\n  ]\n}\n')
    error = error_of(path)
    assert str(error) == (
        "run.json: line 3 column 21: Expecting property name enclosed in double quotes; "
        "expected a JSON document (an object or a list of messages) or JSON lines"
    )
    assert (error.source, error.where) == ("run.json", "line 3 column 21")


def test_bytes_that_are_not_utf8_name_the_line_and_byte(tmp_path):
    path = write(tmp_path, "run.json", b'[\n{"role": "user", "content": "caf\xe9"}\n]')
    assert str(error_of(path)) == (
        "run.json: line 2 (byte 34): the bytes are not UTF-8; expected UTF-8 JSON text"
    )


def test_an_empty_file(tmp_path):
    assert "the file is empty" in str(error_of(write(tmp_path, "empty.json", "  \n")))


def test_content_of_no_known_format(tmp_path):
    path = write(tmp_path, "chat.json", json.dumps([{"role": "user", "content": "hi"}]))
    error = error_of(path)
    assert str(error).startswith(
        "chat.json: the whole file: no tool call or tool result of any known format was found"
    )
    assert "openai_chat" in error.expected and "pass format=" in error.expected


def test_an_unknown_format_name(tmp_path):
    path = write(tmp_path, "chat.json", "[]")
    error = error_of(path, format="langchain")
    assert str(error).startswith("chat.json: format=: unknown format 'langchain'; expected one of")


def test_a_format_that_does_not_fit_the_content(tmp_path):
    path = write(tmp_path, "chat.json", json.dumps({"model": "x"}))
    error = error_of(path, format="openai_chat")
    assert str(error) == (
        "chat.json: the top level: no message list; "
        "expected a list of chat messages, a request object with 'messages', a response object "
        "with 'choices', or a list of request/response pairs"
    )


def test_an_object_that_is_no_transcript():
    assert str(error_of(42)).startswith("<object>: the input: a int cannot be read")


def test_partly_unreadable_chat_imports_every_readable_call_and_lists_the_rest(tmp_path):
    messages = [
        {"role": "user", "content": "go"},
        {"role": "assistant", "tool_calls": [
            {"id": "a", "type": "function", "function": {"name": "one", "arguments": "{}"}},
            {"id": "b", "type": "function", "function": {"arguments": "{}"}},
        ]},
        "a stray string",
        {"role": "tool", "tool_call_id": "a", "content": "fine"},
        {"role": "tool", "tool_call_id": "zzz", "content": "orphan"},
        {"role": "tool", "tool_call_id": "b", "content": 17},
    ]  # fmt: skip
    path = write(tmp_path, "run.json", json.dumps(messages))
    with pytest.warns(TranscriptWarning, match=r"run.json: 1 call\(s\) imported, 4 part\(s\)"):
        history = wb.transcripts.load(path)
    assert [row["model_call_id"] for row in history.rows()] == ["a"]
    assert history.rows()[0]["receipt"] == "fine"
    assert history.unreadable == [
        Unreadable("message 1, tool call 1", "expected a 'function' with a 'name'"),
        Unreadable("message 2", "expected a message object, found a str"),
        Unreadable("message 4", "a tool result for call id 'zzz' that no call sent"),
        Unreadable("message 5", "the tool message's content is not text or parts"),
    ]


def test_json_lines_with_bad_lines_keep_the_good_ones(tmp_path):
    lines = [
        json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                    "params": {"name": "t", "arguments": {}}}),
        "{this is not json",
        json.dumps({"jsonrpc": "2.0", "id": 1,
                    "result": {"content": [{"type": "text", "text": "ok"}]}}),
        json.dumps({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {}}),
        json.dumps([1, 2]),
    ]  # fmt: skip
    path = write(tmp_path, "traffic.jsonl", "\n".join(lines))
    with pytest.warns(TranscriptWarning):
        history = wb.transcripts.load(path)
    assert [row["receipt"] for row in history.rows()] == ["ok"]
    assert [item.where for item in history.unreadable] == ["line 2", "line 4", "line 5", "line 5"]
    assert history.unreadable[1].reason == "a tools/call request without params.name"


def test_a_clean_transcript_warns_nothing(tmp_path, recwarn):
    messages = [
        {"role": "assistant", "tool_calls": [
            {"id": "a", "type": "function", "function": {"name": "one", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": "a", "content": "fine"},
    ]  # fmt: skip
    history = wb.transcripts.load(messages)
    assert history.unreadable == []
    assert not [w for w in recwarn if issubclass(w.category, TranscriptWarning)]


def test_format_names_and_aliases(tmp_path):
    path = write(tmp_path, "run.json", (DATA / "anthropic.json").read_text(encoding="utf-8"))
    assert wb.transcripts.load(path, format="Claude").format == "anthropic"
    assert wb.transcripts.load(path, format="anthropic").format == "anthropic"


def test_a_pydantic_model_of_a_run_is_read_as_its_json_form():
    from pydantic import BaseModel

    class Run(BaseModel):
        messages: list[dict]

    run = Run(
        messages=[
            {"role": "assistant", "tool_calls": [
                {"id": "a", "type": "function", "function": {"name": "t", "arguments": "{}"}}]},
            {"role": "tool", "tool_call_id": "a", "content": "fine"},
        ]
    )  # fmt: skip
    assert [row["receipt"] for row in wb.transcripts.load(run).rows()] == ["fine"]
