"""MCP both ways: serve a registry as an MCP server; use any MCP server's tools as workbench tools.

Serve (the SDK's low-level server; workbench's schemas, preflight, approval and history)::

    wb.mcp.serve(tools)                                 # stdio, blocks
    wb.mcp.serve(tools, transport="http", port=8000)    # streamable HTTP on 127.0.0.1
    server = wb.mcp.serve_in_thread(tools)              # HTTP in the background: server.url
    # python -m workbench.mcp serve my_module:tools [--http --port N]

Connect (stdio command, argv, http(s) URL, or an in-process SDK server)::

    conn = wb.mcp.connect(wb.mcp.server_command("workbench.mcp.demo:registry"), tools=tools)
    tools.invoke("greet", {"name": "Ada"})              # a normal call: card, history, terminate
    conn.close()

Mapping: a call's receipt is the text content (what a model reads); ``isError`` is the status;
a tool with an output schema also sends its own result as ``structuredContent``; the canonical
record travels in the result's ``_meta`` under ``RECORD_META_KEY`` (``record_of(result)`` reads
it); output streams as progress; cancellation terminates; ``always_ask`` tools ask through
elicitation. A foreign server's tool reads as a host would show it to a model: its text content,
with images, audio and blobs saved as artifacts and named in the receipt.
"""

import sys

from workbench import _extras

try:
    import mcp  # noqa: F401  (the official SDK; everything below needs it)
except ModuleNotFoundError as exc:  # say which extra brings it, rather than a bare import error
    raise ModuleNotFoundError(
        f"workbench.mcp needs the official MCP SDK ({exc.name!r} is missing): "
        f"{_extras.install_hint('mcp')} (the 'lab' extra includes it)",
        name=exc.name,
    ) from exc

from workbench.declare import served_output_schema as output_schema
from workbench.mcp._limits import REQUEST_TIMEOUT_S, RequestTimedOut
from workbench.mcp._listing import LIST_ITEMS_MAX, Listing
from workbench.mcp._oauth import oauth_login
from workbench.mcp._offers import LEVELS as LOG_LEVELS
from workbench.mcp._results import (
    RECORD_META_KEY,
    envelope_from_exception,
    envelope_from_result,
    record_of,
    result_from_envelope,
)
from workbench.mcp._tools import SPEC_META_KEY
from workbench.mcp.client import Connection, ConnectOptions, connect, connect_async
from workbench.mcp.server import (
    ServedHTTP,
    ServeOptions,
    build_server,
    serve,
    serve_async,
    serve_in_thread,
)


def server_command(
    registry: str, *, http: bool = False, host: str = "127.0.0.1", port: int = 0
) -> list[str]:
    """The argv that serves ``registry`` (``"module:attribute"``) with this Python:
    ``[sys.executable, "-m", "workbench.mcp", "serve", registry, ...]``."""
    argv = [sys.executable, "-m", "workbench.mcp", "serve", registry]
    if http:
        argv += ["--http", "--host", host, "--port", str(port)]
    return argv


__all__ = [
    "LIST_ITEMS_MAX",
    "LOG_LEVELS",
    "RECORD_META_KEY",
    "REQUEST_TIMEOUT_S",
    "SPEC_META_KEY",
    "ConnectOptions",
    "Connection",
    "Listing",
    "RequestTimedOut",
    "ServeOptions",
    "ServedHTTP",
    "build_server",
    "connect",
    "connect_async",
    "envelope_from_exception",
    "envelope_from_result",
    "oauth_login",
    "output_schema",
    "record_of",
    "result_from_envelope",
    "serve",
    "serve_async",
    "serve_in_thread",
    "server_command",
]
