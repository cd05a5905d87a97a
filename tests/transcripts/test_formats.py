"""Each test transcript imports with the exact calls, receipts, rules, ids and timing."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import workbench as wb
from workbench.transcripts import Rule, TranscriptHistory, TranscriptWarning

DATA = Path(__file__).parents[1] / "data" / "transcripts"


def load(name: str, **kwargs) -> TranscriptHistory:
    return wb.transcripts.load(DATA / name, **kwargs)


def by_model_id(history: TranscriptHistory) -> dict[str, dict]:
    return {row["model_call_id"]: row for row in history.rows()}


def test_openai_chat_counts_rules_and_verdicts():
    history = load("openai_chat.json")
    assert history.format == "openai_chat"
    assert isinstance(history, wb.History)
    assert history.unreadable == []
    frame = history.to_dataframe()
    assert list(frame["model_call_id"]) == [
        "call_1aF",
        "call_2bG",
        "call_3cH",
        "call_4dJ",
        "call_5Qe",
        "call_6Rf",
    ]
    assert list(frame["tool"]) == [
        "shell_exec",
        "read_file",
        "read_file",
        "search_docs",
        "shell_exec",
        "read_file",
    ]
    assert list(frame["rule"]) == [
        "wire_envelope",
        "plain_text",
        "legacy_prefix",
        "plain_text",
        "canonical_record",
        "json_value",
    ]
    assert list(frame["status"]) == ["error", "success", "error", "success", "success", "success"]
    assert list(frame["preflight"]) == [
        "accepted",
        "coerced",
        "rejected",
        "accepted",
        "accepted",
        "accepted",
    ]
    assert list(frame["truncated"]) == [False, True, False, False, False, False]
    assert set(frame["run_id"]) == {"chatcmpl-AZ9kq3Lr7bXw2"}
    # the two parallel calls of one assistant message share its id
    assert list(frame["message_id"]) == [
        "messages[2]",
        "messages[2]",
        "messages[5]",
        "messages[7]",
        "messages[9]",
        "messages[9]",
    ]
    assert len(history.failures()) == 2
    assert sorted(history.tools) == ["read_file", "search_docs", "shell_exec"]


def test_openai_chat_receipts_are_the_tool_messages_byte_for_byte():
    raw = json.loads((DATA / "openai_chat.json").read_text(encoding="utf-8"))
    sent = {m["tool_call_id"]: m["content"] for m in raw["messages"] if m["role"] == "tool"}
    rows = by_model_id(load("openai_chat.json"))
    for call_id, content in sent.items():
        expected = content if isinstance(content, str) else "\n".join(p["text"] for p in content)
        assert rows[call_id]["receipt"] == expected
        assert rows[call_id]["receipt_chars"] == len(expected)
    assert "\u2018pthread_create\u2019" in rows["call_2bG"]["receipt"]  # curly quotes kept


def test_openai_chat_keeps_the_raw_argument_string_even_when_malformed():
    rows = by_model_id(load("openai_chat.json"))
    broken = rows["call_3cH"]
    assert broken["raw_args"] == '{"path": "src/main.c", "limit": 50'
    assert broken["arguments"] is None
    assert any("not valid JSON" in warning for warning in broken["warnings"])
    coerced = rows["call_2bG"]
    assert coerced["raw_args"] == '{"path": "build/out.log", "limit": "200"}'
    assert coerced["arguments"] == {"path": "build/out.log", "limit": "200"}
    assert coerced["coercions"]  # "200" → 200, as preflight would coerce it


def test_openai_chat_envelopes_come_from_the_detection_rules():
    rows = by_model_id(load("openai_chat.json"))
    assert rows["call_1aF"]["kind"] == "execution_error"
    error = rows["call_1aF"]["canonical"]["error"]
    assert error["message"] == "make: *** [Makefile:7: app] Fehler 1"
    assert rows["call_3cH"]["kind"] == "rejected"
    assert rows["call_5Qe"]["canonical"]["result"] == {"text": "Hallo, Welt! 👋\n"}
    assert rows["call_6Rf"]["canonical"]["result"]["größe"] == 3
    assert rows["call_4dJ"]["family"] == "text"


def test_openai_chat_legacy_function_call():
    history = load("openai_chat_legacy.json")
    rows = history.rows()
    assert [row["tool"] for row in rows] == ["python_eval", "python_eval"]
    assert rows[0]["receipt"] == "1267650600228229401496703205376"
    assert rows[1]["raw_args"] == '{"expression": 1/0}'
    assert rows[1]["arguments"] is None
    assert rows[1]["kind"] == "rejected"
    assert [row["preflight"] for row in history.to_dataframe().to_dict("records")] == [
        "no_schema",
        "no_schema",
    ]


def test_openai_responses_items():
    history = load("openai_responses.json")
    assert history.format == "openai_responses"
    frame = history.to_dataframe()
    assert list(frame["model_call_id"]) == ["call_w1", "call_w2", "call_u1", "call_u2"]
    assert list(frame["message_id"]) == ["fc_01", "fc_02", "fc_03", "fc_04"]
    assert list(frame["rule"]) == ["json_value", "legacy_prefix", "nested_error", "plain_text"]
    assert list(frame["kind"].fillna("")) == ["", "timeout", "invalid_args", ""]
    assert list(frame["preflight"]) == ["accepted", "accepted", "rejected", "accepted"]
    assert list(frame["truncated"]) == [False, False, False, True]
    assert set(frame["run_id"]) == {"resp_67ccd2bed1ec8190b14f964abc054267"}
    rows = by_model_id(history)
    assert rows["call_w1"]["receipt"] == '{"temp_c": 5.0, "sky": "bedeckt", "wind_kmh": 12}'
    assert rows["call_u1"]["raw_args"] == '{"value": 5.0, "from": "C", "to": "F"'
    assert rows["call_u2"]["receipt"].startswith("5.0 °C = 41.0 °F\n")
    assert rows["call_u2"]["receipt"].endswith("[... 1204 characters truncated ...]")


def test_anthropic_blocks_and_is_error():
    history = load("anthropic.json")
    assert history.format == "anthropic"
    frame = history.to_dataframe()
    assert list(frame["model_call_id"]) == [f"toolu_0{n}" for n in range(1, 6)]
    assert list(frame["rule"]) == [
        "plain_text",
        "plain_text",
        "flagged_error",
        "wire_envelope",
        "legacy_prefix",
    ]
    assert list(frame["status"]) == ["success", "success", "error", "error", "error"]
    assert list(frame["message_id"]) == ["msg_01A", "msg_01A", "msg_01B", "msg_01C", "msg_01D"]
    assert list(frame["truncated"]) == [False, False, True, False, False]
    rows = by_model_id(history)
    assert rows["toolu_01"]["receipt"] == "README.md\nsrc/\ntests/\n日本語.txt"
    # a list of blocks: the text blocks, and the image named as not in the receipt
    assert rows["toolu_02"]["receipt"] == (
        "# Projekt Ω\n\nRun `pytest tests/` — alle Tests müssen grün sein."
    )
    assert any("image" in warning for warning in rows["toolu_02"]["warnings"])
    flagged = rows["toolu_03"]
    assert flagged["canonical"]["error"]["message"].startswith("FAILED tests/test_api.py")
    assert rows["toolu_03"]["raw_args"] == {"path": "tests/", "verbose": "yes"}
    assert rows["toolu_04"]["raw_args"] == '{"path": "tests/test_api.py", "offset": 1'
    assert rows["toolu_04"]["kind"] == "invalid_args"
    assert rows["toolu_04"]["retryable"] is True


def test_mcp_jsonl_matches_requests_and_responses_by_id():
    with pytest.warns(TranscriptWarning, match=r"5 call\(s\) imported, 2 part\(s\)"):
        history = load("mcp.jsonl")
    assert history.format == "mcp_jsonl"
    frame = history.to_dataframe()
    assert list(frame["model_call_id"]) == ["2", "3", "4", "5", "6"]
    assert list(frame["tool"]) == ["fetch_url", "query_db", "query_db", "fetch_url", "query_db"]
    assert list(frame["rule"]) == [
        "flagged_error",
        "plain_text",
        "flagged_error",
        "plain_text",
        "no_result",
    ]
    assert list(frame["elapsed_ms"].round(1)[:4]) == [850.0, 79.0, 10.0, 820.0]
    started = history.rows()[0]["started_at"]
    assert started == pytest.approx(1772446502.1, abs=1e-3)  # 2026-03-02T10:15:02.100Z
    assert [str(item) for item in history.unreadable] == [
        "line 10: not JSON (Unterminated string starting at: line 1 column 104 (char 103)); "
        "expected one JSON value",
        "line 15: a tool result for call id '99' that no call sent",
    ]
    rows = by_model_id(history)
    assert rows["3"]["receipt"] == "name\n----\nJürgen\nSøren\n(2 rows)"
    assert rows["4"]["receipt"] == "Invalid params: arguments must be an object"
    assert rows["4"]["raw_args"] == '{"sql": "SELECT count(*) FROM users'
    assert rows["5"]["truncated"] is True
    assert rows["6"]["status"] is None and rows["6"]["receipt"] == ""
    assert sorted(history.tools) == ["fetch_url", "query_db"]


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("openai_chat.json", "openai_chat"),
        ("openai_chat_legacy.json", "openai_chat"),
        ("openai_responses.json", "openai_responses"),
        ("anthropic.json", "anthropic"),
        ("mcp.jsonl", "mcp_jsonl"),
    ],
)
def test_format_is_detected_from_the_content(name, expected, tmp_path):
    # a neutral file name: only the content can tell
    copy = tmp_path / "run.txt"
    copy.write_bytes((DATA / name).read_bytes())
    assert wb.transcripts.detect_format(copy) == expected
    assert wb.transcripts.detect_format((DATA / name).read_bytes()) == expected


def test_an_object_in_memory_imports_like_the_file():
    data = json.loads((DATA / "anthropic.json").read_text(encoding="utf-8"))
    from_object = wb.transcripts.load(data)
    from_file = load("anthropic.json")
    assert [row["receipt"] for row in from_object.rows()] == [
        row["receipt"] for row in from_file.rows()
    ]
    assert from_object.source == "<object>"


def test_every_rule_is_exercised_by_the_fixtures():
    seen: set[str] = set()
    for name in (
        "openai_chat.json",
        "openai_responses.json",
        "anthropic.json",
        "openai_chat_pairs.jsonl",
    ):
        seen |= set(load(name).to_dataframe()["rule"])
    with pytest.warns(TranscriptWarning):
        seen |= set(load("mcp.jsonl").to_dataframe()["rule"])
    assert seen == {rule.value for rule in Rule}


def test_each_call_shows_its_schema_and_the_preflight_of_its_arguments():
    history = load("openai_chat.json")
    assert history.schema("call_2bG")["properties"]["limit"] == {"type": "integer"}
    coerced = history.preflight("call_2bG")
    assert coerced.ok and coerced.arguments == {"path": "build/out.log", "limit": 200}
    rejected = history.preflight("call_3cH")
    assert not rejected.ok and rejected.error.error.kind.value == "invalid_args"
    legacy = load("openai_chat_legacy.json")
    first = legacy.rows()[0]["call_id"]
    assert legacy.schema(first) is None and legacy.preflight(first) is None
