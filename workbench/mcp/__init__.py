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

import importlib
import importlib.util
import sys
import typing

from workbench import _extras
from workbench.declare import served_output_schema as output_schema

# The SDK is looked for here, not imported: importing it takes about a second, paid on the
# first use of a name below, so ``import workbench.mcp`` costs nothing until then.
if importlib.util.find_spec("mcp") is None:  # say which extra brings it, not a bare error
    raise ModuleNotFoundError(
        f"workbench.mcp needs the official MCP SDK ('mcp' is missing): "
        f"{_extras.install_hint('mcp')} (the 'lab' extra includes it)",
        name="mcp",
    )

if typing.TYPE_CHECKING:  # what the names below are, for readers, type checkers and the docs
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

_WHERE = {  # each public name: (the module that defines it, its name there)
    "REQUEST_TIMEOUT_S": ("_limits", "REQUEST_TIMEOUT_S"),
    "RequestTimedOut": ("_limits", "RequestTimedOut"),
    "LIST_ITEMS_MAX": ("_listing", "LIST_ITEMS_MAX"),
    "Listing": ("_listing", "Listing"),
    "oauth_login": ("_oauth", "oauth_login"),
    "LOG_LEVELS": ("_offers", "LEVELS"),
    "RECORD_META_KEY": ("_results", "RECORD_META_KEY"),
    "envelope_from_exception": ("_results", "envelope_from_exception"),
    "envelope_from_result": ("_results", "envelope_from_result"),
    "record_of": ("_results", "record_of"),
    "result_from_envelope": ("_results", "result_from_envelope"),
    "SPEC_META_KEY": ("_tools", "SPEC_META_KEY"),
    "Connection": ("client", "Connection"),
    "ConnectOptions": ("client", "ConnectOptions"),
    "connect": ("client", "connect"),
    "connect_async": ("client", "connect_async"),
    "ServedHTTP": ("server", "ServedHTTP"),
    "ServeOptions": ("server", "ServeOptions"),
    "build_server": ("server", "build_server"),
    "serve": ("server", "serve"),
    "serve_async": ("server", "serve_async"),
    "serve_in_thread": ("server", "serve_in_thread"),
}


def __getattr__(name: str) -> object:
    """A public name, imported (with the SDK) on its first use and kept."""
    if name not in _WHERE:
        raise AttributeError(f"module 'workbench.mcp' has no attribute {name!r}")
    module, attribute = _WHERE[name]
    value = getattr(importlib.import_module(f"workbench.mcp.{module}"), attribute)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_WHERE})


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
