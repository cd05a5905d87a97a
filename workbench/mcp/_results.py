"""Results across MCP: an envelope as a ``CallToolResult``, and any MCP outcome as an envelope.

Serving: the receipt is the one text content block (what a model reads, success or error);
``isError`` is the envelope's status; ``structuredContent`` is sent only by a tool that
advertises an output schema, and is its own result (``structured_content``); the canonical
record travels in ``_meta[RECORD_META_KEY]`` for programs (workbench's own client among them).

Connecting, first match wins:

- ``_meta[RECORD_META_KEY]`` holds a canonical record → that envelope, rebuilt as it was sent, so
  a workbench-to-workbench round trip changes nothing but the call id;
- ``isError`` → a failure: the kind a wire failure or a workbench failure receipt in the text
  names, else ``execution_error`` with the text as its message;
- otherwise a text-family success whose text is what an MCP host puts in front of a model: the
  text blocks, each image, audio clip or blob saved as an artifact and named by kind, size and
  path, resource links listed, embedded text resources inlined. The structured content, if any,
  rides along as ``result["structured"]`` (a bounded stand-in when it is large; the full value
  is an artifact). The text family cuts a long text head and tail, keeping the full text.

Exceptions while calling (``envelope_from_exception``) follow one table: a closed connection, a
transport failure or a protocol error → ``unavailable``; a request timeout → ``timeout``; the
server's "invalid params" → ``invalid_args``; a result that breaks its own output schema →
``invalid_output``. An ``unavailable`` failure of a connection that is over (the server exited,
the session closed) is not retryable and says only a new ``connect`` helps; a reply that could
not be read or matched to its request (``PARSE_ERROR``, ``_wire``) is not retryable either.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

import mcp_types as types
from pydantic import ValidationError

from workbench.envelope import (
    Envelope,
    ErrorKind,
    failure,
    is_canonical,
    known_kind,
    preview,
    success,
)
from workbench.mcp._session import ConnectionLost

RECORD_META_KEY = "workbench.dev/record"
"""The ``_meta`` key of a served result that carries the call's canonical record."""

Save = Callable[[str, bytes], tuple[int, str]]
"""Writes an artifact of the call; returns its index in the call's artifacts and its path."""

_RECEIPT_HEAD = re.compile(r"\AError \(([a-z_]+)\): (.+)")
_RECEIPT_FIELDS = {"field": "field: ", "expected": "expected: ", "recovery_hint": "hint: "}


def result_from_envelope(
    envelope: Envelope, receipt: str, structured: Any = None
) -> types.CallToolResult:
    """The ``tools/call`` result of a finished call: the receipt as text, ``structured`` (the
    tool's own result, for a tool with an output schema) as structured content, the canonical
    record in ``_meta``, ``isError`` from the status."""
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=receipt)],
        structured_content=structured if envelope.ok else None,
        is_error=not envelope.ok,
        _meta={RECORD_META_KEY: envelope.canonical()},
    )


def record_of(result: types.CallToolResult) -> dict[str, Any] | None:
    """The canonical record a workbench server put in the result's ``_meta``, if any."""
    record = (result.meta or {}).get(RECORD_META_KEY)
    return record if isinstance(record, dict) and is_canonical(record) else None


@dataclass(frozen=True)
class Limits:
    """How much of a foreign result is kept inline (the rest goes to artifacts)."""

    structured_chars: int = 20_000


def envelope_from_result(
    result: types.CallToolResult,
    *,
    tool_name: str,
    save: Save | None = None,
    limits: Limits | None = None,
) -> Envelope:
    """The envelope of an MCP tool result (see the module docstring for the rules)."""
    canonical = _canonical(record_of(result))
    if canonical is not None:
        return canonical
    text = content_text(result.content, save)
    if result.is_error:
        return _failure_from_text(text, tool_name)
    structured = result.structured_content
    if not result.content and structured is not None:
        # No content at all: the JSON is the only thing a host could show.
        text = json.dumps(structured, ensure_ascii=False)
    value: dict[str, Any] = {"text": text}
    if structured is not None:
        value["structured"] = _bounded(structured, save, limits or Limits())
    first_line = next((line.strip() for line in text.splitlines() if line.strip()), "")
    summary = first_line or f"{tool_name} returned no text"
    return success(tool_name, value, summary=summary[:200])


def _canonical(record: dict[str, Any] | None) -> Envelope | None:
    if record is None:
        return None
    try:
        return Envelope.from_canonical(record)
    except ValidationError:
        return None


def _bounded(structured: Any, save: Save | None, limits: Limits) -> Any:
    """``structured`` itself while its JSON is small; else a preview with the full value as the
    artifact ``structured.json`` (the json family's stand-in shape)."""
    compact = json.dumps(structured, ensure_ascii=False)
    if len(compact) <= limits.structured_chars or save is None:
        return structured
    full = json.dumps(structured, ensure_ascii=False, indent=2)
    index, _path = save("structured.json", full.encode("utf-8"))
    return {
        "kind": "json",
        "preview": preview(full, limits.structured_chars).text,
        "truncated": True,
        "chars": len(compact),
        "result_artifact": index,
    }


def _failure_from_text(text: str, tool_name: str) -> Envelope:
    """A failure whose kind the text names when it is a wire failure or a workbench failure
    receipt; ``execution_error`` otherwise."""
    try:
        wired = Envelope.from_wire(text)
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


def content_text(blocks: Iterable[types.ContentBlock], save: Save | None) -> str:
    """The content blocks as the text a host shows a model: text verbatim; binary content saved
    and named by kind, size and path; resource links listed."""
    parts = []
    for index, block in enumerate(blocks):
        if isinstance(block, types.TextContent):
            parts.append(block.text)
        elif isinstance(block, types.ImageContent | types.AudioContent):
            name = f"{block.type}-{index}{_suffix(block.mime_type)}"
            parts.append(_binary(block.type, name, block.mime_type, block.data, save))
        elif isinstance(block, types.EmbeddedResource):
            resource = block.resource
            if isinstance(resource, types.TextResourceContents):
                parts.append(f"[resource {resource.uri}]\n{resource.text}")
            else:
                mime = resource.mime_type or "application/octet-stream"
                name = f"resource-{index}{_suffix(mime)}"
                shown = f"blob {resource.uri}"
                parts.append(_binary(shown, name, mime, resource.blob, save))
        else:
            parts.append(_link(block))
    return "\n".join(parts)


def _link(block: types.ResourceLink) -> str:
    details = [block.mime_type] if block.mime_type else []
    if block.size is not None:
        details.append(f"{block.size} bytes")
    label = f"{block.name} " if block.name and block.name != str(block.uri) else ""
    extra = f" ({', '.join(details)})" if details else ""
    description = f": {block.description}" if block.description else ""
    return f"[resource link: {label}<{block.uri}>{extra}{description}]"


_SUFFIXES = {
    "image/png": ".png",
    "image/jpeg": ".jpg",
    "image/gif": ".gif",
    "image/webp": ".webp",
    "image/svg+xml": ".svg",
    "audio/wav": ".wav",
    "audio/x-wav": ".wav",
    "audio/mpeg": ".mp3",
    "audio/ogg": ".ogg",
    "application/json": ".json",
    "application/pdf": ".pdf",
    "application/gzip": ".gz",
    "text/plain": ".txt",
}


def _suffix(mime: str) -> str:
    return _SUFFIXES.get(mime.split(";")[0].strip().lower(), ".bin")


def _binary(kind: str, name: str, mime: str, data: str, save: Save | None) -> str:
    try:
        raw = base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError):
        return f"[{kind} ({mime}): content that is not valid base64, not kept]"
    if save is None:
        return f"[{kind} ({mime}, {len(raw)} bytes), not kept]"
    _index, path = save(name, raw)
    return f"[{kind} ({mime}, {len(raw)} bytes) saved as {path}]"


# ── exceptions while calling: one table ─────────────────────────────────────────────────────

_CODE_KINDS: dict[int, tuple[ErrorKind, str]] = {
    types.CONNECTION_CLOSED: (ErrorKind.UNAVAILABLE, "the MCP server closed the connection"),
    types.REQUEST_TIMEOUT: (ErrorKind.TIMEOUT, "the MCP server did not answer in time"),
    types.INVALID_PARAMS: (ErrorKind.INVALID_ARGS, "the MCP server refused the arguments"),
    types.PARSE_ERROR: (ErrorKind.UNAVAILABLE, "the MCP server broke the protocol"),
    types.INVALID_REQUEST: (ErrorKind.UNAVAILABLE, "the MCP server refused the request"),
}
_HINTS: dict[ErrorKind, str] = {
    ErrorKind.UNAVAILABLE: "the MCP server is unreachable or broke the protocol; retry later",
    ErrorKind.TIMEOUT: "retry with a smaller request",
    ErrorKind.INVALID_ARGS: "fix the arguments to match the tool's input schema",
    ErrorKind.INVALID_OUTPUT: "the server's tool is broken; do not retry unchanged",
}
OVER_HINT = (
    "the connection to this MCP server is over: only a new wb.mcp.connect(...) to it brings "
    "its tools back; retrying this call cannot help"
)
REFUSED_HINT = (
    "retrying the same request cannot help; a server that asks its client something (sampling, "
    "elicitation, roots) over the handshake era's back-channel cannot do so over protocol "
    "2026-07-28: connect with wb.mcp.connect(..., mode='legacy')"
)
BROKEN_HINT = (
    "the server's reply could not be read or matched to its request (it is on the "
    "connection's log); retrying is unlikely to help until the server is fixed"
)


def envelope_from_exception(
    exc: BaseException, *, tool_name: str, server: str, over: bool = False
) -> Envelope:
    """The failure of a call that raised instead of returning a result (see the module table).

    ``over``: the connection ended meanwhile, so the failure is not retryable and says that
    only a new connection helps (as it does by itself for a closed connection)."""
    from mcp.shared.exceptions import MCPError

    leaf = _leaf(exc)
    details: dict[str, Any] = {"server": server, "exception": type(leaf).__name__}
    hint: str | None = None
    if isinstance(leaf, MCPError):
        kind, prefix = _CODE_KINDS.get(
            leaf.code, (ErrorKind.UNAVAILABLE, "the MCP server answered with a protocol error")
        )
        details["mcp_error_code"] = leaf.code
        if leaf.data is not None:
            details["mcp_error_data"] = _jsonable(leaf.data)
        message = f"{prefix}: {leaf.message}" if leaf.message else prefix
        over = over or leaf.code == types.CONNECTION_CLOSED
        if leaf.code == types.PARSE_ERROR:
            hint = BROKEN_HINT
        elif leaf.code == types.INVALID_REQUEST:
            hint = REFUSED_HINT
    elif isinstance(leaf, RuntimeError):
        # The SDK's client raises RuntimeError when structured content breaks the tool's own
        # output schema (its other RuntimeErrors cannot happen on this path).
        kind, message = ErrorKind.INVALID_OUTPUT, f"the MCP server's result was refused: {leaf}"
    elif isinstance(leaf, ValidationError):
        kind = ErrorKind.UNAVAILABLE
        message = f"the MCP server sent a malformed result: {leaf.error_count()} problems"
    elif isinstance(leaf, TimeoutError):  # a limit of ours (RequestTimedOut) names itself
        kind, message = ErrorKind.TIMEOUT, str(leaf) or "the MCP server did not answer in time"
    else:
        kind = ErrorKind.UNAVAILABLE
        text = str(leaf).strip()
        message = f"the MCP connection failed: {type(leaf).__name__}" + (
            f": {text}" if text else ""
        )
        over = over or isinstance(leaf, ConnectionLost)
    if over and kind is ErrorKind.UNAVAILABLE:
        return failure(
            kind,
            message,
            tool=tool_name,
            details={**details, "connection": "over"},
            recovery_hint=OVER_HINT,
            retryable=False,
        )
    if hint is not None:
        return failure(
            kind, message, tool=tool_name, details=details, recovery_hint=hint, retryable=False
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


__all__ = [
    "RECORD_META_KEY",
    "Limits",
    "Save",
    "content_text",
    "envelope_from_exception",
    "envelope_from_result",
    "record_of",
    "result_from_envelope",
]
