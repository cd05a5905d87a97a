"""The stdio transport of a served registry: the SDK's, with a cap on the size of each message.

Over HTTP the SDK answers a request body over its limit with 413 before reading it; over stdio
a message is one line, and the SDK's reader holds any line whole, however long. Here stdin is
read in chunks: a line longer than ``max_message_bytes`` (by default the HTTP limit) is never
held. It is read through to its end and dropped, and the client gets a JSON-RPC error
(``-32600``, Invalid Request) naming the message's size and the limit, under the request's id
when its first bytes name one. Memory stays within a small multiple of the limit whatever a
client sends, and the connection goes on serving.

While serving, file descriptor 0 reads the null device (the SDK diverts stdout the same way),
so a tool body or a command it starts cannot read the protocol's bytes.
"""

from __future__ import annotations

import os
import re
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any, cast

import anyio
import mcp_types as types
from mcp.server.stdio import stdio_server
from mcp.server.transport_security import DEFAULT_MAX_REQUEST_BODY_SIZE
from mcp.shared.message import SessionMessage

MAX_MESSAGE_BYTES = DEFAULT_MAX_REQUEST_BODY_SIZE
"""The default cap on one stdio message: the same as the SDK's HTTP request body limit."""
CHUNK_BYTES = 1 << 16
HEAD_BYTES = 512
"""How much of a dropped message is kept to find the request's id in it."""
_ID = re.compile(rb'"id"\s*:\s*(-?\d{1,18}|"(?:[^"\\]|\\.){0,200}")')


def too_large(size: int, limit: int, head: bytes) -> types.JSONRPCError:
    """The error answering a message of ``size`` bytes over ``limit``; ``head`` is its start."""
    found = _ID.search(head)
    request_id: int | str | None = None
    if found is not None:
        raw = found.group(1).decode("utf-8", "replace")
        request_id = int(raw) if not raw.startswith('"') else raw[1:-1]
    message = (
        f"message too large: {size} bytes, over this server's limit of {limit} bytes per "
        "message (its HTTP transport answers 413 over the same limit); it was not read"
    )
    error = types.ErrorData(
        code=types.INVALID_REQUEST, message=message, data={"size": size, "limit": limit}
    )
    return types.JSONRPCError(jsonrpc="2.0", id=request_id, error=error)


class BoundedLines:
    """The lines of the wire descriptor as text, each at most ``limit`` bytes; longer ones are
    answered on ``replies`` (set once the transport is open) and skipped."""

    def __init__(self, fd: int, limit: int) -> None:
        self.fd = fd
        self.limit = limit
        self.replies: Any = None
        self._buffer = bytearray()
        self._eof = False

    def __aiter__(self) -> BoundedLines:
        return self

    async def __anext__(self) -> str:
        while True:
            end = self._buffer.find(b"\n")
            if end >= 0:
                line = bytes(self._buffer[:end])
                del self._buffer[: end + 1]
                if len(line) > self.limit:
                    await self._refuse(len(line), line[:HEAD_BYTES])
                    continue
                return line.decode("utf-8", "replace")
            if self._eof:
                if self._buffer and len(self._buffer) <= self.limit:
                    rest = bytes(self._buffer)
                    self._buffer.clear()
                    return rest.decode("utf-8", "replace")
                raise StopAsyncIteration
            if len(self._buffer) > self.limit:
                await self._skip_long_line()
                continue
            await self._fill()

    async def _fill(self) -> None:
        chunk = await anyio.to_thread.run_sync(
            os.read, self.fd, CHUNK_BYTES, abandon_on_cancel=True
        )
        if chunk:
            self._buffer += chunk
        else:
            self._eof = True

    async def _skip_long_line(self) -> None:
        """Drop the line being read (already over the limit) through its newline, counting."""
        head = bytes(self._buffer[:HEAD_BYTES])
        size = len(self._buffer)
        self._buffer.clear()
        while not self._eof:
            await self._fill()
            end = self._buffer.find(b"\n")
            if end >= 0:
                size += end
                del self._buffer[: end + 1]
                break
            size += len(self._buffer)
            self._buffer.clear()
        await self._refuse(size, head)

    async def _refuse(self, size: int, head: bytes) -> None:
        if self.replies is None:
            return
        try:
            await self.replies.send(SessionMessage(too_large(size, self.limit, head)))
        except (anyio.ClosedResourceError, anyio.BrokenResourceError):
            return  # the session is over: nobody is left to tell


@asynccontextmanager
async def bounded_stdio(limit: int = MAX_MESSAGE_BYTES) -> AsyncIterator[tuple[Any, Any]]:
    """The SDK's stdio streams, reading stdin through ``BoundedLines``."""
    wire = os.dup(0)
    os.set_inheritable(wire, False)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    lines = BoundedLines(wire, limit)
    try:
        async with stdio_server(stdin=cast(Any, lines)) as (read_stream, write_stream):
            lines.replies = write_stream
            yield read_stream, write_stream
    finally:
        # The wire descriptor stays open: a worker thread may still be blocked reading it.
        os.dup2(wire, 0)


__all__ = ["MAX_MESSAGE_BYTES", "BoundedLines", "bounded_stdio", "too_large"]
