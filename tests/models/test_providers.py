"""wb.run against each provider's API, through the official SDKs, with no network: a scripted
server on 127.0.0.1 answers from recorded provider replies (tests/data/models/). What the SDK
sends is read back from the server: the tools as exported, the results as ``call.receipt``."""

from __future__ import annotations

import json

import pytest

import workbench as wb
from tests.models.support import add_note_tools, script
from workbench.models.local_server import ScriptedServer
from workbench.models.openai_responses import flatten


@pytest.fixture
def notes(tools):
    add_note_tools(tools)
    return tools


def serve(name: str) -> ScriptedServer:
    return ScriptedServer(script(name)).start()


@pytest.fixture
def server(request):
    """The scripted server answering from the recorded replies named by the parameter."""
    started = serve(request.param)
    yield started
    started.stop()


def tool_messages(body: dict) -> list[dict]:
    return [message for message in body["messages"] if message.get("role") == "tool"]


def assert_round_trip(run: wb.Run) -> None:
    """wb.transcripts.load reads the run's transcript back to the very calls and receipts."""
    imported = wb.transcripts.load(json.loads(json.dumps(run.transcript)))
    rows = imported.rows()
    assert [row["tool"] for row in rows] == [call.tool_name for call in run.calls]
    assert [row["model_call_id"] for row in rows] == [call.model_call_id for call in run.calls]
    assert [row["raw_args"] for row in rows] == [call.raw_args for call in run.calls]
    assert [row["receipt"] for row in rows] == [result.text for result in run.results]
    assert {row["run_id"] for row in rows} == {run.id}
    recorded = run.history
    assert sorted(recorded["call_id"]) == sorted(call.id for call in run.calls)
    assert set(recorded["run_id"]) == {run.id}


@pytest.mark.parametrize("server", ["openai_chat_parallel"], indirect=True)
def test_openai_chat_parallel_calls_and_malformed_arguments(notes, server):
    run = wb.run("openai:gpt-4.1", notes, "Find my invoices", base_url=server.openai_base_url)
    run.wait(timeout=30)
    assert run.state == "finished" and run.end_reason == "answered", run.error

    first, second = (received.body for received in server.requests)
    assert first["tools"] == notes.export("openai-strict")
    assert first["messages"] == [{"role": "user", "content": "Find my invoices"}]
    search, read = run.calls
    assert search.tool_name == "search_notes" and search.envelope.ok
    assert [str(c) for c in search.coercions if c.rule != "parsed_json_arguments"]
    assert read.envelope.error.kind.value == "invalid_args"  # the JSON was cut short
    assert "not valid JSON" in read.receipt
    sent = tool_messages(second)
    assert [m["tool_call_id"] for m in sent] == [
        "call_Qm3RkX8vYt2LhN0pWb7sZc1D",
        "call_Vn8TgH2kLp5QwE9rYx4mBa6J",
    ]
    assert [m["content"] for m in sent] == [search.receipt, read.receipt]
    assert [turn.stop_reason for turn in run.turns] == ["tool_calls", "stop"]
    assert [turn.usage.total_tokens for turn in run.turns] == [272, 418]
    assert run.turns[1].text.startswith("I found 2 notes")
    assert_round_trip(run)


@pytest.mark.parametrize("server", ["openai_chat_parallel"], indirect=True)
def test_cost_per_turn_from_the_reported_usage(notes, server):
    run = wb.run(
        "openai:gpt-4.1", notes, "x", base_url=server.openai_base_url, price=(2.0, 8.0)
    ).wait(timeout=30)
    assert [turn.usage.cost for turn in run.turns] == [
        pytest.approx((214 * 2 + 58 * 8) / 1e6),
        pytest.approx((391 * 2 + 27 * 8) / 1e6),
    ]
    assert run.usage.input_tokens == 605 and run.usage.output_tokens == 85


@pytest.mark.parametrize("server", ["openai_chat_refusal"], indirect=True)
def test_openai_refusal_ends_the_run_and_is_kept(notes, server):
    run = wb.run("openai:gpt-4o", notes, "delete everyone's files", base_url=server.openai_base_url)
    run.wait(timeout=30)
    assert run.end_reason == "answered" and run.calls == []
    assert run.turns[0].refusal == "I'm sorry, I can't help with deleting other people's files."
    assert run.transcript["messages"][-1]["refusal"] == run.turns[0].refusal


@pytest.mark.parametrize("server", ["openai_chat_stream"], indirect=True)
def test_openai_chat_streams_text_and_assembles_tool_calls(notes, server):
    seen: list[str] = []
    run = wb.run(
        "openai:gpt-4.1-mini",
        notes,
        "What is the budget?",
        base_url=server.openai_base_url,
        stream=True,
    )
    run.subscribe(lambda r: seen.append(r.streaming_text))
    run.wait(timeout=30)
    assert run.end_reason == "answered", run.error
    first, second = (received.body for received in server.requests)
    assert first["stream"] is True and first["stream_options"] == {"include_usage": True}
    assert [(c.tool_name, c.raw_args) for c in run.calls] == [
        ("search_notes", '{"query":"budget"}'),
        ("read_note", '{"name":"budget.txt"}'),
    ]
    assert [m["content"] for m in tool_messages(second)] == [c.receipt for c in run.calls]
    assert "Let me " in seen and "Let me search." in seen  # text shown as it arrived
    assert run.turns[1].text == "The budget is 1200." and run.turns[1].usage.input_tokens == 331
    assert_round_trip(run)


@pytest.mark.parametrize("server", ["openai_responses"], indirect=True)
def test_openai_responses_function_calls_and_incomplete_stop(notes, server):
    run = wb.run(
        "openai-responses:gpt-4.1", notes, "When is my flight?", base_url=server.openai_base_url
    ).wait(timeout=30)
    assert run.end_reason == "answered", run.error
    first, second = (received.body for received in server.requests)
    assert first["tools"] == flatten(notes.export("openai-strict"))
    assert first["store"] is False
    outputs = [item for item in second["input"] if item.get("type") == "function_call_output"]
    assert [(o["call_id"], o["output"]) for o in outputs] == [
        (c.model_call_id, c.receipt) for c in run.calls
    ]
    assert run.turns[1].stop_reason == "max_output_tokens"
    assert run.turns[1].text == "Your travel note says the flight leaves at"
    assert_round_trip(run)


@pytest.mark.parametrize("server", ["anthropic"], indirect=True)
def test_anthropic_tool_use_with_a_denied_call(notes, server):
    run = wb.run("anthropic:claude-sonnet-4-6", notes, "Tidy up", base_url=server.url)
    run.wait(timeout=30)
    assert run.state == "calling"  # delete_note waits for the person
    (asking,) = [call for call in run.calls if call.pending_action == "approval"]
    asking.deny("keep it")
    run.wait(timeout=30)
    assert run.end_reason == "answered", run.error
    first, second = (received.body for received in server.requests)
    assert first["tools"] == notes.export("anthropic") and first["max_tokens"] == 4096
    search, delete = run.calls
    assert search.coercions and search.envelope.ok  # "2" → 2
    assert delete.envelope.error.kind.value == "user_denied"
    (results,) = [
        m for m in second["messages"] if m["role"] == "user" and m is not second["messages"][0]
    ]
    assert results["content"] == [
        {"type": "tool_result", "tool_use_id": search.model_call_id, "content": search.receipt},
        {
            "type": "tool_result",
            "tool_use_id": delete.model_call_id,
            "content": delete.receipt,
            "is_error": True,
        },
    ]
    assert [turn.stop_reason for turn in run.turns] == ["tool_use", "end_turn"]
    assert_round_trip(run)


@pytest.mark.parametrize("server", ["anthropic_refusal"], indirect=True)
def test_anthropic_refusal_stop_reason(notes, server):
    run = wb.run("anthropic:claude-sonnet-4-6", notes, "x", base_url=server.url).wait(timeout=30)
    assert run.turns[0].stop_reason == "refusal" and run.turns[0].refusal == "refusal"
    assert run.end_reason == "answered"


@pytest.mark.parametrize("server", ["gemini"], indirect=True)
def test_gemini_function_calls_and_a_malformed_call_stop(notes, server):
    run = wb.run("gemini:gemini-2.5-flash", notes, "Any recipes?", base_url=server.url)
    run.wait(timeout=30)
    assert run.end_reason == "answered", run.error
    first, second = (received.body for received in server.requests)
    assert server.requests[0].path.endswith("/models/gemini-2.5-flash:generateContent")
    assert first["tools"] == [{"functionDeclarations": notes.export("gemini")}]
    responses = [part["functionResponse"] for part in second["contents"][-1]["parts"]]
    assert [r["response"] for r in responses] == [{"output": c.receipt} for c in run.calls]
    assert run.calls[1].coercions  # lines "3" → 3
    # the model's own turn goes back as it came, thought signature included
    assert second["contents"][1]["parts"][0]["thoughtSignature"] == (
        "CiQBY7i9WaSCh5rQY01g8KbkmYyEUj8KO4kn13hvI8r6TOw="
    )
    assert run.turns[1].stop_reason == "MALFORMED_FUNCTION_CALL"
    assert run.turns[0].usage.input_tokens == 161
    assert wb.transcripts.detect_format(run.transcript) == "gemini"
    assert_round_trip(run)


@pytest.mark.parametrize(
    ("model", "variables"),
    [
        ("openai:gpt-4.1", ["OPENAI_API_KEY"]),
        ("openai-responses:gpt-4.1", ["OPENAI_API_KEY"]),
        ("anthropic:claude-sonnet-4-6", ["ANTHROPIC_API_KEY"]),
        ("gemini:gemini-2.5-flash", ["GEMINI_API_KEY", "GOOGLE_API_KEY"]),
    ],
)
def test_no_key_names_the_environment_variable(notes, monkeypatch, model, variables):
    for name in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    with pytest.raises(wb.models.MissingKey) as raised:
        wb.run(model, notes, "hello")
    assert all(name in str(raised.value) for name in variables)


def test_a_model_string_without_a_known_provider_is_a_clear_error(notes):
    with pytest.raises(ValueError, match="provider:model"):
        wb.run("gpt-4.1", notes, "hello")


def test_a_provider_error_fails_the_run_and_says_why(notes):
    with ScriptedServer({"openai_chat": []}) as empty:
        run = wb.run("openai:m", notes, "hello", base_url=empty.openai_base_url).wait(timeout=30)
    assert run.state == "failed" and run.end_reason == "error"
    assert "no reply left for openai_chat" in run.error


@pytest.mark.parametrize("server", ["anthropic_refusal"], indirect=True)
def test_an_sdk_client_as_the_model(notes, server):
    import anthropic

    client = anthropic.Anthropic(base_url=server.url, api_key="sk-test", max_retries=0)
    run = wb.run(client, notes, "x", model_name="claude-sonnet-4-6").wait(timeout=30)
    assert run.provider == "anthropic" and run.end_reason == "answered", run.error
    headers = server.requests[0].headers  # this SDK sends the key as x-api-key or a bearer token
    assert "sk-test" in headers.get("x-api-key", "") + headers.get("authorization", "")
    with pytest.raises(ValueError, match="model_name"):
        wb.run(client, notes, "x")


def test_a_missing_sdk_names_the_extra_that_installs_it():
    from workbench.models._sdk import sdk

    with pytest.raises(ModuleNotFoundError, match=r"pip install 'tool-workbench\[gemini\]'"):
        sdk("google.genai_not_installed_here", "gemini")
