"""The MCP client session behind a connection, owned by one task on workbench's private loop.

The SDK's ``Client`` is a set of anyio task groups that must be entered and left by the same task
on the same loop. One owner task on the private loop (a daemon thread) does both, so a session
works the same from a script (whose calls run on that loop too) and from Jupyter (whose calls run
on the kernel's loop and reach the session through ``run_coroutine_threadsafe``); the kernel's
loop never waits on the network.

Every request races the session's ``lost`` event, set when the owner task ends for any reason
(server exited, transport failed, ``close()``), so no call outlives its connection.
"""

from __future__ import annotations

import asyncio
import contextvars
import os
import time
import warnings
from collections.abc import Callable, Coroutine, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import anyio
import mcp_types as types
from mcp import Client, StdioServerParameters
from mcp.client.session import ClientRequestContext
from mcp.shared.dispatcher import ProgressFnT
from mcp.shared.exceptions import MCPDeprecationWarning, MCPError
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from workbench.mcp._limits import CANCEL_WAIT_S, REQUEST_TIMEOUT_S, RequestTimedOut, within
from workbench.mcp._listing import Listing, every_page
from workbench.mcp._oauth import oauth_failure
from workbench.mcp._tasks import call_as_task, can_run_tasks
from workbench.mcp._transports import refusal
from workbench.mcp._wire import WatchedTransport
from workbench.runtime import dedicated_loop, on_loop_thread

T = TypeVar("T")
Emit = Callable[[str], None]

CLOSE_WAIT_S = 10.0


class ConnectionLost(ConnectionError):
    """The session ended (the server exited, the transport failed, or it was closed)."""


# A server's log message, the call in flight (if one), whether the protocol ties them.
LogHook = Callable[[types.LoggingMessageNotificationParams, "CallInfo | None", bool], None]


@dataclass
class Hooks:
    """What the client declares beyond tools, and where the server's messages go."""

    roots: Callable[[], list[types.Root]] | None = None
    """The roots to answer ``roots/list`` with (None: roots are not declared)."""
    on_log: LogHook | None = None
    """Receives each ``notifications/message`` with the call in flight, if one, and whether the
    protocol ties the message to that call's request (``_on_log``)."""
    log_level: types.LoggingLevel | None = "info"
    """The least level of log messages asked for."""
    sampling: Callable[[types.CreateMessageRequestParams], Coroutine[Any, Any, Any]] | None = None
    """Answers ``sampling/createMessage`` (None: sampling is not declared)."""
    on_updated: Callable[[str, CallInfo | None], None] | None = None
    """Receives the URI of each ``notifications/resources/updated``, with the call in flight."""
    on_fault: Callable[[Exception], None] | None = None
    """Receives a fault the transport reported outside any request."""
    on_wire: Callable[[str], None] | None = None
    """Receives what went wrong on a watched wire (``_wire``): a reply that could not be read,
    or came under an id no request has."""


@dataclass
class CallInfo:
    """What the session knows of one local call while its request is in flight."""

    tool: str
    approved: bool
    """The person allowed this call at its card (the tool asks before it runs)."""
    log: Emit
    told_untied_log: bool = False
    """The call's log has said that the server's log lines on it may belong to something else."""


_CURRENT: contextvars.ContextVar[CallInfo | None] = contextvars.ContextVar(
    "workbench_mcp_call", default=None
)


class Session:
    """One MCP client session: opened by ``open()``, ended by ``close()`` or by the server.

    ``server`` is what the SDK's ``Client`` connects to: a URL, a transport (the stdio one), or
    an in-process ``Server``.
    """

    def __init__(
        self,
        server: Any,
        *,
        mode: str,
        elicitation: bool,
        hooks: Hooks | None = None,
        target: str = "the MCP server",
        watch: bool = False,
    ) -> None:
        self.loop = dedicated_loop("workbench-mcp")
        self._server = server
        self._watch = watch
        self.target = target
        """How the server is named in messages (its URL or command line)."""
        self.hooks = hooks or Hooks()
        self._mode = mode
        self._elicitation = elicitation
        self._closing = asyncio.Event()
        self.lost = asyncio.Event()
        self.lost_reason: str | None = None
        self.client: Client | None = None
        self._owner: asyncio.Task[None] | None = None
        self._scope: anyio.CancelScope | None = None
        self._abandoned = False
        self._infos: dict[int, CallInfo] = {}
        self._listener: asyncio.Task[None] | None = None

    # ── running on the session's loop from anywhere ─────────────────────────────────────────
    async def on_loop(self, coroutine: Coroutine[Any, Any, T]) -> T:
        """Await ``coroutine`` on the session's loop, from any loop; cancellation carries over."""
        if on_loop_thread(self.loop):
            return await coroutine
        future = asyncio.run_coroutine_threadsafe(coroutine, self.loop)
        return await asyncio.wrap_future(future)

    def run_blocking(self, coroutine: Coroutine[Any, Any, T], timeout: float | None) -> T:
        """Run ``coroutine`` on the session's loop and block this thread for its result."""
        if on_loop_thread(self.loop):
            coroutine.close()
            raise RuntimeError(
                "this would block workbench's own event loop; use the async variant "
                "(`await wb.mcp.connect_async(...)`, `await conn.aclose()`)"
            )
        return asyncio.run_coroutine_threadsafe(coroutine, self.loop).result(timeout)

    # ── lifecycle (on the session's loop) ──────────────────────────────────────────────────
    async def open(self, timeout: float | None) -> Listing[types.Tool]:
        """Connect, and return every tool the server lists (its ``stopped`` says where the list
        stopped, if early). Raises ``ConnectionError``, naming ``timeout`` when the handshake
        and the tool list took longer."""
        ready: asyncio.Future[Listing[types.Tool]] = self.loop.create_future()
        self._owner = asyncio.ensure_future(self._own(ready))
        try:
            return await within(_ready(ready), timeout, "the MCP handshake", self.target)
        except RequestTimedOut:
            ready.add_done_callback(_outcome_told)
            raise ConnectionError(
                f"{self.target} did not complete the MCP handshake within {timeout:g} s"
            ) from None

    async def _own(self, ready: asyncio.Future[Listing[types.Tool]]) -> None:
        from workbench import __version__

        server = WatchedTransport(self._server, self._on_wire) if self._watch else self._server
        client = Client(
            server,
            mode=self._mode,
            client_info=types.Implementation(name="workbench", version=__version__),
            elicitation_callback=self._on_elicit if self._elicitation else None,
            list_roots_callback=self._on_roots if self.hooks.roots is not None else None,
            logging_callback=self._on_log,
            log_level=self.hooks.log_level,
            sampling_callback=self._on_sampling if self.hooks.sampling is not None else None,
            message_handler=self._on_message,
        )
        # An anyio scope, not Task.cancel(): the SDK's task groups reliably unwind (and its stdio
        # transport stops the server) only for anyio's own cancellation.
        scope = self._scope = anyio.CancelScope()
        if self._abandoned:
            scope.cancel()
        try:
            with scope:
                async with client:
                    self.client = client
                    await self._ask_log_level(client)
                    listed: Listing[types.Tool] = Listing([], pages=0, stopped=None)
                    if client.server_capabilities.tools is not None:  # a server may offer none
                        listed = await every_page(
                            lambda cursor: client.list_tools(cursor=cursor),
                            lambda page: page.tools,
                            what="tools",
                        )
                    if not ready.done():
                        ready.set_result(listed)
                    await self._closing.wait()
            if scope.cancelled_caught:
                self.lost_reason = "the connection was abandoned"
        except BaseException as exc:  # the owner's end is reported, never raised into the loop
            # An HTTP server's refusal explains a connection that never opened; later 4xx
            # answers (a session the server ended) are described as they are.
            refused = None if ready.done() else getattr(self._server, "refused", None)
            self.lost_reason = oauth_failure(exc) or refused or describe(exc)
            if not ready.done():
                ready.set_exception(ConnectionError(f"could not connect: {self.lost_reason}"))
        finally:
            self.client = None
            if not ready.done():
                ready.set_exception(ConnectionError(f"could not connect: {self.lost_reason}"))
            if self.lost_reason is None:
                self.lost_reason = "the connection was closed"
            self.lost.set()

    async def close(self) -> None:
        """End the session: stdio servers get their stdin closed, then are killed if needed."""
        self._closing.set()
        if self._listener is not None:
            self._listener.cancel()  # closed with the session, not lost: nothing to report
        if self._owner is not None:
            await asyncio.wait({self._owner}, timeout=CLOSE_WAIT_S)

    def abandon(self) -> None:
        """End the session from any thread without waiting: a connection that timed out while
        opening, or was dropped unclosed. A session still opening is cancelled (the SDK's stdio
        transport stops its server process even then)."""

        def end() -> None:
            self._closing.set()
            if self.client is None:
                self._abandoned = True
                if self._scope is not None:
                    self._scope.cancel()

        if not self.loop.is_closed():
            try:
                self.loop.call_soon_threadsafe(end)
            except RuntimeError:
                pass  # the loop closed meanwhile

    # ── calling (on the session's loop) ────────────────────────────────────────────────────
    async def call_tool(
        self,
        name: str,
        arguments: dict[str, Any] | None,
        info: CallInfo,
        on_progress: ProgressFnT,
        *,
        as_task: bool = False,
    ) -> types.CallToolResult:
        """Call a tool (``as_task``: one that runs only as an MCP task, ``_tasks``); raises
        what the SDK raises, or ``ConnectionLost``."""
        client = self.client
        if client is None or self.lost.is_set():
            raise ConnectionLost(self.lost_reason or "not connected")
        polls = 0

        async def on_status(status: str, message: str | None) -> None:
            nonlocal polls
            polls += 1
            await on_progress(polls, None, f"{status}: {message}" if message else status)

        token = _CURRENT.set(info)
        try:
            calling = (
                call_as_task(client, name, arguments, on_status)
                if as_task
                else client.call_tool(
                    name, arguments, progress_callback=on_progress, meta=self._log_meta()
                )
            )
            request = asyncio.ensure_future(calling)
        finally:
            _CURRENT.reset(token)
        key = id(request)
        self._infos[key] = info
        lost = asyncio.ensure_future(self.lost.wait())
        try:
            await asyncio.wait({request, lost}, return_when=asyncio.FIRST_COMPLETED)
        except asyncio.CancelledError:
            request.cancel()  # the SDK sends notifications/cancelled for it
            await asyncio.wait({request}, timeout=CANCEL_WAIT_S)
            raise
        finally:
            lost.cancel()
            self._infos.pop(key, None)
        if not request.done():
            request.cancel()
            raise ConnectionLost(self.lost_reason or "the connection was lost")
        try:
            return request.result()
        except MCPError as exc:
            if exc.code == types.CONNECTION_CLOSED:
                # The server is gone (a stdio server exits, its pipe closes): end the session
                # so the transport is cleaned up and later calls fail at once.
                self.lost_reason = "the server closed the connection"
                self._closing.set()
            raise

    def request(
        self,
        action: Callable[[Client], Coroutine[Any, Any, T]],
        *,
        what: str,
        deprecated: bool = False,
        timeout: float | None = REQUEST_TIMEOUT_S,
    ) -> T:
        """Run ``action`` with the open client and block this thread for its result: past
        ``timeout`` seconds (None: no limit) the request is cancelled and ``RequestTimedOut``
        names ``what`` timed out. ``deprecated=True`` silences the SDK's deprecation warning for
        an action that servers of 2025-11-25 (most of them) still need: roots, logging and
        resource subscriptions are deprecated from protocol 2026-07-28 on."""
        if deprecated:
            action = _without_deprecation_warning(action)
        return self.run_blocking(self.bounded(self.using(action), what, timeout), None)

    async def bounded(
        self, coroutine: Coroutine[Any, Any, T], what: str, timeout: float | None
    ) -> T:
        """``coroutine`` on the session's loop, cancelled past ``timeout`` seconds (then
        ``RequestTimedOut`` names ``what``)."""
        return await self.on_loop(within(coroutine, timeout, what, self.target))

    async def ping(self) -> float:
        """One liveness round trip, in seconds: a ``ping`` over the handshake era; over
        2026-07-28, which removed ping, a ``server/discover`` (the lightest request it has)."""

        async def once(client: Client) -> float:
            started = time.perf_counter()
            if self.modern:
                await client.session.send_discover(client.protocol_version)
            else:
                await _without_deprecation_warning(lambda c: c.send_ping())(client)
            return time.perf_counter() - started

        return await self.using(once)

    def _log_meta(self) -> Any:
        """Over 2026-07-28, where each request asks for its own log messages, the level the
        person asked for last (``set_log_level``); None over the handshake era."""
        level = self.hooks.log_level
        return {types.LOG_LEVEL_META_KEY: level} if self.modern and level is not None else None

    async def _ask_log_level(self, client: Client) -> None:
        """Over the handshake era, ask a server that logs for ``hooks.log_level`` and above
        (``logging/setLevel``): without it a server sends every level, debug included. A
        2026-07-28 connection asks on each request instead (the SDK stamps the level)."""
        level = self.hooks.log_level
        capabilities = client.server_capabilities
        if level is None or capabilities.logging is None or self.modern:
            return
        try:
            await _without_deprecation_warning(lambda c: c.set_logging_level(level))(client)
        except MCPError as exc:  # the connection stands; the person sees why on the log
            if self.hooks.on_fault is not None:
                self.hooks.on_fault(exc)

    @property
    def runs_tasks(self) -> bool:
        """True when tools that run only as MCP tasks can be called on this session."""
        client = self.client
        return client is not None and can_run_tasks(client)

    @property
    def modern(self) -> bool:
        """True when the negotiated protocol is 2026-07-28 or later, where resource updates
        come through ``subscriptions/listen`` instead of ``resources/subscribe``."""
        client = self.client
        return client is not None and client.protocol_version in MODERN_PROTOCOL_VERSIONS

    async def listen_resources(self, uris: list[str]) -> None:
        """Listen for updates of exactly ``uris`` (a 2026-07-28 connection): the stream open
        before is closed, a new one opened for the list (none for an empty list). Returns once
        the server acknowledged it; raises what it answered when it refused."""
        previous, self._listener = self._listener, None
        if previous is not None:
            previous.cancel()
            await asyncio.wait({previous}, timeout=CANCEL_WAIT_S)
        if not uris:
            return
        client = self.client
        if client is None or self.lost.is_set():
            raise ConnectionLost(self.lost_reason or "not connected")
        acknowledged: asyncio.Future[None] = self.loop.create_future()
        self._listener = asyncio.ensure_future(self._listen(client, uris, acknowledged))
        await acknowledged

    async def _listen(
        self, client: Client, uris: list[str], acknowledged: asyncio.Future[None]
    ) -> None:
        try:
            async with client.listen(resource_subscriptions=uris) as stream:
                acknowledged.set_result(None)
                # The SDK hands each event of the stream to the message handler too, as a
                # notifications/resources/updated: that is where it is recorded, once.
                async for _event in stream:
                    continue
        except Exception as exc:  # a refusal goes to the subscriber; a lost stream to the log
            if not acknowledged.done():
                acknowledged.set_exception(exc)
            elif self.hooks.on_fault is not None:
                self.hooks.on_fault(exc)
        finally:
            if not acknowledged.done():
                acknowledged.set_exception(ConnectionLost("the listen stream was closed"))

    async def using(self, action: Callable[[Client], Coroutine[Any, Any, T]]) -> T:
        """Run ``action`` with the open client (on the session's loop); raises
        ``ConnectionLost`` when the session is over."""
        client = self.client
        if client is None or self.lost.is_set():
            raise ConnectionLost(self.lost_reason or "not connected")
        return await action(client)

    async def _on_roots(self, context: ClientRequestContext) -> types.ListRootsResult:
        assert self.hooks.roots is not None  # declared only with a roots source
        return types.ListRootsResult(roots=self.hooks.roots())

    async def _on_sampling(
        self, context: ClientRequestContext, params: types.CreateMessageRequestParams
    ) -> types.CreateMessageResult | types.ErrorData:
        assert self.hooks.sampling is not None  # declared only with a way to answer
        info = self._the_call()
        if info is not None:
            info.log("the server asked for a sampling reply (answered on its own card)")
        answer: types.CreateMessageResult | types.ErrorData = await self.hooks.sampling(params)
        return answer

    async def _on_message(self, message: Exception | types.ServerNotification) -> None:
        """The server's notifications that have no callback of their own, and the transport's
        faults (every other notification went to its callback already)."""
        hooks = self.hooks
        if isinstance(message, Exception) and hooks.on_fault is not None:
            hooks.on_fault(message)
        elif isinstance(message, types.ResourceUpdatedNotification) and hooks.on_updated:
            hooks.on_updated(str(message.params.uri), self._the_call())

    def _on_wire(self, text: str) -> None:
        if self.hooks.on_wire is not None:
            self.hooks.on_wire(text)

    async def _on_log(self, params: types.LoggingMessageNotificationParams) -> None:
        """A server's log message, with the call in flight. From 2026-07-28 a server logs only
        for a request that asked (the level in its ``_meta``, which only ``tools/call`` carries
        here), so the message is that call's; before it, log messages belong to the session,
        and one that arrives while a call runs (a "Roots updated" after the client's roots
        changed) may have nothing to do with it: the hook is told which."""
        if self.hooks.on_log is None:
            return
        self.hooks.on_log(params, self._the_call(), self.modern or _CURRENT.get() is not None)

    def _the_call(self) -> CallInfo | None:
        """The call a server's request or message belongs to: the request's own, or the only
        call in flight (handshake-era messages arrive outside the call's task)."""
        info = _CURRENT.get()
        if info is None and len(self._infos) == 1:
            info = next(iter(self._infos.values()))
        return info

    async def _on_elicit(
        self, context: ClientRequestContext, params: types.ElicitRequestParams
    ) -> types.ElicitResult | types.ErrorData:
        """Answer a server's question for the call it belongs to.

        A form with nothing required is accepted for a call the person approved at its card
        (the server's own approval prompt); anything else is declined, and noted in the call's
        log: workbench never fills in a form on the person's behalf.
        """
        info = self._the_call()
        if info is None:
            return types.ElicitResult(action="decline")
        info.log(f"the server asked: {params.message}")
        required = (
            params.requested_schema.get("required")
            if isinstance(params, types.ElicitRequestFormParams)
            else ["url"]
        )
        if info.approved and not required:
            info.log("answered Allow: the person allowed this call at its card")
            return types.ElicitResult(action="accept", content={})
        info.log(
            "answered Decline: workbench answers only the approval prompt of a call the person "
            "allowed (give the tool permission='always_ask' to be asked at its card)"
        )
        return types.ElicitResult(action="decline")


def _without_deprecation_warning(
    action: Callable[[Client], Coroutine[Any, Any, T]],
) -> Callable[[Client], Coroutine[Any, Any, T]]:
    async def run(client: Client) -> T:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", MCPDeprecationWarning)
            return await action(client)

    return run


def _outcome_told(future: asyncio.Future[Any]) -> None:
    """Mark a future's outcome as seen: a handshake given up ends as the ConnectionError raised
    where it was given up, so the owner's later "abandoned" is no news."""
    if not future.cancelled():
        future.exception()


async def _ready(ready: asyncio.Future[T]) -> T:
    # Shielded: giving up on the handshake must not cancel the owner's future under it (the
    # owner is abandoned instead, which stops a stdio server).
    return await asyncio.shield(ready)


def describe(exc: BaseException) -> str:
    """One line naming what ended a session (the first real error inside task groups)."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    if isinstance(exc, asyncio.CancelledError):
        return "the connection was cancelled"
    refused = refusal(exc)
    if refused is not None:
        return refused
    text = str(exc).strip()
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def stdio_parameters(
    argv: Sequence[str], *, env: dict[str, str] | None, cwd: str | os.PathLike[str] | None
) -> StdioServerParameters:
    """How the SDK starts a stdio server: ``argv``, in ``cwd`` (default: here), with ``env``
    merged over the SDK's safe default environment."""
    if not argv:
        raise ValueError("the server command is empty")
    return StdioServerParameters(
        command=argv[0],
        args=list(argv[1:]),
        env=env,
        cwd=Path(cwd) if cwd is not None else Path.cwd(),
    )


__all__ = ["CallInfo", "ConnectionLost", "Hooks", "Session", "describe", "stdio_parameters"]
