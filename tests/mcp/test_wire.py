"""A reply that cannot be read, or that comes under an id no request has, fails the call it must
have answered at once (not after its whole time limit) and leaves a trace on the connection's
log. Shown with a server of the test's own that misbehaves so, spoken to over stdio."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

import workbench as wb
from tests.mcp import misbehaving_server
from workbench import mcp as wbmcp


@pytest.fixture
def broken(tmp_path: Path) -> Iterator[tuple[wb.Registry, wbmcp.Connection]]:
    with misbehaving_server.connected(tmp_path) as (tools, conn, _):
        yield tools, conn


def transport_log(conn: wbmcp.Connection) -> list[str]:
    return [str(entry["data"]) for entry in conn.log if entry["logger"] == "transport"]


def test_a_reply_that_is_not_json_fails_its_call_at_once(broken):
    tools, conn = broken
    assert tools.spec("garbled").timeout == 120.0  # the budget the call would otherwise wait out
    call = tools.invoke("garbled", {})
    envelope = call.wait(30)
    error = envelope.error
    assert error is not None and error.kind == "unavailable" and not error.retryable
    assert "could not be read as JSON-RPC" in error.message and "not JSON-RPC" in error.message
    assert "tools/call" in error.message
    assert any("not JSON-RPC" in line for line in transport_log(conn))
    assert conn.alive and tools.invoke("garbled", {}).wait(30).error is not None  # still serving


def test_a_reply_under_another_id_fails_its_call_at_once_and_is_logged(broken):
    tools, conn = broken
    call = tools.invoke("misnumbered", {})
    envelope = call.wait(30)
    error = envelope.error
    assert error is not None and error.kind == "unavailable" and not error.retryable
    assert "which no request of this client has" in error.message
    assert any("which no request of this client has" in line for line in transport_log(conn))
