"""A server's sampling request (``trigger-sampling-request`` of the reference
``server-everything``) answered the way the person chose: by a model (here the scripted
stand-in of OpenAI's API on 127.0.0.1, which ``wb.run`` reaches through ``base_url``) once the
person allowed it, or by the person on a card. Each request is a call recorded in the
connection's history; a denied one reaches the server as an error and no model is asked."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import workbench as wb
from tests.conftest import wait_until
from tests.mcp.support import node_tool
from workbench import mcp as wbmcp
from workbench.models.local_server import ScriptedServer

REPLY = "Tides follow the moon."


def chat_reply(text: str) -> dict[str, object]:
    return {
        "json": {
            "id": "chatcmpl-1",
            "object": "chat.completion",
            "created": 0,
            "model": "scripted",
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": text},
                    "finish_reason": "stop",
                }
            ],
            "usage": {"prompt_tokens": 5, "completion_tokens": 5, "total_tokens": 10},
        }
    }


def sample(tools: wb.Registry, conn: wbmcp.Connection) -> tuple[wb.Call, wb.Call]:
    """Start the sampling tool; returns its call and the sampling request's call."""
    call = tools.invoke("trigger_sampling_request", {"prompt": "tides", "maxTokens": 50})
    assert wait_until(lambda: len(conn.sampling_requests) == 1, 30)
    request = conn.sampling_requests[0]
    assert wait_until(lambda: request.pending_action is not None, 30)
    return call, request


@contextlib.contextmanager
def scripted_model(monkeypatch) -> Iterator[tuple[ScriptedServer, dict[str, Any]]]:
    """The scripted stand-in of OpenAI's API, and the ``sampling=`` that names it."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    with ScriptedServer({"openai_chat": [chat_reply(REPLY)]}) as model:
        yield model, {"model": "openai:scripted", "base_url": model.openai_base_url}


def everything(registry: wb.Registry, sampling: Any) -> wbmcp.Connection:
    return wbmcp.connect([node_tool("mcp-server-everything")], tools=registry, sampling=sampling)


@pytest.fixture
def registry(tmp_path: Path) -> wb.Registry:
    tools = wb.Registry(history=tmp_path / "history.sqlite", artifacts=tmp_path / "artifacts")
    yield tools
    tools.history.close()


def test_a_model_answers_once_the_person_allows(registry, monkeypatch):
    with scripted_model(monkeypatch) as (model, options), everything(registry, options) as conn:
        assert "mcp_sampling" not in conn.names  # never offered to a model
        call, request = sample(registry, conn)
        assert model.requests == []  # nothing is sent before the person allows
        request.approve()
        assert call.wait(60).ok
    sent = model.requests[0].body["messages"]
    assert REPLY in call.receipt and '"model": "openai:scripted"' in call.receipt
    asked = "Resource trigger-sampling-request context: tides"
    assert sent[-1] == {"role": "user", "content": asked}
    assert sent[0] == {"role": "system", "content": "You are a helpful test server."}
    rows = {row["tool"]: row for row in registry.history.rows()}
    assert rows["mcp_sampling"]["state"] == "succeeded"
    assert rows["trigger_sampling_request"]["state"] == "succeeded"


def test_a_denied_request_reaches_the_server_as_an_error_and_asks_no_model(registry, monkeypatch):
    with scripted_model(monkeypatch) as (model, options), everything(registry, options) as conn:
        call, request = sample(registry, conn)
        request.deny("not now")
        call.wait(60)
    assert model.requests == []
    assert call.state == "failed" and "not sampled" in call.receipt
    states = {row["tool"]: row["state"] for row in registry.history.rows()}
    assert states["mcp_sampling"] == "failed"


def test_the_person_writes_the_reply_on_a_card(registry):
    with everything(registry, "person") as conn:
        call, request = sample(registry, conn)
        assert request.arguments["messages"][0]["text"].endswith("context: tides")
        request.fulfil("Written by hand.")
        assert call.wait(60).ok
    assert "Written by hand." in call.receipt and '"model": "person"' in call.receipt


def test_without_sampling_the_server_cannot_ask(registry):
    with everything(registry, None) as conn:
        assert "trigger_sampling_request" not in conn.names
    with pytest.raises(TypeError, match="unknown options sampler"):
        wbmcp.connect([node_tool("mcp-server-everything")], tools=registry, sampler="person")


def test_deny_answers_a_persons_sampling_request_at_once(registry):
    with everything(registry, "person") as conn:
        call, request = sample(registry, conn)
        assert request.pending_action == "result"  # the card waits for a reply or a Deny
        request.deny("not today")
        # The server hears the refusal at once (it would otherwise wait out its own 60 s).
        envelope = call.wait(30)
    assert request.envelope.error.kind == "user_denied"
    assert not request.warnings  # answered, not set aside
    assert envelope.error is not None and "not sampled" in envelope.error.message
    assert "not today" in envelope.error.message
    kinds = {row["tool"]: row["kind"] for row in registry.history.rows()}
    assert kinds["mcp_sampling"] == "user_denied"


def test_an_sdk_server_that_samples_the_handshake_way_is_answered_under_auto(registry):
    from tests.mcp import sdk_servers
    from tests.mcp.test_reading import REPO

    # SDK 2.x servers negotiate 2026-07-28 under mode="auto", where their create_message has no
    # back-channel; a connection that answers sampling uses the handshake instead.
    with wbmcp.connect(
        sdk_servers.command("sampler"), tools=registry, sampling="person", cwd=REPO
    ) as conn:
        assert conn.protocol_version == "2025-11-25"
        call = registry.invoke("ask", {"topic": "tides"})
        assert wait_until(lambda: len(conn.sampling_requests) == 1, 30)
        request = conn.sampling_requests[0]
        assert wait_until(lambda: request.pending_action == "result", 30)
        request.fulfil("high tide at noon")
        envelope = call.wait(30)
    assert envelope.ok and "the model said: high tide at noon" in (call.receipt or "")
