"""A resource read is a call: ``conn.read(uri)`` runs ``mcp_read_resource``, so a resource gets
what a tool's result gets.

Its receipt is what a host shows a model: the text contents verbatim, each blob saved as an
artifact and named by kind, size and path. A text longer than the registry's text budget is
cut head and tail like any text result, the whole kept as the artifact ``text.txt`` that the
receipt names (``artifact_read`` pages it), so a cell ending in ``conn.read(big)`` shows a
bounded card. The URI is the call's argument and its summary's first word. The call is recorded
in the connection's history, and a read that fails or passes its time limit is a failure
envelope saying why, not a traceback.

The calls run in a registry of their own that shares the connection's history, artifacts and
budgets, so ``mcp_read_resource`` is never offered to a model as one of the connection's tools.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import mcp_types as types

from workbench.envelope import Envelope, success
from workbench.mcp._limits import REQUEST_TIMEOUT_S, checked_timeout
from workbench.mcp._results import content_text, envelope_from_exception
from workbench.registry import Registry

if TYPE_CHECKING:
    from workbench.context import ToolContext
    from workbench.mcp._session import Session
    from workbench.runtime import Call

READ_TOOL_NAME = "mcp_read_resource"
"""The tool whose calls are the connection's resource reads."""
INPUT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "uri": {"type": "string", "description": "the resource's URI"},
        "timeout": {
            "type": ["number", "null"],
            "description": "how long the server may take to answer, in seconds (null: no limit)",
        },
    },
    "required": ["uri"],
    "additionalProperties": False,
}


class Reader:
    """Reads one connection's resources as calls of ``mcp_read_resource``."""

    def __init__(self, session: Session, tools: Registry) -> None:
        self.session = session
        self.registry = Registry(
            history=tools.history, artifacts=tools.artifacts.root, budgets=tools.budgets
        )
        self.registry.register(
            self._read,
            name=READ_TOOL_NAME,
            description="Read a resource of an MCP server",
            input_schema=INPUT_SCHEMA,
            family="text",
            ownership="mcp",
            read_only=True,
            destructive=False,
            idempotent=True,
            timeout=None,  # the request's own limit bounds it, and names it
        )

    def start(self, uri: str, timeout: float | None = REQUEST_TIMEOUT_S) -> Call:
        """Start reading ``uri`` (at most ``timeout`` seconds); returns the call at once."""
        checked_timeout(timeout)
        return self.registry.invoke(READ_TOOL_NAME, {"uri": uri, "timeout": timeout})

    def read(self, uri: str, timeout: float | None = REQUEST_TIMEOUT_S) -> Envelope:
        """The envelope of reading ``uri``, once the read ended."""
        return self.start(uri, timeout).wait()

    async def _read(self, arguments: dict[str, Any], ctx: ToolContext) -> Envelope:
        uri: str = arguments["uri"]
        session = self.session
        try:
            result = await session.bounded(
                session.using(lambda client: client.read_resource(uri)),
                f"resources/read of {uri!r}",
                arguments.get("timeout"),
            )
        except Exception as exc:  # the one MCP table names it (timeout, refusal, lost server)
            return envelope_from_exception(
                exc, tool_name=READ_TOOL_NAME, server=session.target, over=session.lost.is_set()
            )
        sink = ctx.artifacts

        def save(name: str, data: bytes) -> tuple[int, str]:
            index = sink.write(name, data)
            return index, sink.store.ref(sink.path(index)).path

        blocks = [types.EmbeddedResource(type="resource", resource=c) for c in result.contents]
        text = content_text(blocks, save)
        count = len(result.contents)
        return success(READ_TOOL_NAME, {"text": text}, summary=f"{uri}: {count} contents")


__all__ = ["INPUT_SCHEMA", "READ_TOOL_NAME", "Reader"]
