"""The JSON-RPC wire of a connection, watched: a reply that cannot be read, or that comes under an
id no request of ours has, fails the request it must have answered at once, and is put on the
connection's log; without this the request would wait out its whole time limit and leave no
trace.

``WatchedTransport`` wraps a stream transport (stdio, HTTP, SSE): it notes the id of each
request the client writes and each one it gives up (``notifications/cancelled``), and reads
every incoming message before the SDK does. A line the SDK could not read as JSON-RPC names its
request when an ``"id"`` can be found in it; otherwise it, like a reply under an unknown id, is
the reply of every request in flight, since none of them can get its own any more. Each such
request gets a JSON-RPC error (``PARSE_ERROR``) saying what came instead, so its call ends
``unavailable`` at once. A late reply to a request given up is left to the SDK, which drops it.
"""

from __future__ import annotations

import collections
import json
import re
from collections.abc import Awaitable, Callable
from typing import Any, Self

import mcp_types as types
from mcp.shared.message import SessionMessage
from pydantic import ValidationError

HEAD_CHARS = 200
"""How much of an unreadable message the error and the log show."""
GIVEN_UP_KEPT = 10_000
"""How many ids of requests given up are remembered (their late replies are expected)."""
_ID = re.compile(r'"id"\s*:\s*(-?\d{1,18}|"(?:[^"\\]|\\.){0,200}")')

Fault = Callable[[str], None]
"""Receives one line saying what went wrong on the wire (for the connection's log)."""


def _key(request_id: Any) -> str:
    """One key for ids the SDK treats as one (``7`` and ``"7"``)."""
    return str(request_id)


class InFlight:
    """The requests the client wrote and has no reply to yet, and the ids it gave up."""

    def __init__(self) -> None:
        self.requests: dict[str, tuple[types.RequestId, str]] = {}
        self.given_up: collections.OrderedDict[str, None] = collections.OrderedDict()

    def sent(self, message: types.JSONRPCMessage) -> None:
        if isinstance(message, types.JSONRPCRequest):
            self.requests[_key(message.id)] = (message.id, message.method)
        elif (
            isinstance(message, types.JSONRPCNotification)
            and message.method == "notifications/cancelled"
            and isinstance(message.params, dict)
            and "requestId" in message.params
        ):
            key = _key(message.params["requestId"])
            self.requests.pop(key, None)
            self.given_up[key] = None
            while len(self.given_up) > GIVEN_UP_KEPT:
                self.given_up.popitem(last=False)

    def answered(self, request_id: types.RequestId | None) -> bool:
        """True when ``request_id`` is a request of ours (in flight, or given up)."""
        key = _key(request_id)
        return self.requests.pop(key, None) is not None or key in self.given_up


def _head(text: str) -> str:
    return text if len(text) <= HEAD_CHARS else text[:HEAD_CHARS] + "…"


def unreadable(exc: Exception) -> tuple[str | None, str] | None:
    """The id an unreadable message names (None when none can be found) and its head, for a
    message the SDK could not read; None for another fault (a transport's own)."""
    if not isinstance(exc, ValidationError):
        return None
    for error in exc.errors(include_url=False):
        given = error.get("input")
        if isinstance(given, dict):
            return (None if "id" not in given else _key(given["id"])), _head(json.dumps(given))
        if isinstance(given, str | bytes):
            text = given if isinstance(given, str) else given.decode("utf-8", "replace")
            found = _ID.search(text[:4096])
            raw = None if found is None else found.group(1)
            named = None if raw is None else _key(raw[1:-1] if raw.startswith('"') else raw)
            return named, _head(text)
    return None, _head(str(exc))


class _Stream:
    """A transport's stream, wrapped: closing it closes the stream inside."""

    _inner: Any

    async def aclose(self) -> None:
        await self._inner.aclose()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc: object) -> bool | None:
        await self.aclose()
        return None


class WatchedRead(_Stream):
    """The read stream of a transport, every message read here first (see the module)."""

    def __init__(self, inner: Any, flight: InFlight, fault: Fault) -> None:
        self._inner = inner
        self._flight = flight
        self._fault = fault
        self._queued: collections.deque[SessionMessage | Exception] = collections.deque()

    @property
    def last_context(self) -> Any:
        """The sender's context of the last message (the SDK reads it where a stream has it)."""
        return getattr(self._inner, "last_context", None)

    async def receive(self) -> SessionMessage | Exception:
        return await self._next(self._inner.receive)

    async def _next(
        self, get: Callable[[], Awaitable[SessionMessage | Exception]]
    ) -> SessionMessage | Exception:
        if self._queued:
            return self._queued.popleft()
        while True:
            checked = self._check(await get())
            if checked:
                self._queued.extend(checked[1:])
                return checked[0]

    def _check(self, item: SessionMessage | Exception) -> list[SessionMessage | Exception]:
        """What the SDK reads instead of ``item``: ``item`` itself, or errors for the requests
        it must have answered."""
        flight = self._flight
        if isinstance(item, Exception):
            found = unreadable(item)
            if found is None:
                return [item]
            named, head = found
            if named is not None and named in flight.requests:
                return self._fail([named], f"its reply could not be read as JSON-RPC: {head!r}")
            if flight.requests:
                what = f"a message that could not be read as JSON-RPC came instead: {head!r}"
                return self._fail(list(flight.requests), what)
            self._fault(f"the server sent a message that could not be read as JSON-RPC: {head!r}")
            return []
        message = item.message
        if isinstance(message, types.JSONRPCResponse | types.JSONRPCError):
            if message.id is None or flight.answered(message.id):
                return [item]
            if flight.requests:
                what = (
                    f"a reply came under id {message.id!r}, which no request of this client "
                    "has, so it cannot be told which request it answers"
                )
                return self._fail(list(flight.requests), what)
            self._fault(f"the server replied under id {message.id!r}, which no request has")
            return []
        return [item]

    def _fail(self, keys: list[str], what: str) -> list[SessionMessage | Exception]:
        failed: list[SessionMessage | Exception] = []
        for key in keys:
            request_id, method = self._flight.requests.pop(key)
            self._fault(f"{method} (id {request_id!r}) failed: {what}")
            error = types.ErrorData(
                code=types.PARSE_ERROR,
                message=f"the reply to {method} (id {request_id!r}) never came: {what}",
            )
            reply = types.JSONRPCError(jsonrpc="2.0", id=request_id, error=error)
            failed.append(SessionMessage(reply))
        return failed

    def __aiter__(self) -> WatchedRead:
        return self

    async def __anext__(self) -> SessionMessage | Exception:
        return await self._next(self._inner.__anext__)  # its end is the inner stream's


class WatchedWrite(_Stream):
    """The write stream of a transport, noting each request written and each given up."""

    def __init__(self, inner: Any, flight: InFlight) -> None:
        self._inner = inner
        self._flight = flight

    async def send(self, item: SessionMessage, /) -> None:
        self._flight.sent(item.message)
        await self._inner.send(item)


class WatchedTransport:
    """``inner`` (a transport the SDK's ``Client`` enters once), its wire watched; ``fault``
    receives what went wrong on it."""

    def __init__(self, inner: Any, fault: Fault) -> None:
        self._inner = inner
        self._fault = fault

    async def __aenter__(self) -> tuple[WatchedRead, WatchedWrite]:
        read, write = await self._inner.__aenter__()
        flight = InFlight()
        return WatchedRead(read, flight, self._fault), WatchedWrite(write, flight)

    async def __aexit__(self, *exc: Any) -> bool | None:
        result: bool | None = await self._inner.__aexit__(*exc)
        return result


__all__ = [
    "InFlight",
    "WatchedRead",
    "WatchedTransport",
    "WatchedWrite",
    "unreadable",
]
