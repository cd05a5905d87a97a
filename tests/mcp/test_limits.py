"""Every request a connection makes has a limit given to it (``timeout=``): past it the request
is cancelled (the server receives ``notifications/cancelled``) and the error names what timed
out, on which server, after how long. Shown with a server of the test's own that never answers
(a process over stdio), and for the handshake of ``connect`` and ``connect_async`` alike."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import workbench as wb
from tests.conftest import wait_until
from tests.mcp import misbehaving_server
from tests.mcp.test_reading import REPO
from workbench import mcp as wbmcp


@pytest.fixture
def silent(tmp_path: Path) -> Iterator[tuple[wbmcp.Connection, Path]]:
    with misbehaving_server.connected(tmp_path) as (_, conn, log):
        yield conn, log


def cancelled(log: Path, method: str) -> bool:
    """True once the server received ``notifications/cancelled`` for its ``method`` request."""
    received = misbehaving_server.received(log)
    ids = {message.get("id") for message in received if message.get("method") == method}
    return any(
        message.get("method") == "notifications/cancelled" and message["params"]["requestId"] in ids
        for message in received
    )


def test_a_read_past_its_limit_is_a_timeout_envelope_naming_it_and_is_cancelled(silent):
    conn, log = silent
    read = conn.read("silent://a", timeout=1.5)
    assert not read.ok and read.error.kind == "timeout"
    message = read.error.message
    assert "resources/read of 'silent://a'" in message and "within 1.5 s" in message
    assert "the request was cancelled" in message and conn.target in message
    assert wait_until(lambda: cancelled(log, "resources/read"))


@pytest.mark.parametrize(
    ("ask", "method", "named"),
    [
        (lambda conn: conn.prompt("any", timeout=1.5), "prompts/get", "prompts/get of 'any'"),
        (
            lambda conn: conn.subscribe("silent://a", timeout=1.5),
            "resources/subscribe",
            "resources/subscribe of 'silent://a'",
        ),
    ],
)
def test_a_request_past_its_limit_raises_a_named_timeout_and_is_cancelled(
    silent, ask: Any, method: str, named: str
):
    conn, log = silent
    with pytest.raises(TimeoutError) as raised:
        ask(conn)
    assert named in str(raised.value) and "within 1.5 s" in str(raised.value)
    assert isinstance(raised.value, wbmcp.RequestTimedOut) and raised.value.timeout == 1.5
    assert wait_until(lambda: cancelled(log, method))
    assert conn.alive  # only the request was given up


def test_a_limit_must_be_a_positive_number(silent):
    conn, _ = silent
    for wrong in (0, -1, "5", True):
        with pytest.raises(ValueError, match="timeout must be a positive number"):
            conn.prompts(timeout=wrong)


def test_connect_gives_up_a_handshake_past_its_startup_timeout(tmp_path):
    tools = wb.Registry(history=":memory:", artifacts=tmp_path / "artifacts")
    argv = misbehaving_server.command(tmp_path / "received.jsonl", mute=True)
    with pytest.raises(ConnectionError, match="did not complete the MCP handshake within 2 s"):
        wbmcp.connect(argv, tools=tools, startup_timeout=2, cwd=REPO)
    assert len(tools) == 0


@pytest.mark.anyio
async def test_connect_async_gives_up_a_handshake_past_its_startup_timeout(tmp_path):
    tools = wb.Registry(history=":memory:", artifacts=tmp_path / "artifacts")
    argv = misbehaving_server.command(tmp_path / "received.jsonl", mute=True)
    with pytest.raises(ConnectionError, match="did not complete the MCP handshake within 2 s"):
        # The outer limit only keeps a regression from hanging the suite.
        await asyncio.wait_for(
            wbmcp.connect_async(argv, tools=tools, startup_timeout=2, cwd=REPO), 60
        )
    assert len(tools) == 0
