"""The reader of MCP JSON-RPC traffic as JSON lines (``read``; ``has_jsonrpc`` is the formats'
table's mark of it): ``tools/call`` requests and the responses with the same ``id``, and
``tools/list`` responses for the tool definitions.

A line is one JSON-RPC message (or a batch of them), or a capture record wrapping one as
``{"timestamp": ..., "message": {...}}``; a timestamp (seconds since the epoch or ISO 8601)
gives the call's timing. The receipt is the result's text content blocks joined by newlines
(other blocks are named in the row's warnings); ``isError: true`` or a JSON-RPC ``error``
(whose ``message`` is the receipt) marks a failure.
"""

from __future__ import annotations

import datetime
from collections.abc import Iterator
from typing import Any

from workbench.transcripts._parsed import (
    ImportedCall,
    Pairing,
    Parsed,
    Unreadable,
    schemas_of,
    sent_call,
)
from workbench.transcripts._source import HEAD_LINES, Opened, Source

NAME = "mcp_jsonl"
EXPECTED = "JSON lines of JSON-RPC messages"
WRAPPER_KEYS = ("message", "payload", "data")
TIME_KEYS = ("timestamp", "ts", "time")


def unwrap(line: Any) -> tuple[list[Any], float | None]:
    """The JSON-RPC messages of one line and its timestamp (None when it has none)."""
    stamp = None
    if isinstance(line, dict) and "jsonrpc" not in line:
        stamp = next((as_time(line[key]) for key in TIME_KEYS if key in line), None)
        inner = next((line[key] for key in WRAPPER_KEYS if key in line), None)
        if inner is not None:
            line = inner
    messages = line if isinstance(line, list) else [line]
    return messages, stamp


def is_jsonrpc(line: Any) -> bool:
    """True when a line holds a JSON-RPC message."""
    messages, _ = unwrap(line)
    return any(isinstance(message, dict) and "jsonrpc" in message for message in messages)


def has_jsonrpc(opened: Opened) -> bool:
    """True when one of the first lines (``HEAD_LINES``) holds a JSON-RPC message."""
    data = opened.data
    lines = data if isinstance(data, list) else [data]
    return any(is_jsonrpc(line) for line in lines[:HEAD_LINES])


def as_time(value: Any) -> float | None:
    """Seconds since the epoch from a number or an ISO 8601 string; None otherwise."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        return float(value) / 1000.0 if value > 1e11 else float(value)
    if isinstance(value, str):
        try:
            moment = datetime.datetime.fromisoformat(value.replace("Z", "+00:00"))
        except ValueError:
            return None
        if moment.tzinfo is None:
            moment = moment.replace(tzinfo=datetime.UTC)
        return moment.timestamp()
    return None


class _Requests:
    """The non-tool requests of a capture, by id: only ``tools/call`` requests pair with a
    result, so a response to any other request (an ``initialize`` sent twice with id 0, a
    ``ping``) is never taken for a tool result."""

    def __init__(self) -> None:
        self.pending: dict[str, list[str]] = {}
        self.seen: set[str] = set()

    def sent(self, key: str, method: str) -> None:
        self.pending.setdefault(key, []).append(method)
        self.seen.add(key)

    def answered(self, key: str) -> str | None:
        """The method a response with this id answers, when a non-tool request is waiting."""
        waiting = self.pending.get(key)
        if not waiting:
            return None
        method = waiting.pop(0)
        if not waiting:
            del self.pending[key]
        return method


def read(source: Source) -> Parsed:
    """The ``tools/call`` calls of an MCP traffic capture, as the capture is read: a streamed
    file is read line by line, and each call is handed on once its result has been read (the
    calls still waiting for one are all that is held besides the current line)."""
    if not source.streamed and not source.is_json_lines and not isinstance(source.data, dict):
        raise source.error("line 1", "not a JSON-RPC message", EXPECTED)
    parsed = Parsed()
    parsed.calls = _calls(source, parsed)
    return parsed


def _lines(source: Source, unreadable: list[Unreadable]) -> Iterator[tuple[str, Any]]:
    if source.streamed:
        for number, value in source.stream(unreadable):
            yield f"line {number}", value
    elif source.is_json_lines:
        for index, value in enumerate(source.data):
            yield source.where(index), value
    else:
        yield source.where(0), source.data


def _calls(source: Source, parsed: Parsed) -> Iterator[ImportedCall]:
    pairing = Pairing(Parsed(tools=parsed.tools, unreadable=parsed.unreadable))
    requests = _Requests()
    for where, line in _lines(source, parsed.unreadable):
        messages, stamp = unwrap(line)
        for message in messages:
            if not isinstance(message, dict) or "jsonrpc" not in message:
                pairing.unreadable(where, "expected a JSON-RPC message object")
                continue
            _message(message, where, stamp, pairing, requests)
        yield from pairing.answered()
    yield from pairing.remaining()


def _message(
    message: dict[str, Any],
    where: str,
    stamp: float | None,
    pairing: Pairing,
    requests: _Requests,
) -> None:
    """One message: a request is remembered by id (method), a response goes to its request."""
    method = message.get("method")
    key = None if message.get("id") is None else str(message["id"])
    if method == "tools/call":
        params = message.get("params")
        name = params.get("name") if isinstance(params, dict) else None
        if not isinstance(name, str) or not name:
            pairing.unreadable(where, "a tools/call request without params.name")
            return
        assert isinstance(params, dict)
        raw = params.get("arguments")
        pairing.call(sent_call(name, key, raw, where, message_id=where, started_at=stamp))
        return
    if method is not None:
        if key is not None:
            requests.sent(key, str(method))
        return  # a notification, or a request that is not a tool call
    if key is None:
        pairing.unreadable(where, "a response without an id")
        return
    if pairing.is_open(key):
        _response(message, key, where, stamp, pairing)
        return
    answered = requests.answered(key)
    if answered == "tools/list":
        _tools(message.get("result"), pairing.parsed)
    elif answered is None and key not in requests.seen:
        _response(message, key, where, stamp, pairing)  # names the result no call sent


def _response(
    message: dict[str, Any], key: str, where: str, stamp: float | None, pairing: Pairing
) -> None:
    error = message.get("error")
    if isinstance(error, dict):
        text = str(error.get("message") or error.get("code") or "JSON-RPC error")
        pairing.result(key, text, where=where, flagged_error=True, ended_at=stamp)
        return
    result = message.get("result")
    if not isinstance(result, dict):
        pairing.unreadable(where, f"the response to request {key} has no 'result' object")
        return
    pairing.content_result(
        key,
        result.get("content"),
        where=where,
        not_text=f"the result of request {key} has no content list",
        flagged_error=result.get("isError") is True,
        ended_at=stamp,
    )


def _tools(result: Any, parsed: Parsed) -> None:
    tools = result.get("tools") if isinstance(result, dict) else None
    parsed.tools.update(schemas_of(tools, "inputSchema"))
