"""The formats ``load`` reads, and telling them apart from the content alone.

Detection looks for the first thing only one format has, in this order: an inspect_ai log
(a zip, or an object with ``eval`` and ``samples``); JSON-RPC messages (MCP traffic); a
provider's request or response object (or a log of them), whose own keys say its API
(``_api_of``); Responses API call items; Gemini ``functionCall`` / ``functionResponse`` parts;
Anthropic ``tool_use`` / ``tool_result`` blocks; Chat Completions ``tool_calls``, ``role:
"tool"`` messages or the legacy ``function_call``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal

from workbench.transcripts import (
    anthropic,
    gemini,
    inspect_ai,
    mcp_jsonl,
    openai_chat,
    openai_responses,
)
from workbench.transcripts._exchanges import Document, documents_of
from workbench.transcripts._parsed import Parsed
from workbench.transcripts._source import LIST_KEY, Source

Format = Literal[
    "openai_chat", "openai_responses", "anthropic", "gemini", "mcp_jsonl", "inspect_ai"
]

READERS: dict[str, Callable[[Source], Parsed]] = {
    openai_chat.NAME: openai_chat.READER.read,
    openai_responses.NAME: openai_responses.READER.read,
    anthropic.NAME: anthropic.READER.read,
    gemini.NAME: gemini.READER.read,
    mcp_jsonl.NAME: mcp_jsonl.read,
    inspect_ai.NAME: inspect_ai.read,
}
"""Format name → reader."""

FORMATS: tuple[str, ...] = tuple(READERS)


def reads_by_parts(name: str, source: Source) -> bool:
    """True when the reader of format ``name`` reads ``source`` in the parts it was opened as
    (else ``load`` reads it whole first): an MCP capture line by line, an inspect_ai log
    sample by sample, a Chat Completions or Anthropic request message by message, a Responses
    request or response item by item, a Gemini request content by content, a bare list of
    messages (or items) one by one, a log of request and response objects entry by entry."""
    if source.exchanges:
        return name in _API_READERS or (source.streamed and name == mcp_jsonl.NAME)
    if source.streamed:
        return name == mcp_jsonl.NAME
    if source.log_head is not None:
        return name == inspect_ai.NAME
    if source.stream_key == LIST_KEY:
        return name in _API_READERS
    if source.stream_key in ("input", "output"):
        return name == openai_responses.NAME
    if source.stream_key == "contents":
        return name == gemini.NAME
    if source.stream_key is not None:
        return name in (openai_chat.NAME, anthropic.NAME)
    return True


_API_READERS = (openai_chat.NAME, anthropic.NAME, gemini.NAME, openai_responses.NAME)


ALIASES: dict[str, str] = {
    "openai": openai_chat.NAME,
    "chat": openai_chat.NAME,
    "chat_completions": openai_chat.NAME,
    "responses": openai_responses.NAME,
    "claude": anthropic.NAME,
    "google": gemini.NAME,
    "genai": gemini.NAME,
    "mcp": mcp_jsonl.NAME,
    "jsonrpc": mcp_jsonl.NAME,
    "inspect": inspect_ai.NAME,
}
"""Other names ``format=`` accepts for a format (``-`` and ``_`` are alike)."""


def format_named(name: str) -> str | None:
    """The format ``name`` stands for (its own name or an alias), or None."""
    key = name.strip().lower().replace("-", "_")
    return key if key in READERS else ALIASES.get(key)


def detect(source: Source) -> str:
    """The format of ``source``; a ``TranscriptError`` when no format's marks are in it."""
    data = source.head if source.streamed else source.data
    if (data is None and source.path is not None) or inspect_ai.is_log(data):
        return inspect_ai.NAME
    lines = data if isinstance(data, list) else [data]
    if any(mcp_jsonl.is_jsonrpc(line) for line in lines[:50]):
        return mcp_jsonl.NAME
    documents = documents_of(data)
    if documents is not None:
        found = _api_of(documents)
        if found is not None:
            return found
    items = openai_responses.items_of(data)
    if items is not None and any(_item_type(item) in openai_responses.CALL_TYPES for item in items):
        return openai_responses.NAME
    if gemini.has_calls(data):
        return gemini.NAME
    messages = openai_chat.messages_of(data) or anthropic.messages_of(data) or []
    for message in messages:
        if not isinstance(message, dict):
            continue
        content = message.get("content")
        if isinstance(content, list) and any(
            _item_type(block) in anthropic.BLOCK_TYPES for block in content
        ):
            return anthropic.NAME
        if (
            message.get("tool_calls")
            or message.get("function_call")
            or message.get("role") in ("tool", "function")
        ):
            return openai_chat.NAME
    raise source.error(
        "the whole file" if source.path is not None else "the whole input",
        "no tool call or tool result of any known format was found",
        f"one of the formats {', '.join(FORMATS)} (or pass format= to read it as one)",
    )


def _api_of(documents: list[Document]) -> str | None:
    """The API a run's request and response objects belong to, from the first object that
    says: a response's own marks, else a request's keys, tool definitions or message blocks."""
    for document in documents:
        data = document.data
        if isinstance(data.get("contents"), list) or isinstance(data.get("candidates"), list):
            return gemini.NAME
        if data.get("object") == "response" or isinstance(data.get("output"), list):
            return openai_responses.NAME
        if "input" in data and "messages" not in data:
            return openai_responses.NAME
        if data.get("type") == "message":
            return anthropic.NAME
        if data.get("object") == "chat.completion" or isinstance(data.get("choices"), list):
            return openai_chat.NAME
    for document in documents:
        data = document.data
        tools = data.get("tools")
        first = tools[0] if isinstance(tools, list) and tools else None
        if isinstance(first, dict) and ("input_schema" in first or anthropic.is_server_tool(first)):
            return anthropic.NAME
        if isinstance(first, dict) and isinstance(first.get("function"), dict):
            return openai_chat.NAME
        if "system" in data:
            return anthropic.NAME
    return None


def _item_type(item: Any) -> Any:
    return item.get("type") if isinstance(item, dict) else None
