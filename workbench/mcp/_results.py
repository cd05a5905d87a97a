"""Results across MCP: an envelope as a ``CallToolResult``, and any MCP outcome as an envelope.

Serving: the receipt is the one text content block (what a model reads), the canonical record is
``structuredContent`` (what a program reads), and ``isError`` is the envelope's status.

Connecting, first match wins:

- ``structuredContent`` that is a canonical record → that envelope, rebuilt as it was sent, so a
  workbench-to-workbench round trip changes nothing but the call id;
- ``isError`` → a failure: the kind a seed 000 wire failure or a workbench failure receipt in the
  text names, else ``execution_error`` with the text as its message;
- other ``structuredContent`` → the json family, the structured value as the result;
- content blocks → the text family, ``{"text": ...}``; binary blocks are saved as artifacts and
  named in the text.

Exceptions while calling (``envelope_from_exception``) follow one table: a closed connection, a
transport failure or a protocol error → ``unavailable``; a request timeout → ``timeout``; the
server's "invalid params" → ``invalid_args``; a result that breaks its own output schema →
``invalid_output``.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from collections.abc import Callable, Iterable
from typing import Any

import mcp_types as types
from pydantic import ValidationError

from workbench._builders import failure, success
from workbench._envelope import Envelope
from workbench._errors import ErrorKind, known_kind
from workbench._wire import from_wire, is_canonical

SaveBinary = Callable[[str, bytes], str]
"""Writes a binary content block as an artifact and returns its path."""

_RECEIPT_HEAD = re.compile(r"\AError \(([a-z_]+)\): (.+)")
_RECEIPT_FIELDS = {"field": "field: ", "expected": "expected: ", "recovery_hint": "hint: "}


def result_from_envelope(envelope: Envelope, receipt: str) -> types.CallToolResult:
    """The ``tools/call`` result of a finished call: receipt as text, canonical record as
    structured content, ``isError`` from the status."""
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=receipt)],
        structured_content=envelope.canonical(),
        is_error=not envelope.ok,
    )


def envelope_from_result(
    result: types.CallToolResult, *, tool_name: str, save: SaveBinary | None = None
) -> Envelope:
    """The envelope of an MCP tool result (see the module docstring for the rules)."""
    canonical = _canonical(result.structured_content)
    if canonical is not None:
        return canonical
    text = _content_text(result.content, save)
    if result.is_error:
        return _failure_from_text(text, tool_name)
    if result.structured_content is not None:
        return success(tool_name, result.structured_content)
    return success(tool_name, text=text)


def _canonical(structured: Any) -> Envelope | None:
    if not isinstance(structured, dict) or not is_canonical(structured):
        return None
    try:
        return Envelope.from_canonical(structured)
    except ValidationError:
        return None


def _failure_from_text(text: str, tool_name: str) -> Envelope:
    """A failure whose kind the text names when it is a seed 000 wire failure or a workbench
    failure receipt; ``execution_error`` otherwise."""
    try:
        wired = from_wire(text)
    except ValueError:
        wired = None
    if wired is not None and wired.error is not None:
        return wired.replace(tool_name=tool_name)
    head = _RECEIPT_HEAD.match(text)
    if head is not None and known_kind(head.group(1)):
        fields = {
            name: line.removeprefix(prefix)
            for line in text.splitlines()[1:]
            for name, prefix in _RECEIPT_FIELDS.items()
            if line.startswith(prefix)
        }
        return failure(
            head.group(1),
            head.group(2),
            tool=tool_name,
            field=fields.get("field"),
            expected=fields.get("expected"),
            recovery_hint=fields.get("recovery_hint"),
        )
    message = text.strip() or "the MCP server reported an error without a message"
    return failure(ErrorKind.EXECUTION_ERROR, message, tool=tool_name)


def _content_text(blocks: Iterable[types.ContentBlock], save: SaveBinary | None) -> str:
    parts = []
    for index, block in enumerate(blocks):
        if isinstance(block, types.TextContent):
            parts.append(block.text)
        elif isinstance(block, types.ImageContent | types.AudioContent):
            parts.append(_binary(f"{block.type}-{index}", block.mime_type, block.data, save))
        elif isinstance(block, types.EmbeddedResource):
            resource = block.resource
            if isinstance(resource, types.TextResourceContents):
                parts.append(resource.text)
            else:
                mime = resource.mime_type or "application/octet-stream"
                parts.append(_binary(f"resource-{index}", mime, resource.blob, save))
        else:
            parts.append(f"[resource link: {block.uri}]")
    return "\n".join(parts)


def _binary(name: str, mime: str, data: str, save: SaveBinary | None) -> str:
    try:
        raw = base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError):
        return f"[{mime} content that is not valid base64]"
    if save is None:
        return f"[{mime}, {len(raw)} bytes, not kept]"
    return f"[{mime}, {len(raw)} bytes: {save(name, raw)}]"


# ── exceptions while calling: one table ─────────────────────────────────────────────────────

_CODE_KINDS: dict[int, tuple[ErrorKind, str]] = {
    types.CONNECTION_CLOSED: (ErrorKind.UNAVAILABLE, "the MCP server closed the connection"),
    types.REQUEST_TIMEOUT: (ErrorKind.TIMEOUT, "the MCP server did not answer in time"),
    types.INVALID_PARAMS: (ErrorKind.INVALID_ARGS, "the MCP server refused the arguments"),
}
_HINTS: dict[ErrorKind, str] = {
    ErrorKind.UNAVAILABLE: "the MCP server is unreachable or broke the protocol; retry later",
    ErrorKind.TIMEOUT: "retry with a smaller request",
    ErrorKind.INVALID_ARGS: "fix the arguments to match the tool's input schema",
    ErrorKind.INVALID_OUTPUT: "the server's tool is broken; do not retry unchanged",
}


def envelope_from_exception(exc: BaseException, *, tool_name: str, server: str) -> Envelope:
    """The failure of a call that raised instead of returning a result (see the module table)."""
    from mcp.shared.exceptions import MCPError

    leaf = _leaf(exc)
    details: dict[str, Any] = {"server": server, "exception": type(leaf).__name__}
    if isinstance(leaf, MCPError):
        kind, prefix = _CODE_KINDS.get(
            leaf.code, (ErrorKind.UNAVAILABLE, "the MCP server answered with a protocol error")
        )
        details["mcp_error_code"] = leaf.code
        if leaf.data is not None:
            details["mcp_error_data"] = _jsonable(leaf.data)
        message = f"{prefix}: {leaf.message}" if leaf.message else prefix
    elif isinstance(leaf, RuntimeError):
        # The SDK's client raises RuntimeError when structured content breaks the tool's own
        # output schema (its other RuntimeErrors cannot happen on this path).
        kind, message = ErrorKind.INVALID_OUTPUT, f"the MCP server's result was refused: {leaf}"
    elif isinstance(leaf, ValidationError):
        kind = ErrorKind.UNAVAILABLE
        message = f"the MCP server sent a malformed result: {leaf.error_count()} problems"
    else:
        kind = ErrorKind.UNAVAILABLE
        text = str(leaf).strip()
        message = f"the MCP connection failed: {type(leaf).__name__}" + (
            f": {text}" if text else ""
        )
    return failure(kind, message, tool=tool_name, details=details, recovery_hint=_HINTS.get(kind))


def _leaf(exc: BaseException) -> BaseException:
    """The first non-group exception inside ``exc`` (task groups wrap transport failures)."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return exc


def _jsonable(value: Any) -> Any:
    try:
        json.dumps(value)
    except (TypeError, ValueError):
        return repr(value)
    return value


__all__ = ["envelope_from_exception", "envelope_from_result", "result_from_envelope"]
