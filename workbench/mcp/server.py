"""Serve a registry as an MCP server, over stdio or streamable HTTP on loopback.

Built on the SDK's low-level ``Server`` so schemas and validation stay workbench's: the SDK's
high-level ``MCPServer`` would drop unknown argument keys silently and send a ``-> dict`` return
as indented JSON text without structured content. Here every call goes through the registry's
runtime (preflight with ``additionalProperties: false`` → ``invalid_args``, approval, history):

- ``tools/list``: each tool as ``tools.export("mcp")`` exports it (an ``outputSchema`` only for a
  tool that declares one and whose family keeps its value), with workbench's metadata under
  ``_meta["workbench.dev/spec"]``;
- ``tools/call``: the receipt as the text content, success or error, ``isError`` from the
  status; ``structuredContent`` only for a tool with an ``outputSchema``: its own result,
  checked against that schema; the canonical record under ``_meta["workbench.dev/record"]``;
  output as progress notifications when the client sent a progress token; a cancellation
  terminates the call; ``always_ask`` tools ask through elicitation (``_approval``).

The server speaks both protocol eras the SDK serves (the 2025-11-25 handshake and 2026-07-28).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, TypedDict

import anyio
import mcp_types as types
from mcp.server.lowlevel import Server
from mcp.server.request_state import RequestStateBoundary, RequestStateSecurity
from typing_extensions import Unpack

from workbench.declare import UnavailableResult, structured_content
from workbench.declare import served_output_schema as output_schema
from workbench.envelope import Envelope, ErrorKind, failure
from workbench.families import render
from workbench.mcp import _approval
from workbench.mcp._http import HttpRunner
from workbench.mcp._results import RECORD_META_KEY, result_from_envelope
from workbench.mcp._serving import serve_call
from workbench.mcp._stdio import MAX_MESSAGE_BYTES, bounded_stdio
from workbench.mcp._tools import listed_tool
from workbench.preflight import draft_2020_12

if TYPE_CHECKING:
    from jsonschema import Draft202012Validator
    from mcp.server.context import ServerRequestContext

    from workbench.declare import ToolSpec
    from workbench.registry import Registry

Transport = Literal["stdio", "http"]
DEFAULT_NAME = "workbench"


def build_server(tools: Registry, *, name: str = DEFAULT_NAME) -> Server[Any]:
    """An MCP low-level ``Server`` that serves ``tools`` (for embedding in your own app).

    The tool list is read on every ``tools/list``, so tools registered later are served too.
    """
    from workbench import __version__

    checks = _OutputChecks()
    rounds = _approval.Rounds()

    async def list_tools(
        ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        listed = [listed_tool(spec, tools.permission(spec.name)) for spec in tools.specs()]
        return types.ListToolsResult(tools=[types.Tool.model_validate(tool) for tool in listed])

    async def call_tool(
        ctx: ServerRequestContext[Any, Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult | types.InputRequiredResult:
        decide = _approval.plan(tools, ctx, params, rounds)
        if isinstance(decide, types.InputRequiredResult):
            return decide
        call, envelope = await serve_call(
            lambda subscriber: tools.invoke(params.name, params.arguments, subscriber=subscriber),
            ctx,
            decide,
        )
        receipt = call.receipt or ""
        structured = None
        if call.spec is not None and envelope.ok:
            checked = checks.check(call.spec, envelope, tools)
            if isinstance(checked, Refused):
                envelope = checked.envelope
                receipt = render(envelope, tools.budgets)
            else:
                structured = checked
        return result_from_envelope(envelope, receipt, structured)

    def input_schema(tool_name: str) -> dict[str, Any] | None:
        tool = tools.get(tool_name)
        return None if tool is None else tool.spec.input_schema

    server: Server[Any] = Server(
        name,
        version=__version__,
        instructions=(
            "Tools served by workbench. Each result's text is the receipt a model reads; a tool "
            "with an output schema also returns its result as structured content. The call's "
            f"canonical record is in the result's _meta under {RECORD_META_KEY!r}."
        ),
        get_tool_input_schema=input_schema,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
    )
    # Seals the request state of an approval round (2026-07-28) and binds it to the tool and
    # its arguments, so a retry cannot carry an answer to some other call.
    security = RequestStateSecurity.ephemeral(audience=name)
    server.middleware.append(RequestStateBoundary(security, default_audience=name))
    return server


@dataclass(frozen=True)
class Refused:
    """A successful call whose result cannot be sent as its advertised structured content."""

    envelope: Envelope


class _OutputChecks:
    """The advertised ``outputSchema`` of each tool, compiled once per declaration."""

    def __init__(self) -> None:
        self._validators: dict[str, tuple[ToolSpec, Draft202012Validator | None]] = {}

    def check(self, spec: ToolSpec, envelope: Envelope, tools: Registry) -> Any:
        """The structured content of a successful call (None for a tool without an output
        schema); ``Refused`` with an ``invalid_output`` failure when the tool's result does not
        match its advertised schema (never sent as a broken success)."""
        cached = self._validators.get(spec.name)
        if cached is None or cached[0] is not spec:
            schema = output_schema(spec)
            # Imported on the first call of a tool with an output schema, without the format
            # packages that take seconds to import: a served registry starts without it.
            validator = None if schema is None else draft_2020_12()(schema)
            cached = (spec, validator)
            self._validators[spec.name] = cached
        validator = cached[1]
        if validator is None:
            return None
        try:
            structured = structured_content(spec, envelope, tools.artifacts.resolve)
        except UnavailableResult as exc:
            return self._refuse(spec, envelope, str(exc))
        from jsonschema.exceptions import best_match  # loaded with the validator above

        error = best_match(validator.iter_errors(structured))
        if error is None:
            return structured
        return self._refuse(spec, envelope, f"does not match its outputSchema: {error.message}")

    @staticmethod
    def _refuse(spec: ToolSpec, envelope: Envelope, why: str) -> Refused:
        refused = failure(
            ErrorKind.INVALID_OUTPUT,
            f"`{spec.name}`'s structured result {why}",
            tool=spec.name,
        )
        return Refused(refused.replace(call_id=envelope.call_id))


class ServeOptions(TypedDict, total=False):
    """How ``serve`` and ``serve_async`` serve a registry (every key is optional)."""

    transport: Transport
    """``"stdio"`` (the default) or ``"http"`` (streamable HTTP)."""
    host: str
    """The HTTP host, ``127.0.0.1`` by default."""
    port: int
    """The HTTP port; 0 (the default) picks a free one."""
    name: str
    """The server's name (``workbench``)."""
    on_ready: Callable[[str], object] | None
    """Receives ``"stdio"`` or the HTTP URL (``http://host:port/mcp``) once clients can
    connect."""
    max_message_bytes: int
    """The largest stdio message read (4 MiB, the SDK's HTTP body limit, by default); a longer
    one is dropped unread and answered with an error naming its size."""


async def serve_async(tools: Registry, **options: Unpack[ServeOptions]) -> None:
    """Serve ``tools`` until the client goes away (stdio) or the task is cancelled (HTTP);
    ``options`` are ``ServeOptions``."""
    unknown = sorted(set(options) - set(ServeOptions.__annotations__))
    if unknown:
        raise TypeError(f"serve() got unknown options {', '.join(unknown)}")
    transport = options.get("transport", "stdio")
    on_ready = options.get("on_ready")
    server = build_server(tools, name=options.get("name", DEFAULT_NAME))
    if transport == "stdio":
        async with bounded_stdio(options.get("max_message_bytes", MAX_MESSAGE_BYTES)) as streams:
            if on_ready is not None:
                on_ready("stdio")
            await server.run(*streams, server.create_initialization_options())
    elif transport == "http":
        host, port = options.get("host", "127.0.0.1"), options.get("port", 0)
        await HttpRunner(server, host=host, port=port).run(on_ready)
    else:
        raise ValueError(f"transport must be 'stdio' or 'http', not {transport!r}")


def serve(tools: Registry, **options: Unpack[ServeOptions]) -> None:
    """Serve ``tools`` and block until the server stops (like a server's ``run``); ``options``
    are ``ServeOptions``.

    In a Jupyter kernel, whose loop is already running, use ``serve_in_thread`` (HTTP) or
    ``await serve_async(...)`` instead.
    """
    if _loop_running():
        raise RuntimeError(
            "serve() blocks and an event loop is already running here; use "
            "wb.mcp.serve_in_thread(tools) or `await wb.mcp.serve_async(tools, ...)`"
        )
    anyio.run(lambda: serve_async(tools, **options))


class ServedHTTP:
    """An HTTP MCP server running in a background thread of this process.

    ``url`` is where clients connect; ``stop()`` (or leaving the ``with`` block) shuts it down,
    terminating calls still running.
    """

    def __init__(self, tools: Registry, *, host: str, port: int, name: str) -> None:
        self._runner = HttpRunner(build_server(tools, name=name), host=host, port=port)
        self._ready = threading.Event()
        self._failed: BaseException | None = None
        self._thread = threading.Thread(target=self._run, name="workbench-mcp-http", daemon=True)
        self._thread.start()
        self._ready.wait(30)
        if self._failed is not None:
            raise RuntimeError(f"the MCP server did not start: {self._failed}") from self._failed
        if not self._ready.is_set():
            self.stop()
            raise RuntimeError("the MCP server did not start within 30 s")

    @property
    def url(self) -> str:
        """The streamable HTTP endpoint, ``http://127.0.0.1:<port>/mcp``."""
        return self._runner.url

    def _run(self) -> None:
        try:
            anyio.run(lambda: self._runner.run(lambda _url: self._ready.set()))
        except BaseException as exc:  # reported to the constructor, or lost after stop()
            self._failed = exc
            self._ready.set()

    def stop(self, timeout: float = 10.0) -> None:
        """Shut the server down and wait for its thread (at most ``timeout`` seconds)."""
        self._runner.stop()
        self._thread.join(timeout)

    def __enter__(self) -> ServedHTTP:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def __repr__(self) -> str:
        state = "running" if self._thread.is_alive() else "stopped"
        return f"<ServedHTTP {self.url} {state}>"


def serve_in_thread(
    tools: Registry, *, host: str = "127.0.0.1", port: int = 0, name: str = DEFAULT_NAME
) -> ServedHTTP:
    """Serve ``tools`` over streamable HTTP from a background thread; returns once it listens."""
    return ServedHTTP(tools, host=host, port=port, name=name)


def _loop_running() -> bool:
    from workbench.runtime import running_loop

    return running_loop() is not None


__all__ = [
    "ServeOptions",
    "ServedHTTP",
    "Transport",
    "build_server",
    "serve",
    "serve_async",
    "serve_in_thread",
]
