"""Remote servers behind a token, over streamable HTTP and the legacy SSE transport, started by
the test on 127.0.0.1 (uvicorn on a free port): ``headers=`` reaches them, and a server that
refuses the connection is named with what it wants, not a bare HTTP error."""

from __future__ import annotations

import socket
import threading
from collections.abc import Callable, Iterator
from typing import Any

import pytest
import uvicorn
from mcp.server.mcpserver import MCPServer

import workbench as wb
from workbench import mcp as wbmcp
from workbench.mcp import demo

TOKEN = "s3cret-token"

App = Callable[..., Any]


def bearer_only(app: App, token: str) -> App:
    """``app`` answering 401 to any HTTP request without ``Authorization: Bearer <token>``."""
    expected = f"Bearer {token}".encode()

    async def guarded(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "http" and dict(scope["headers"]).get(b"authorization") != expected:
            await send(
                {
                    "type": "http.response.start",
                    "status": 401,
                    "headers": [(b"www-authenticate", b"Bearer"), (b"content-length", b"0")],
                }
            )
            await send({"type": "http.response.body", "body": b""})
            return
        await app(scope, receive, send)

    return guarded


def free_socket() -> tuple[socket.socket, str]:
    """A socket bound to a free port of 127.0.0.1, and its base URL (known before serving)."""
    bound = socket.socket()
    bound.bind(("127.0.0.1", 0))
    return bound, f"http://127.0.0.1:{bound.getsockname()[1]}"


class Running:
    """An ASGI app served by uvicorn in a thread on a free port of 127.0.0.1 (or ``bound``)."""

    def __init__(self, app: App, bound: socket.socket | None = None) -> None:
        self.socket = bound or free_socket()[0]
        self.port = self.socket.getsockname()[1]
        config = uvicorn.Config(app, log_level="warning", lifespan="on")
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(
            target=self.server.run, kwargs={"sockets": [self.socket]}, daemon=True
        )
        self.thread.start()
        deadline = threading.Event()
        while not self.server.started and self.thread.is_alive():
            deadline.wait(0.01)

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.port}{path}"

    def stop(self) -> None:
        self.server.should_exit = True
        self.thread.join(10)
        self.socket.close()


@pytest.fixture
def protected_http(tmp_path) -> Iterator[Running]:
    server = wbmcp.build_server(demo.registry(tmp_path))
    running = Running(bearer_only(server.streamable_http_app(host="127.0.0.1"), TOKEN))
    yield running
    running.stop()


def adder() -> MCPServer:
    served = MCPServer("sse-adder")

    @served.tool()
    def add(a: int, b: int) -> int:
        """Add two integers."""
        return a + b

    return served


@pytest.fixture
def protected_sse() -> Iterator[Running]:
    running = Running(bearer_only(adder().sse_app(host="127.0.0.1"), TOKEN))
    yield running
    running.stop()


def test_a_bearer_token_opens_a_protected_http_server(protected_http, tmp_path):
    tools = wb.Registry(history=":memory:", artifacts=tmp_path / "artifacts")
    headers = {"Authorization": f"Bearer {TOKEN}"}
    with wbmcp.connect(protected_http.url("/mcp"), tools=tools, headers=headers) as conn:
        assert conn.transport == "http" and "greet" in conn.names
        call = tools.invoke("greet", {"name": "Ada"})
        call.wait(30)
        assert call.receipt == "Hello, Ada."
    tools.history.close()


def test_a_refusal_names_what_the_server_wants(protected_http, tmp_path):
    tools = wb.Registry(history=":memory:", artifacts=tmp_path / "artifacts")
    url = protected_http.url("/mcp")
    with pytest.raises(ConnectionError) as refused:
        wbmcp.connect(url, tools=tools, startup_timeout=30)
    message = str(refused.value)
    assert "401" in message and "needs credentials" in message and "headers=" in message
    with pytest.raises(ConnectionError, match="401"):
        wbmcp.connect(url, tools=tools, headers={"Authorization": "Bearer wrong"})
    assert tools.names() == []
    tools.history.close()


def test_the_legacy_sse_transport_with_a_token(protected_sse, tmp_path):
    tools = wb.Registry(history=":memory:", artifacts=tmp_path / "artifacts")
    url = protected_sse.url("/sse")
    headers = {"Authorization": f"Bearer {TOKEN}"}
    with wbmcp.connect(url, tools=tools, transport="sse", headers=headers) as conn:
        assert conn.transport == "sse" and conn.names == ["add"]
        call = tools.invoke("add", {"a": 2, "b": 40})
        call.wait(30)
        assert call.state == "succeeded" and "42" in call.receipt
    with pytest.raises(ConnectionError, match="401"):
        wbmcp.connect(url, tools=tools, transport="sse")
    tools.history.close()


def test_a_transport_that_needs_a_url_says_so(tmp_path):
    with pytest.raises(ValueError, match="needs an http"):
        wbmcp.connect(["python", "-V"], transport="sse")
