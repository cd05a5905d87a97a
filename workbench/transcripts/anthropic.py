"""The reader of Anthropic Messages transcripts: a list of messages, a request object
(``{"messages": [...], "tools": [...]}``), a response object (``{"type": "message", "content":
[...]}``), or a run logged as request/response pairs. ``READER`` reads them (the steps are
``ApiReader``'s); ``is_response``, ``offers_own_tools``, ``has_system`` and ``has_tool_blocks``
are the marks the formats' table detects them by.

Calls the caller ran are ``tool_use`` blocks in assistant messages answered by ``tool_result``
blocks in user messages; their receipt is the ``tool_result``'s ``content``: a string as it
is, a list of blocks as the text of its text blocks joined by newlines (other blocks are named
in the row's warnings). ``is_error: true`` marks the result as a failure.

Calls Anthropic ran itself (``server_tool_use``: web search, web fetch, code execution, tool
search; ``mcp_tool_use``: a tool of a remote MCP server) are rows with ``executed_by="server"``,
answered by the ``*_tool_result`` block that follows them in the same assistant message. Their
receipt is what the model was shown: an MCP result's text, or the result block's ``content``
as JSON (search results, a program's stdout, stderr and return code). A content object whose
``type`` ends in ``_error`` (or ``is_error: true``) marks a failure. A block of a kind this
reader does not know is listed in ``history.unreadable``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

from workbench.transcripts import _parsed
from workbench.transcripts._api_reader import Documents, Listed, ListedApiReader
from workbench.transcripts._parsed import Pairing, list_or_empty, sent_call, text_or_none

NAME = "anthropic"
EXPECTED = (
    "a list of messages, a request object with a 'messages' list, a response object, or a "
    "list of request/response pairs"
)
SERVER_CALLS = frozenset({"server_tool_use", "mcp_tool_use"})
BLOCK_TYPES = frozenset({"tool_use", "tool_result", *SERVER_CALLS})
NOT_TOOLS = frozenset(
    {
        "text",
        "thinking",
        "redacted_thinking",
        "image",
        "document",
        "search_result",
        "container_upload",
    }
)
"""Blocks that are neither a call nor a result: read past without a note."""

_VERSIONED = re.compile(r"_\d{8}$")


def is_server_tool(definition: Any) -> bool:
    """True for a tool definition of a tool Anthropic runs (``{"type": "web_search_20250305"}``)."""
    kind = definition.get("type") if isinstance(definition, dict) else None
    return isinstance(kind, str) and _VERSIONED.search(kind) is not None


def is_server_result(kind: Any) -> bool:
    """True for the block type of a server tool's result (``web_search_tool_result``, ...)."""
    return isinstance(kind, str) and kind.endswith("_tool_result") and kind != "tool_result"


def offers_own_tools(data: dict[str, Any]) -> bool:
    """True for a request whose first tool is defined the Anthropic way (an ``input_schema``,
    or a tool Anthropic runs)."""
    tools = data.get("tools")
    first = tools[0] if isinstance(tools, list) and tools else None
    return isinstance(first, dict) and ("input_schema" in first or is_server_tool(first))


def has_system(data: dict[str, Any]) -> bool:
    """True for a request with a top-level ``system`` prompt (Chat puts it in a message)."""
    return "system" in data


def is_response(data: dict[str, Any]) -> bool:
    """True for a Messages response object."""
    return data.get("type") == "message"


def has_tool_blocks(message: Any) -> bool:
    """True for a message whose content holds a tool block."""
    content = message.get("content") if isinstance(message, dict) else None
    return isinstance(content, list) and any(
        _parsed.type_of(block) in BLOCK_TYPES for block in content
    )


class _Messages(ListedApiReader):
    """Anthropic's runs: each request's messages, and each response as one more message."""

    expected = EXPECTED

    def tools_of(self, data: Any) -> dict[str, dict[str, Any]]:
        """Tool name → ``input_schema`` from ``tools`` (server tools, which have none, left
        out)."""
        tools = data.get("tools") if isinstance(data, dict) else None
        client = [entry for entry in list_or_empty(tools) if not is_server_tool(entry)]
        return _parsed.schemas_of(client, "input_schema")

    def document_entries(self, documents: Documents) -> Iterator[Listed]:
        """(where, message) for every message of every request, and each response as a
        message."""
        for document in documents:
            data = document.data
            if is_response(data):
                yield document.where or "the response", data
                continue
            messages = data.get("messages")
            for index, message in enumerate(list_or_empty(messages)):
                yield document.at(f"message {index}"), message

    def run_id(self, first: dict[str, Any]) -> str | None:
        """A request's id names its run (a response's names only its message)."""
        return text_or_none(first.get("id")) if "messages" in first else None

    def read_entry(self, pairing: Pairing, index: int, entry: Listed) -> None:
        """The tool blocks of one message."""
        where, message = entry
        if not isinstance(message, dict):
            found = type(message).__name__
            pairing.unreadable(where, f"expected a message object, found a {found}", message)
            return
        content = message.get("content")
        if isinstance(content, str) or content is None:
            return  # plain text: no tool blocks
        if not isinstance(content, list):
            pairing.unreadable(where, "'content' is neither text nor a list of blocks", message)
            return
        message_id = text_or_none(message.get("id")) or f"messages[{index}]"
        for position, block in enumerate(content):
            if isinstance(block, dict):
                _block(block, f"{where}, block {position}", message_id, pairing)


READER = _Messages()
"""The reader of Anthropic Messages transcripts."""


def _block(block: dict[str, Any], where: str, message_id: str, pairing: Pairing) -> None:
    kind = block.get("type")
    if kind is not None and not isinstance(kind, str):
        pairing.unreadable(where, "a block whose 'type' is not a name, not read", block)
    elif kind == "tool_use":
        _call(block, where, message_id, pairing, "client")
    elif kind in SERVER_CALLS:
        _call(block, where, message_id, pairing, "server")
    elif kind == "tool_result":
        pairing.content_result(
            block.get("tool_use_id"),
            block.get("content"),
            where=where,
            not_text="the tool_result's content is not text",
            part=block,
            flagged_error=block.get("is_error") is True,
            message_id=message_id,
        )
    elif is_server_result(kind):
        _server_result(block, where, message_id, pairing)
    elif kind not in NOT_TOOLS:
        pairing.unreadable(
            where, f"a {kind!r} block, which this reader does not know, not read", block
        )


def _server_result(block: dict[str, Any], where: str, message_id: str, pairing: Pairing) -> None:
    content = block.get("content")
    notes: list[str] = []
    text = _parsed.block_text(content, notes) if block.get("type") == "mcp_tool_result" else None
    if text is None or notes:
        notes = []
        text = content if isinstance(content, str) else json.dumps(content, ensure_ascii=False)
    failed = block.get("is_error") is True or (
        isinstance(content, dict) and str(content.get("type", "")).endswith("_error")
    )
    pairing.result(
        block.get("tool_use_id"),
        text,
        where=where,
        flagged_error=failed,
        message_id=message_id,
        notes=notes,
    )


def _call(
    block: dict[str, Any], where: str, message_id: str, pairing: Pairing, executed_by: str
) -> None:
    name = block.get("name")
    if not isinstance(name, str) or not name:
        pairing.unreadable(where, f"a {block.get('type')} block without a 'name'", block)
        return
    notes = []
    server = block.get("server_name")
    if isinstance(server, str):
        notes.append(f"run by the MCP server {server!r}")
    call_id = text_or_none(block.get("id"))
    pairing.call(
        sent_call(
            name,
            call_id,
            block.get("input"),
            where,
            message_id=message_id,
            notes=notes,
            executed_by=executed_by,
        )
    )
