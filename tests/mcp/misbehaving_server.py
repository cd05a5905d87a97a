"""A small MCP server that misbehaves on purpose, spoken by hand over stdio (no SDK), for what no
well-made server shows: ``python -m tests.mcp.misbehaving_server LOG [mute]``.

Every message it receives is appended to ``LOG`` as one JSON line, so a test can see what the
client sent (a ``notifications/cancelled``, a ``logging/setLevel``). It speaks the 2025-11-25
handshake (``server/discover`` is answered "method not found") and then:

- ``tools/call garbled``: answers with a line that is not JSON;
- ``tools/call misnumbered``: answers under another id;
- ``resources/read``, ``prompts/get``, ``resources/subscribe``: never answers;
- ``resources/list``: every page names the same next cursor;
- ``mute`` on the command line: never answers ``initialize`` either.

It declares no logging capability.
"""

from __future__ import annotations

import contextlib
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import workbench as wb
    from workbench import mcp as wbmcp

TOOLS = [
    {"name": name, "description": f"Misbehaves: {name}", "inputSchema": {"type": "object"}}
    for name in ("garbled", "misnumbered")
]
CAPABILITIES = {"tools": {}, "resources": {"subscribe": True}, "prompts": {}}


def reply(request_id: Any, result: dict[str, Any]) -> None:
    write(json.dumps({"jsonrpc": "2.0", "id": request_id, "result": result}))


def write(line: str) -> None:
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


def answer(message: dict[str, Any], mute: bool) -> None:
    method, request_id = message.get("method"), message.get("id")
    if request_id is None or mute:
        return
    if method == "initialize":
        reply(
            request_id,
            {
                "protocolVersion": "2025-11-25",
                "capabilities": CAPABILITIES,
                "serverInfo": {"name": "misbehaving", "version": "0"},
            },
        )
    elif method == "server/discover":
        error = {"code": -32601, "message": "Method not found"}
        write(json.dumps({"jsonrpc": "2.0", "id": request_id, "error": error}))
    elif method == "tools/list":
        reply(request_id, {"tools": TOOLS})
    elif method == "tools/call" and message["params"]["name"] == "garbled":
        write("this is not JSON-RPC <at all>")
    elif method == "tools/call":
        content = [{"type": "text", "text": "for someone else"}]
        reply(request_id + 1000, {"content": content, "isError": False})
    elif method == "resources/list":
        resources = [{"uri": "loop://a", "name": "a"}]
        reply(request_id, {"resources": resources, "nextCursor": "again"})
    elif method in ("resources/read", "prompts/get", "resources/subscribe"):
        return  # never answered
    elif method == "ping":
        reply(request_id, {})
    else:
        error = {"code": -32601, "message": f"Method not found: {method}"}
        write(json.dumps({"jsonrpc": "2.0", "id": request_id, "error": error}))


def main(log: Path, mute: bool) -> None:
    for line in sys.stdin:
        with log.open("a", encoding="utf-8") as kept:
            kept.write(line if line.endswith("\n") else line + "\n")
        answer(json.loads(line), mute)


def received(log: Path) -> list[dict[str, Any]]:
    """The messages the server received so far, oldest first."""
    if not log.exists():
        return []
    return [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines() if line]


def command(log: Path, *, mute: bool = False) -> list[str]:
    """The argv that starts this server with this Python, keeping what it receives in ``log``."""
    return [sys.executable, "-m", "tests.mcp.misbehaving_server", str(log)] + (
        ["mute"] if mute else []
    )


@contextlib.contextmanager
def connected(tmp: Path) -> Iterator[tuple[wb.Registry, wbmcp.Connection, Path]]:
    """A registry connected to this server (started in the repository's root), and the file
    of what the server received; closed after."""
    import workbench as wb
    from workbench import mcp as wbmcp

    tools = wb.Registry(history=":memory:", artifacts=tmp / "artifacts")
    log = tmp / "received.jsonl"
    root = Path(__file__).resolve().parents[2]
    try:
        with wbmcp.connect(command(log), tools=tools, cwd=root) as conn:
            yield tools, conn, log
    finally:
        tools.history.close()


if __name__ == "__main__":
    main(Path(sys.argv[1]), mute=sys.argv[2:] == ["mute"])
