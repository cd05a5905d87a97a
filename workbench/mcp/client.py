"""Connect to any MCP server and use its tools as workbench tools: cards, history, terminate.

``wb.mcp.connect(target)`` starts a stdio server (a command line or argv), reaches a streamable
HTTP one (a URL), or attaches to an in-process SDK server, lists its tools and registers each in
a registry with ``ownership="mcp"``. A call of such a tool is a normal workbench call: preflight
against the server's schema, the approval gate, events, history. Its body sends ``tools/call``:

- the server's progress notifications: a workbench server's are its output chunks, streamed as
  ``tool.output`` on ``stdout``; another server's are the call's own progress (``tool.progress``:
  a bar with its message on the card, kept in the history), as a local tool's ``ctx.progress``;
- Terminate cancels the request (``notifications/cancelled``, or closing the HTTP request);
- the result becomes an envelope (``_results``): a workbench server's canonical record as it was
  sent; another server's text content as the receipt, its images, audio and blobs saved as the
  call's artifacts and named in the receipt, its structured content kept in the result;
- a lost connection or a protocol error becomes ``unavailable``, never a hang;
- a tool that can only run as an MCP task runs as one (``_tasks``: ``tools/call`` with a task,
  ``tasks/get`` polled, ``tasks/result``); with an SDK that cannot send such a call it is
  registered but unavailable (``unavailable``, not retryable, saying why), listed in
  ``Connection.unavailable``.

Permissions follow the server's annotations (``destructiveHint`` → ``always_ask``,
``readOnlyHint`` → ``always_allow``); ``tools.set_permission(name, ...)`` overrides them. The
hints themselves are the ``ToolSpec``'s ``read_only``, ``destructive``, ``idempotent`` and
``open_world``; ``Connection.listed`` keeps each tool exactly as the server listed it.

Connections are closed by ``close()``, by leaving a ``with`` block, by connecting the same
registry to the same server again, or at interpreter exit; closing a stdio connection ends its
server process. ``close()`` unregisters the connection's tools.
"""

from __future__ import annotations

import atexit
import os
import shlex
import tempfile
import threading
import weakref
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, TextIO, TypedDict

from typing_extensions import Unpack

from workbench.context import ToolContext
from workbench.declare import DEFAULT_TIMEOUT_S
from workbench.envelope import Envelope, ErrorKind, failure
from workbench.mcp._limits import REQUEST_TIMEOUT_S, checked_timeout
from workbench.mcp._listing import Listing
from workbench.mcp._oauth import oauth_login
from workbench.mcp._offers import Root, ServerOffers
from workbench.mcp._results import Limits, Save, envelope_from_exception, envelope_from_result
from workbench.mcp._sampling import Sampler
from workbench.mcp._session import CallInfo, Hooks, Session, stdio_parameters
from workbench.mcp._tools import Imported, imported
from workbench.mcp._transports import HttpTransport
from workbench.mcp._whole import with_whole_value
from workbench.registry import Registry

if TYPE_CHECKING:
    import mcp_types as types

    from workbench.declare import Tool
    from workbench.runtime import Call

Mode = Literal["auto", "legacy"]
Transport = Literal["stdio", "http", "sse", "in-process"]

STARTUP_TIMEOUT_S = 30.0
STDERR_TAIL_CHARS = 2_000

_open_lock = threading.Lock()
_open: dict[tuple[int, str], weakref.ref[Connection]] = {}


class ConnectOptions(TypedDict, total=False):
    """How ``connect`` and ``connect_async`` reach a server (every key is optional)."""

    tools: Registry | None
    """The registry to fill (default: a new ``Registry()``)."""
    prefix: str | None
    """Goes before each local tool name."""
    timeout: float | None
    """The local budget of tools whose server declares none (a workbench server declares each
    tool's own); ``DEFAULT_TIMEOUT_S`` by default."""
    env: dict[str, str] | None
    """Added to the SDK's safe environment of a stdio server."""
    cwd: str | os.PathLike[str] | None
    """Where a stdio server starts (default: here)."""
    mode: Mode
    """``"legacy"`` forces the 2025-11-25 handshake; ``"auto"`` (the default) negotiates, except
    for a connection that answers sampling requests (``sampling=``): sampling is deprecated from
    protocol 2026-07-28 on, and servers ask for it over the handshake era's back-channel (an SDK
    server's ``ctx.session.create_message``), which 2026-07-28 does not have, so such a
    connection uses the handshake."""
    elicitation: bool
    """False declares no elicitation support, so servers cannot ask (default True)."""
    startup_timeout: float
    """How long the handshake may take (``STARTUP_TIMEOUT_S``)."""
    headers: dict[str, str] | None
    """HTTP headers sent with every request (a bearer token: ``{"Authorization": "Bearer
    ..."}``)."""
    auth: Any
    """An ``httpx`` auth flow for HTTP servers behind a login, such as the mcp SDK's
    ``OAuthClientProvider`` (``wb.mcp.oauth_login(url, ...)`` makes one), or ``"oauth"``: log in
    with ``oauth_login``'s defaults."""
    transport: Literal["stdio", "http", "sse"] | None
    """How to reach ``target``; by default a URL is streamable HTTP and anything else stdio.
    ``"sse"`` is the legacy HTTP+SSE transport."""
    roots: list[Root] | None
    """Directories (paths or URIs) offered to the server as roots; declared only when given
    (``conn.roots`` changes them later)."""
    sampling: Any
    """Who answers the server's sampling requests: ``"person"`` (a card to fulfil), or a model
    (anything ``wb.run`` takes, or a dict of ``wb.run`` keywords with ``"model"``), always
    through Allow/Deny; None (the default) declares no sampling."""


_CONNECT_KEYS = frozenset(ConnectOptions.__annotations__)


class Connection(ServerOffers):
    """An open MCP connection and the tools it registered.

    ``tools`` is the registry; ``names`` the local names registered (``remote_names`` maps them
    to the server's); ``skipped`` the server's tools that could not be registered, with why;
    ``unavailable`` the registered tools every call of which fails, with why. What the server
    offers besides tools is on ``ServerOffers``: ``resources()``, ``resource_templates()``,
    ``read(uri)``, ``prompts()``, ``prompt(name, **arguments)``, ``roots``, ``log`` and the
    resource subscriptions (``subscribe(uri)``, ``unsubscribe(uri)``, ``updates``).
    """

    def __init__(
        self,
        session: Session,
        *,
        tools: Registry,
        target: str,
        transport: Transport,
        prefix: str | None,
        stderr: TextIO | None,
        stderr_path: Path | None,
        roots: list[Root] | None = None,
    ) -> None:
        self._session = session
        self.tools = tools
        self.target = target
        self._init_offers(roots)
        session.hooks.on_log = self._logged
        session.hooks.on_updated = self._updated
        session.hooks.on_fault = self._faulted
        session.hooks.on_wire = self._wire_fault
        if roots is not None:
            session.hooks.roots = self._listed_roots
        self.transport: Transport = transport
        self.prefix = prefix
        self.key = f"{target}|{prefix or ''}"
        self._stderr = stderr
        self.stderr_path = stderr_path
        self.listed: list[dict[str, Any]] = []
        self.remote_names: dict[str, str] = {}
        self.skipped: dict[str, str] = {}
        self.unavailable: dict[str, str] = {}
        self._registered: dict[str, Tool] = {}
        self.round_trip_s: float | None = None
        """The round trip of the latest ``ping()``, in seconds (None before the first)."""
        self.sampling_requests: list[Call] = []
        """The server's sampling requests, each a call of ``mcp_sampling`` (its card: Allow
        or Deny, or a reply to fulfil when ``sampling="person"``)."""
        self._closed = False
        weakref.finalize(self, session.abandon)

    # ── what the server is ──────────────────────────────────────────────────────────────────
    @property
    def names(self) -> list[str]:
        """The local names of the tools this connection registered."""
        return list(self._registered)

    @property
    def server_info(self) -> dict[str, Any]:
        """The server's name and version (empty once the session ended)."""
        client = self._session.client
        info = None if client is None else client.server_info
        return {} if info is None else info.model_dump(exclude_none=True)

    @property
    def protocol_version(self) -> str | None:
        """The negotiated MCP protocol version, while connected."""
        client = self._session.client
        return None if client is None else client.protocol_version

    @property
    def alive(self) -> bool:
        """True while the session is up."""
        return not self._session.lost.is_set()

    @property
    def closed(self) -> bool:
        """True once ``close()`` ran."""
        return self._closed

    def ping(self, *, timeout: float | None = REQUEST_TIMEOUT_S) -> float:
        """Check that the server answers: the round trip of one request, in seconds, also kept
        on ``round_trip_s``. Over protocol 2025-11-25 it is a ``ping``; over 2026-07-28, which
        removed ping, a ``server/discover``. Raises ``RequestTimedOut`` past ``timeout``
        seconds, and ``ConnectionError`` when the connection is over."""
        session = self._session
        seconds = session.run_blocking(
            session.bounded(session.ping(), "ping", checked_timeout(timeout)), None
        )
        self.round_trip_s = seconds
        return seconds

    def server_log(self) -> str:
        """What a stdio server wrote to its stderr so far ('' for other transports)."""
        if self.stderr_path is None or not self.stderr_path.exists():
            return ""
        return self.stderr_path.read_text(encoding="utf-8", errors="replace")

    # ── registering ─────────────────────────────────────────────────────────────────────────
    def _register(self, listed: Listing[types.Tool], default_timeout: float | None) -> None:
        if listed.stopped is not None:
            self._note(f"tools/list: {listed.stopped}")
        for tool in listed:
            self.listed.append(tool.model_dump(by_alias=True, exclude_none=True))
            try:
                item = imported(
                    tool,
                    prefix=self.prefix,
                    default_timeout=default_timeout,
                    tasks=self._session.runs_tasks,
                )
                registered = self.tools.register(
                    _handler(self, item),
                    name=item.name,
                    description=item.description,
                    input_schema=item.input_schema,
                    output_schema=item.output_schema,
                    **item.meta,
                )
            except (TypeError, ValueError) as exc:
                self.skipped[tool.name] = str(exc)
                continue
            self._registered[item.name] = registered
            self.remote_names[item.name] = item.remote_name
            if item.unavailable is not None:
                self.unavailable[item.name] = item.unavailable

    # ── calling ─────────────────────────────────────────────────────────────────────────────
    async def _call(self, item: Imported, arguments: dict[str, Any], ctx: ToolContext) -> Envelope:
        if item.unavailable is not None:
            return failure(
                ErrorKind.UNAVAILABLE,
                item.unavailable,
                tool=item.name,
                retryable=False,
                details={"server": self.target, "remote_name": item.remote_name},
                recovery_hint="use another tool, or a client that runs MCP tasks",
            )

        async def on_progress(progress: float, total: float | None, message: str | None) -> None:
            if item.workbench:
                # A workbench server's progress messages are its output chunks, verbatim.
                if message:
                    ctx.emit(message, "stdout")
            else:
                _report_progress(ctx, progress, total, message)

        info = CallInfo(
            tool=item.name,
            approved=self.tools.permission(item.name) == "always_ask",
            log=ctx.log,
        )
        session = self._session
        try:
            result = await session.on_loop(
                session.call_tool(item.remote_name, arguments, info, on_progress, as_task=item.task)
            )
        except Exception as exc:
            envelope = envelope_from_exception(
                exc, tool_name=item.name, server=self.target, over=session.lost.is_set()
            )
            return self._with_stderr(envelope)
        limits = Limits(structured_chars=self.tools.budgets.json_chars)
        envelope = envelope_from_result(
            result, tool_name=item.name, save=_saver(ctx), limits=limits
        )
        if item.workbench:
            return with_whole_value(
                envelope, result.structured_content, item.output_schema, _keeper(ctx)
            )
        if not ctx.artifacts.refs:
            return envelope
        return envelope.replace(artifacts=ctx.artifacts.refs)

    def _with_stderr(self, envelope: Envelope) -> Envelope:
        """An ``unavailable`` failure with the tail of a stdio server's stderr, which often
        says why the server went away."""
        error = envelope.error
        if error is None or error.kind is not ErrorKind.UNAVAILABLE:
            return envelope
        tail = self.server_log()[-STDERR_TAIL_CHARS:].strip()
        if not tail:
            return envelope
        details = {**(error.details or {}), "server_stderr_tail": tail}
        return envelope.replace(error=error.model_copy(update={"details": details}))

    # ── closing ─────────────────────────────────────────────────────────────────────────────
    def close(self, timeout: float = 15.0) -> None:
        """End the session (a stdio server process ends with it) and unregister its tools.

        Idempotent; calls still running end ``unavailable``.
        """
        if self._closed:
            return
        self._closed = True
        self._unregister()
        try:
            self._session.run_blocking(self._session.close(), timeout)
        finally:
            self._cleanup()

    async def aclose(self) -> None:
        """``close()`` for async code: awaits without blocking the caller's loop."""
        if self._closed:
            return
        self._closed = True
        self._unregister()
        try:
            await self._session.on_loop(self._session.close())
        finally:
            self._cleanup()

    def _unregister(self) -> None:
        for name, tool in self._registered.items():
            if self.tools.get(name) is tool:
                self.tools.unregister(name)
        with _open_lock:
            key = (id(self.tools), self.key)
            if _open.get(key, lambda: None)() is self:
                del _open[key]

    def _abandon(self) -> None:
        """Give up on a connection that failed to open: end its session, drop its files."""
        self._closed = True
        self._session.abandon()
        self._cleanup()

    def _cleanup(self) -> None:
        if self._stderr is not None:
            self._stderr.close()
        if self.stderr_path is not None:
            self.stderr_path.unlink(missing_ok=True)

    def __enter__(self) -> Connection:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    async def __aenter__(self) -> Connection:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    def __repr__(self) -> str:
        state = "closed" if self._closed else ("open" if self.alive else "lost")
        return (
            f"<Connection {self.transport} {self.target!r} {len(self._registered)} tools {state}>"
        )


def _handler(conn: Connection, item: Imported) -> Any:
    async def handler(arguments: dict[str, Any], ctx: ToolContext) -> Envelope:
        return await conn._call(item, arguments, ctx)

    handler.__name__ = item.name
    # The registry treats the same (module, qualname) as the same tool redefined: connecting
    # to the same server again replaces its tools; another server's tool of the same name is
    # refused (use prefix=).
    handler.__qualname__ = f"connect[{conn.key}].{item.remote_name}"
    return handler


def _report_progress(
    ctx: ToolContext, progress: float, total: float | None, message: str | None
) -> None:
    """A foreign server's progress notification as the call's own progress (a bar on its
    card). A total that is not positive is left out, so the bar counts; a report the bar cannot
    draw at all is kept as a log line."""
    if total is not None and not total > 0:
        total = None
    try:
        ctx.progress(progress, total, message)
    except ValueError as exc:
        ctx.log(f"progress the card cannot draw ({exc}): {progress!r}/{total!r} {message or ''}")


def _keeper(ctx: ToolContext) -> Any:
    def keep(name: str, text: str) -> Any:
        sink = ctx.artifacts
        return sink.store.ref(sink.path(sink.write(name, text)))

    return keep


def _saver(ctx: ToolContext) -> Save:
    def save(name: str, data: bytes) -> tuple[int, str]:
        sink = ctx.artifacts
        index = sink.write(name, data)
        return index, sink.store.ref(sink.path(index)).path

    return save


# ── connecting ──────────────────────────────────────────────────────────────────────────────


def _prepare(target: Any, options: ConnectOptions) -> Connection:
    """A connection not yet open: its session, its registry and where stderr goes."""
    from mcp.client.stdio import stdio_client

    unknown = sorted(set(options) - _CONNECT_KEYS)
    if unknown:
        raise TypeError(
            f"connect() got unknown options {', '.join(unknown)}; known: "
            f"{', '.join(sorted(_CONNECT_KEYS))}"
        )

    stderr: TextIO | None = None
    stderr_path: Path | None = None
    server: Any
    transport: Transport
    kind = options.get("transport")
    is_url = isinstance(target, str) and target.startswith(("http://", "https://"))
    if kind in ("http", "sse") or (kind is None and is_url):
        if not is_url:
            raise ValueError(f"transport={kind!r} needs an http(s):// URL, not {target!r}")
        server = HttpTransport(
            target,
            headers=options.get("headers"),
            auth=oauth_login(target) if options.get("auth") == "oauth" else options.get("auth"),
            legacy_sse=kind == "sse",
        )
        shown, transport = target, "sse" if kind == "sse" else "http"
    elif isinstance(target, str | Sequence) and not isinstance(target, bytes):
        argv = shlex.split(target) if isinstance(target, str) else [str(part) for part in target]
        descriptor, path = tempfile.mkstemp(prefix="workbench-mcp-", suffix=".stderr.log")
        # Open for the server's life; closed (and removed) when the connection closes.
        os.close(descriptor)
        stderr_path = Path(path)
        stderr = stderr_path.open("w", encoding="utf-8")
        parameters = stdio_parameters(argv, env=options.get("env"), cwd=options.get("cwd"))
        server = stdio_client(parameters, errlog=stderr)
        shown, transport = shlex.join(argv), "stdio"
    else:
        server, shown, transport = target, f"{type(target).__name__} {id(target):#x}", "in-process"
    mode = options.get("mode", "auto")
    if mode == "auto" and options.get("sampling") is not None:
        mode = "legacy"  # where servers can ask for sampling at all (see ConnectOptions.mode)
    session = Session(
        server,
        mode=mode,
        elicitation=options.get("elicitation", True),
        hooks=Hooks(),
        target=shown,
        watch=transport != "in-process",
    )
    tools = options.get("tools")
    registry = tools if tools is not None else Registry()
    if options.get("sampling") is not None:
        sampler = Sampler(options["sampling"], registry)
        session.hooks.sampling = sampler.answer
    conn = Connection(
        session,
        tools=registry,
        target=shown,
        transport=transport,
        prefix=options.get("prefix"),
        stderr=stderr,
        stderr_path=stderr_path,
        roots=options.get("roots"),
    )
    if options.get("sampling") is not None:
        conn.sampling_requests = sampler.calls
    return conn


def connect(target: str | Sequence[str] | Any, **options: Unpack[ConnectOptions]) -> Connection:
    """Connect to an MCP server and register its tools; blocks until they are registered.

    ``target``: an ``http(s)://`` URL (streamable HTTP, or legacy SSE with ``transport="sse"``),
    a command line or argv (stdio, started in ``cwd`` with ``env`` added to the SDK's safe
    environment), or an in-process SDK server. ``options`` are ``ConnectOptions``.

    Raises ``ConnectionError`` when the server cannot be reached, started or refuses (naming
    what it wants, such as credentials).

    Examples:
        >>> import workbench as wb
        >>> served = wb.Registry(history=":memory:")
        >>> @served.tool(read_only=True)
        ... def add(a: int, b: int = 1) -> int:
        ...     '''Add two numbers.'''
        ...     return a + b
        >>> tools = wb.Registry(history=":memory:")
        >>> conn = connect(wb.mcp.build_server(served), tools=tools)  # or a command, or a URL
        >>> tools.names()
        ['add']
        >>> call = tools.invoke("add", {"a": 2, "b": 3})
        >>> call.wait().status, call.receipt
        ('success', '5')
        >>> conn.close(); tools.names()  # closing the connection unregisters its tools
        []
    """
    startup_timeout = _startup_timeout(options)
    conn = _prepare(target, options)
    try:
        listed = conn._session.run_blocking(conn._session.open(startup_timeout), None)
    except BaseException:
        conn._abandon()
        raise
    previous = _swap_previous(conn)
    if previous is not None:
        previous.close()
    conn._register(listed, options.get("timeout", DEFAULT_TIMEOUT_S))
    return conn


async def connect_async(
    target: str | Sequence[str] | Any, **options: Unpack[ConnectOptions]
) -> Connection:
    """``connect`` for async code: awaits the connection without blocking the caller's loop."""
    startup_timeout = _startup_timeout(options)
    conn = _prepare(target, options)
    try:
        listed = await conn._session.on_loop(conn._session.open(startup_timeout))
    except BaseException:
        conn._abandon()
        raise
    previous = _swap_previous(conn)
    if previous is not None:
        await previous.aclose()
    conn._register(listed, options.get("timeout", DEFAULT_TIMEOUT_S))
    return conn


def _startup_timeout(options: ConnectOptions) -> float:
    timeout = checked_timeout(options.get("startup_timeout", STARTUP_TIMEOUT_S))
    if timeout is None:
        raise ValueError("startup_timeout must be a positive number of seconds")
    return timeout


def _swap_previous(conn: Connection) -> Connection | None:
    """Make ``conn`` the open connection of its registry to its server; returns the one it
    replaces (a re-run notebook cell), for the caller to close."""
    key = (id(conn.tools), conn.key)
    with _open_lock:
        previous = _open.get(key, lambda: None)()
        _open[key] = weakref.ref(conn)
    return previous if previous is not conn else None


@atexit.register
def _close_all() -> None:
    """End every open connection at exit, so no stdio server outlives this Python."""
    with _open_lock:
        connections = [ref() for ref in _open.values()]
    for conn in connections:
        if conn is not None:
            try:
                conn.close(timeout=5.0)
            except Exception:  # exiting anyway; one stuck server must not keep the others
                pass


__all__ = ["ConnectOptions", "Connection", "connect", "connect_async"]
