"""Over stdio a message is one line, and the server caps its size as its HTTP transport does
(413): a 100 MB message is answered with a JSON-RPC error naming its size and the limit, under
its request's id, without being held; the server's peak memory (``VmHWM`` in /proc) grows by a
small multiple of the limit, not by the message; and the connection goes on serving."""

from __future__ import annotations

import json
import os
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.mcp.test_server import DEMO, demo_env, wait_ended
from workbench import mcp as wbmcp
from workbench.mcp._stdio import MAX_MESSAGE_BYTES

HUGE_BYTES = 100 * 1024 * 1024
PEAK_GROWTH_MAX = 16 * MAX_MESSAGE_BYTES
"""What the server may add to its peak memory while it drops the huge message."""


class RawStdio:
    """A served registry over stdio, spoken to line by line (no client library)."""

    def __init__(self, root: Path) -> None:
        self.process = subprocess.Popen(
            wbmcp.server_command(DEMO),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env={**os.environ, **demo_env(root)},
        )

    def send(self, message: dict[str, Any]) -> None:
        self.write(json.dumps(message).encode() + b"\n")

    def write(self, data: bytes) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(data)
        self.process.stdin.flush()

    def receive(self) -> dict[str, Any]:
        assert self.process.stdout is not None
        line = self.process.stdout.readline()
        assert line, "the server closed its stdout"
        message: dict[str, Any] = json.loads(line)
        return message

    def answer(self, request_id: int) -> dict[str, Any]:
        """The response to ``request_id`` (notifications on the way are skipped)."""
        while True:
            message = self.receive()
            if message.get("id") == request_id:
                return message

    def peak_bytes(self) -> int:
        """The server's peak resident memory so far."""
        for line in Path(f"/proc/{self.process.pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
        raise AssertionError("no VmHWM in /proc")

    def close(self) -> None:
        if self.process.stdin is not None:
            self.process.stdin.close()
        wait_ended(self.process)


@pytest.fixture
def server(tmp_path: Path) -> Iterator[RawStdio]:
    served = RawStdio(tmp_path)
    served.send(
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "raw", "version": "0"},
            },
        }
    )
    assert "result" in served.answer(1)
    served.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    yield served
    served.close()


def call(request_id: int, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": "tools/call",
        "params": {"name": name, "arguments": arguments},
    }


def test_a_huge_message_is_refused_unread_and_the_server_goes_on(server):
    before = server.peak_bytes()
    head = json.dumps(call(7, "greet", {"name": ""}))[:-3].encode()  # ... "name": "
    filler = HUGE_BYTES - len(head) - 4
    writer = threading.Thread(
        target=lambda: server.write(head + b"x" * filler + b'"}}}\n'), daemon=True
    )
    writer.start()
    refused = server.answer(7)
    writer.join(60)
    error = refused["error"]
    assert error["code"] == -32600
    assert f"{HUGE_BYTES} bytes" in error["message"]
    assert f"limit of {MAX_MESSAGE_BYTES} bytes" in error["message"]
    assert error["data"] == {"size": HUGE_BYTES, "limit": MAX_MESSAGE_BYTES}
    growth = server.peak_bytes() - before
    assert growth < PEAK_GROWTH_MAX, f"peak memory grew by {growth} bytes"

    server.send(call(8, "greet", {"name": "Ada"}))
    after = server.answer(8)["result"]
    assert after["content"][0]["text"] == "Hello, Ada."


def test_a_message_under_the_limit_is_served(server):
    name = "y" * (MAX_MESSAGE_BYTES - 200)
    server.send(call(9, "greet", {"name": name}))
    result = server.answer(9)["result"]
    text = result["content"][0]["text"]
    assert result["isError"] is False and text.startswith("Hello, yyy")
    assert f"full text ({len(f'Hello, {name}.')} chars)" in text  # the argument arrived whole
