"""Every request and response object of each provider API, runs logged as request/response
pairs, and the calls a provider runs on its own side (``executed_by="server"``)."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import pytest

import workbench as wb
from tests.transcripts.support import as_pairs
from workbench.transcripts import TranscriptHistory, TranscriptWarning

DATA = Path(__file__).parents[1] / "data" / "transcripts"


def load(name: str, **kwargs) -> TranscriptHistory:
    return wb.transcripts.load(DATA / name, **kwargs)


def column(history: TranscriptHistory, name: str) -> list:
    return [None if value != value else value for value in history.to_dataframe()[name]]


def chat_pairs() -> list[dict]:
    text = (DATA / "openai_chat_pairs.jsonl").read_text(encoding="utf-8")
    return [json.loads(line) for line in text.splitlines()]


def test_a_bare_chat_completions_response_is_read():
    history = load("openai_chat_response.json")
    assert wb.transcripts.detect_format(DATA / "openai_chat_response.json") == "openai_chat"
    assert history.format == "openai_chat" and history.unreadable == []
    assert column(history, "model_call_id") == ["call_Q1", "call_Q2"]
    assert column(history, "raw_args") == ['{"city":"Basel"}', '{"city": "Genf", "unit": "kelvin"}']
    # both parallel calls belong to the response's message, and the run is the response
    assert column(history, "message_id") == ["chatcmpl-C1aR7", "chatcmpl-C1aR7"]
    assert column(history, "rule") == ["no_result", "no_result"]
    assert set(column(history, "run_id")) == {"chatcmpl-C1aR7"}


def test_a_chat_response_with_several_choices_lists_the_alternatives():
    response = json.loads((DATA / "openai_chat_response.json").read_text(encoding="utf-8"))
    second = {**response["choices"][0], "index": 1}
    response["choices"].append(second)
    with pytest.warns(TranscriptWarning, match="1 part"):
        history = wb.transcripts.load(response, format="openai_chat")
    assert len(history) == 2
    [alternative] = history.unreadable
    assert alternative.where == "choices[1]" and "did not continue" in alternative.reason


def test_a_chat_run_logged_as_request_response_pairs_reads_each_call_once():
    history = load("openai_chat_pairs.jsonl")
    assert history.format == "openai_chat" and history.unreadable == []
    assert column(history, "model_call_id") == [
        "call_Wz1",
        "call_Wb2",
        "call_Bk3",
        "call_Tr4",
        "call_Bk5",
    ]
    # each call is named by the response that carried it; results come from later requests
    assert column(history, "message_id") == [
        "chatcmpl-B9xQ1",
        "chatcmpl-B9xQ1",
        "chatcmpl-B9xQ2",
        "chatcmpl-B9xQ2",
        "chatcmpl-B9xQ3",
    ]
    rows = {row["model_call_id"]: row for row in history.rows()}
    assert rows["call_Wz1"]["receipt"] == '{"city": "Zürich", "temp_c": 14, "sky": "bewölkt"}'
    assert rows["call_Bk5"]["receipt"] == ""  # the run's last call: no later request answers it
    assert sorted(history.tools) == ["book_table", "get_weather"]


def test_pairs_in_a_json_list_and_in_memory_read_like_the_json_lines():
    pairs = chat_pairs()
    from_lines = [row["receipt"] for row in load("openai_chat_pairs.jsonl").rows()]
    assert [row["receipt"] for row in wb.transcripts.load(pairs).rows()] == from_lines
    # a log of the objects one after another, without the pair wrapper
    flat = [side for pair in pairs for side in (pair["request"], pair["response"])]
    assert [row["receipt"] for row in wb.transcripts.load(flat).rows()] == from_lines
    # an HTTP capture keeps each side's object under "body"
    captured = [
        {
            "request": {"method": "POST", "body": pair["request"]},
            "response": {"body": pair["response"]},
        }
        for pair in pairs
    ]
    assert [row["receipt"] for row in wb.transcripts.load(captured).rows()] == from_lines


def test_a_result_that_changes_between_requests_is_listed():
    pairs = chat_pairs()
    pairs[2]["request"]["messages"][3]["content"] = "a different answer"
    with pytest.warns(TranscriptWarning):
        history = wb.transcripts.load(pairs)
    [changed] = history.unreadable
    assert changed.where == "exchange 2 request, message 3"
    assert changed.reason == "a second, different result for call id 'call_Wz1'"
    assert history.get("call_Wz1")["receipt"].startswith('{"city": "Zürich"')


def test_legacy_function_calls_logged_as_pairs_are_read_once_without_a_made_up_id():
    # the legacy function_call has no id: it is paired by name, under a key taken from its
    # place in the conversation, which every later request repeats at the same place
    run: list[dict] = [{"role": "user", "content": "Lies drei Dateien."}]
    for number in range(3):
        call = {"name": "read_file", "arguments": json.dumps({"path": f"datei_{number}.txt"})}
        run.append({"role": "assistant", "content": None, "function_call": call})
        run.append({"role": "function", "name": "read_file", "content": f"Inhalt {number} ✓"})
    pairs = [
        {
            "request": {"model": "m", "messages": run[:at]},
            "response": {"object": "chat.completion", "id": f"c{at}", "choices": [{"message": m}]},
        }
        for at, m in enumerate(run)
        if m["role"] == "assistant"
    ]
    pairs.append({"request": {"model": "m", "messages": run}})
    logged, alone = wb.transcripts.load(pairs), wb.transcripts.load({"messages": run})
    assert logged.unreadable == [] and len(logged) == len(alone) == 3
    assert [row["receipt"] for row in logged.rows()] == ["Inhalt 0 ✓", "Inhalt 1 ✓", "Inhalt 2 ✓"]
    assert [row["receipt"] for row in alone.rows()] == [row["receipt"] for row in logged.rows()]
    # the key was only for pairing: the model sent no id
    assert column(logged, "model_call_id") == column(alone, "model_call_id") == [None] * 3
    assert column(logged, "message_id") == ["c1", "c3", "c5"]


def test_each_request_and_response_object_alone():
    pairs = chat_pairs()
    request = pairs[2]["request"]  # a chat request object: its messages hold four answered calls
    assert wb.transcripts.detect_format(request) == "openai_chat"
    assert len(wb.transcripts.load(request)) == 4
    anthropic = json.loads((DATA / "anthropic_server_tools.json").read_text(encoding="utf-8"))
    assert wb.transcripts.detect_format(anthropic[0]["response"]) == "anthropic"
    assert len(wb.transcripts.load(anthropic[0]["response"])) == 6
    assert wb.transcripts.detect_format(anthropic[1]["request"]) == "anthropic"
    assert len(wb.transcripts.load(anthropic[1]["request"])) == 6
    responses = json.loads(
        (DATA / "openai_responses_server_tools.json").read_text(encoding="utf-8")
    )
    request = {"model": "gpt-5", "tools": responses["tools"], "input": responses["output"][:5]}
    assert wb.transcripts.detect_format(request) == "openai_responses"
    assert len(wb.transcripts.load(request)) == 3


def test_a_responses_run_logged_as_pairs_with_previous_response_id():
    # the second request sends only the new item: the output of the call in the first response
    call = {
        "type": "function_call",
        "id": "fc_1",
        "call_id": "call_1",
        "name": "get_order",
        "arguments": '{"order_id": "A-1"}',
    }
    pairs = [
        {
            "request": {"model": "gpt-5", "input": "Where is order A-1?"},
            "response": {"id": "resp_1", "object": "response", "output": [call]},
        },
        {
            "request": {
                "model": "gpt-5",
                "previous_response_id": "resp_1",
                "input": [
                    {
                        "type": "function_call_output",
                        "call_id": "call_1",
                        "output": "shipped on Monday",
                    }
                ],
            },
            "response": {
                "id": "resp_2",
                "object": "response",
                "output": [
                    {
                        "type": "message",
                        "role": "assistant",
                        "content": [{"type": "output_text", "text": "It shipped on Monday."}],
                    }
                ],
            },
        },
    ]
    history = wb.transcripts.load(pairs)
    assert history.format == "openai_responses" and history.unreadable == []
    [row] = history.rows()
    assert row["receipt"] == "shipped on Monday" and row["executed_by"] == "client"


def test_anthropic_server_and_mcp_tool_calls_are_rows_run_by_the_server():
    with pytest.warns(TranscriptWarning, match="2 part"):
        history = load("anthropic_server_tools.json")
    frame = history.to_dataframe()
    assert list(frame["tool"]) == [
        "web_search",
        "web_search",
        "code_execution",
        "search_docs",
        "search_docs",
        "save_note",
        "send_email",
    ]
    assert list(frame["executed_by"]) == ["server"] * 5 + ["client"] * 2
    assert column(history, "status") == [
        "success",
        "error",
        "success",
        "success",
        "error",
        "success",
        None,
    ]
    rows = {row["model_call_id"]: row for row in history.rows()}
    search = rows["srvtoolu_01WYG3ziw53XMcoyKL4XcZmE"]
    assert search["arguments"] == {"query": "Zürich population 2024"}
    assert json.loads(search["receipt"])[0]["title"] == "Bevölkerung \u2013 Stadt Zürich"
    limit = rows["srvtoolu_01Bq9W3mJ8hYk5qVnN2pZ7xT"]
    assert json.loads(limit["receipt"])["error_code"] == "max_uses_exceeded"
    code = rows["srvtoolu_01A2b3C4d5E6f7G8h9I0jK1L"]
    assert json.loads(code["receipt"])["stdout"] == "4.97\n"
    docs = rows["mcptoolu_014Q35RayjACSWkSj4X2yov1"]
    assert docs["receipt"] == "Style guide: write numbers with thin spaces (447 082)."
    assert "run by the MCP server 'docs-server'" in docs["warnings"]
    # the provider's own tools have no schema here; the client's are checked against theirs
    assert list(frame["preflight"]) == ["no_schema"] * 5 + ["accepted", "unknown_tool"]
    assert sorted(history.tools) == ["save_note"]
    # what was not read is listed, never dropped
    assert [str(item) for item in history.unreadable] == [
        "exchange 1 response, block 2: a tool result for call id 'srvtoolu_unknownXYZ' that "
        "no call sent",
        "exchange 1 response, block 3: a 'advisor_note' block, which this reader does not "
        "know, not read",
    ]


def test_responses_server_side_calls_are_rows_run_by_the_server():
    with pytest.warns(TranscriptWarning, match="1 part"):
        history = load("openai_responses_server_tools.json")
    frame = history.to_dataframe()
    assert list(frame["tool"]) == [
        "web_search",
        "web_search",
        "ask_question",
        "ask_question",
        "code_interpreter",
        "code_interpreter",
        "file_search",
        "tool_search",
        "get_order",
    ]
    assert list(frame["executed_by"]) == ["server"] * 8 + ["client"]
    assert column(history, "status") == [
        "success",
        None,
        "success",
        "error",
        "success",
        None,
        None,
        "success",
        None,
    ]
    rows = {row["model_call_id"]: row for row in history.rows()}
    assert rows["mcp_68f1a4"]["receipt"] == (
        "The spec defines two transports: stdio and Streamable HTTP."
    )
    assert (
        rows["mcp_68f1a4"]["arguments"]["repoName"] == "modelcontextprotocol/modelcontextprotocol"
    )
    assert rows["mcp_68f1a5"]["receipt"] == "Repository nope/nope not found"
    assert rows["ci_68f1a6"]["receipt"] == "1.4142135623730951\n"
    assert rows["ci_68f1a6"]["arguments"]["code"] == "import math\nprint(math.sqrt(2))"
    assert json.loads(rows["ws_68f1a1"]["receipt"]) == [
        {"type": "url", "url": "https://www.sbb.ch/de"}
    ]
    # a call whose result the log does not hold says why
    assert any("includes it only on request" in w for w in rows["ci_68f1a7"]["warnings"])
    assert json.loads(rows["call_ts9"]["receipt"])[0]["name"] == "get_order"
    [unknown] = history.unreadable
    assert unknown.where == "item 12" and "'hologram_call'" in unknown.reason


def test_a_call_to_a_tool_the_run_never_offered_is_unknown_tool():
    history = load("openai_chat_pairs.jsonl")
    rows = {row["model_call_id"]: row for row in history.rows()}
    verdicts = dict(
        zip(column(history, "model_call_id"), column(history, "preflight"), strict=True)
    )
    assert verdicts["call_Tr4"] == "unknown_tool"
    assert verdicts["call_Wz1"] == "accepted"
    [event] = [e for e in rows["call_Tr4"]["events"] if e["type"] == wb.transcripts.IMPORTED]
    assert "'translate' is not in the run's tools" in event["preflight_problem"]
    # with no tool list at all, nothing is known about any name
    assert set(column(load("openai_chat_response.json"), "preflight")) == {"no_schema"}


def rpc(**fields) -> str:
    return json.dumps({"jsonrpc": "2.0", **fields})


def test_only_tool_requests_pair_in_an_mcp_log(tmp_path):
    # a client that reconnects sends `initialize` with id 0 again before the first answer came;
    # then a tool call reuses an id a `ping` had
    init = {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "claude-ai", "version": "0.1.0"},
    }
    server = {
        "protocolVersion": "2025-06-18",
        "capabilities": {"tools": {}},
        "serverInfo": {"name": "notes", "version": "1.0.0"},
    }
    lines = [
        rpc(id=0, method="initialize", params=init),
        rpc(id=0, method="initialize", params=init),
        rpc(id=0, result=server),
        rpc(id=0, result=server),
        rpc(method="notifications/initialized"),
        rpc(id=1, method="ping"),
        rpc(id=1, result={}),
        rpc(id=1, method="tools/call", params={"name": "read_note", "arguments": {"name": "a"}}),
        rpc(id=1, result={"content": [{"type": "text", "text": "note a"}], "isError": False}),
        rpc(id=7, result={"content": [{"type": "text", "text": "orphan"}]}),
    ]  # fmt: skip
    path = tmp_path / "mcp-server-notes.log.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with pytest.warns(TranscriptWarning, match="1 part"):
        history = wb.transcripts.load(path)
    [row] = history.rows()
    assert row["tool"] == "read_note" and row["receipt"] == "note a"
    # a result no request in the log asked for is still listed, with its own id
    [orphan] = history.unreadable
    assert orphan.where == "line 10"
    assert orphan.reason == "a tool result for call id '7' that no call sent"


def test_gemini_requests_and_responses_pair_calls_by_id_or_by_name():
    history = load("gemini_pairs.json")
    assert wb.transcripts.detect_format(DATA / "gemini_pairs.json") == "gemini"
    assert history.format == "gemini" and history.unreadable == []
    frame = history.to_dataframe()
    assert list(frame["tool"]) == [
        "get_exchange_rate",
        "get_exchange_rate",
        "code_execution",
        "convert",
    ]
    assert list(frame["executed_by"]) == ["client", "client", "server", "client"]
    # no ids in the first turn: each response answers the oldest call of its name
    assert list(frame["receipt"]) == [
        '{"rate": 1.0712, "as_of": "2025-10-31"}',
        "JPY rates are not available on weekends",  # a lone "error" is the text, flagged
        "267.8\n",
        '{"result": 267.8}',
    ]
    assert list(frame["rule"]) == ["json_value", "flagged_error", "plain_text", "json_value"]
    assert list(frame["message_id"]) == [
        "model turn 0",
        "model turn 0",
        "model turn 1",
        "model turn 1",
    ]
    assert frame["model_call_id"].iloc[3] == "fc-7f3a"
    # OpenAPI type names ("OBJECT") are read as JSON Schema: "1.0712" is coerced to a number
    assert list(frame["preflight"]) == ["accepted", "accepted", "no_schema", "coerced"]
    # the request and the response alone
    pairs = json.loads((DATA / "gemini_pairs.json").read_text(encoding="utf-8"))
    assert len(wb.transcripts.load(pairs[2]["request"])) == 4
    assert wb.transcripts.detect_format(pairs[0]["response"]) == "gemini"
    assert len(wb.transcripts.load(pairs[0]["response"])) == 2


@pytest.mark.parametrize(
    ("name", "format"),
    [
        ("openai_chat.json", "openai_chat"),
        ("openai_chat_legacy.json", "openai_chat"),
        ("anthropic.json", "anthropic"),
        ("openai_responses.json", "openai_responses"),
        ("openai_responses_server_tools.json", "openai_responses"),
    ],
)
def test_a_real_run_logged_as_pairs_reads_like_the_run_sent_once(name, format):
    document = json.loads((DATA / name).read_text(encoding="utf-8"))
    pairs = as_pairs(format, document)
    assert len(pairs) > 2
    with warnings.catch_warnings():  # the unreadable parts are compared below
        warnings.simplefilter("ignore", TranscriptWarning)
        once, logged = load(name), wb.transcripts.load(pairs, format=format)
    same = ("tool", "receipt", "status", "kind", "model_call_id", "executed_by", "raw_args")
    assert [{k: row[k] for k in same} for row in logged.rows()] == [
        {k: row[k] for k in same} for row in once.rows()
    ]
    # a part no reader knows is met in every request that repeats it, and listed once
    assert [item.reason for item in logged.unreadable] == [item.reason for item in once.unreadable]


def test_a_result_no_call_sent_is_listed_once_in_a_run_logged_as_pairs():
    pairs = chat_pairs()
    for pair in pairs:  # every request from the second on repeats the stray answer
        messages = pair["request"]["messages"]
        if len(messages) > 2:
            messages.insert(2, {"role": "tool", "tool_call_id": "call_nobody", "content": "?"})
    with pytest.warns(TranscriptWarning):
        history = wb.transcripts.load(pairs)
    assert [item.reason for item in history.unreadable] == [
        "a tool result for call id 'call_nobody' that no call sent"
    ]


def test_legacy_calls_beside_tool_calls_keep_their_own_place_in_a_run_logged_as_pairs():
    run: list[dict] = [{"role": "user", "content": "Zwei Runden."}]
    for number in range(2):
        tool_call = {"id": f"t{number}", "function": {"name": "lookup", "arguments": "{}"}}
        legacy = {"name": "read_file", "arguments": json.dumps({"path": f"d{number}"})}
        run.append({"role": "assistant", "tool_calls": [tool_call], "function_call": legacy})
        run.append({"role": "tool", "tool_call_id": f"t{number}", "content": f"gefunden {number}"})
        run.append({"role": "function", "name": "read_file", "content": f"Inhalt {number}"})
    alone = wb.transcripts.load({"messages": run})
    logged = wb.transcripts.load(as_pairs("openai_chat", {"messages": run}))
    receipts = ["gefunden 0", "Inhalt 0", "gefunden 1", "Inhalt 1"]
    assert [row["receipt"] for row in alone.rows()] == receipts
    assert [row["receipt"] for row in logged.rows()] == receipts


def test_a_chat_result_of_content_blocks_keeps_their_text_and_names_the_others():
    run = {
        "messages": [
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": "c1",
                        "type": "function",
                        "function": {"name": "look", "arguments": "{}"},
                    }
                ],
            },
            {
                "role": "tool",
                "tool_call_id": "c1",
                "content": ["first", {"type": "text", "text": "second"}, {"type": "image_url"}, 7],
            },
        ]
    }
    [row] = wb.transcripts.load(run, "openai_chat").rows()
    assert row["receipt"] == "first\nsecond"
    assert row["warnings"] == [
        "content block 2 (image_url) is not text and is not in the receipt",
        "content block 3 (int) is not text and is not in the receipt",
    ]


def test_a_code_interpreter_receipt_is_its_logs_and_names_every_other_output():
    item = {
        "id": "ci1",
        "type": "code_interpreter_call",
        "status": "completed",
        "code": "print(1)",
        "container_id": "cntr_1",
        "outputs": [
            {"type": "logs", "logs": "1\n"},
            {"type": "image", "url": "u"},
            "bare",
            {"type": "logs", "logs": "2\n"},
        ],
    }
    [row] = wb.transcripts.load({"output": [item]}, "openai_responses").rows()
    assert row["receipt"] == "1\n\n2\n"  # a bare string is no log
    assert row["warnings"] == [
        "output 1 (image) is not text and is not in the receipt",
        "output 2 (str) is not text and is not in the receipt",
    ]
