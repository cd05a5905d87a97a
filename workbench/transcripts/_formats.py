"""The formats ``load`` reads, and telling them apart from the content alone.

Detection looks for the first thing only one format has, in this order: an inspect_ai log
(a zip, or an object with ``eval`` and ``samples``); JSON-RPC messages (MCP traffic); a
provider's request or response object (or a log of them), whose own keys say its API
(``_api_of``); Responses API call items; Gemini ``functionCall`` / ``functionResponse`` parts;
Anthropic ``tool_use`` / ``tool_result`` blocks; Chat Completions ``tool_calls``, ``role:
"tool"`` messages or the legacy ``function_call``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any, Literal

from workbench.transcripts import (
    anthropic,
    gemini,
    inspect_ai,
    mcp_jsonl,
    openai_chat,
    openai_responses,
)
from workbench.transcripts._exchanges import Document
from workbench.transcripts._parsed import Parsed, list_or_empty
from workbench.transcripts._source import LIST_KEY, Opened, Source

Format = Literal[
    "openai_chat", "openai_responses", "anthropic", "gemini", "mcp_jsonl", "inspect_ai"
]

READERS: dict[str, Callable[[Opened], Parsed]] = {
    openai_chat.NAME: openai_chat.READER.read,
    openai_responses.NAME: openai_responses.READER.read,
    anthropic.NAME: anthropic.READER.read,
    gemini.NAME: gemini.READER.read,
    mcp_jsonl.NAME: lambda opened: mcp_jsonl.read(opened.source),
    inspect_ai.NAME: lambda opened: inspect_ai.read(opened.source),
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


def detect(opened: Opened) -> str:
    """The format of a source; a ``TranscriptError`` when no format's marks are in it."""
    if inspect_ai.is_eval_log(opened):
        return inspect_ai.NAME
    if mcp_jsonl.has_jsonrpc(opened):
        return mcp_jsonl.NAME
    documents = opened.documents
    if documents is not None:
        found = _api_of(documents)
        if found is not None:
            return found
    if openai_responses.has_call_items(opened):
        return openai_responses.NAME
    if gemini.has_call_parts(opened):
        return gemini.NAME
    for message in _messages(opened):
        if anthropic.has_tool_blocks(message):
            return anthropic.NAME
        if openai_chat.has_tool_marks(message):
            return openai_chat.NAME
    source = opened.source
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
        if gemini.is_own_object(data):
            return gemini.NAME
        if openai_responses.is_own_object(data):
            return openai_responses.NAME
        if anthropic.is_response(data):
            return anthropic.NAME
        if openai_chat.is_own_object(data):
            return openai_chat.NAME
    for document in documents:
        data = document.data
        if anthropic.offers_own_tools(data):
            return anthropic.NAME
        if openai_chat.offers_functions(data):
            return openai_chat.NAME
        if anthropic.has_system(data):
            return anthropic.NAME
    return None


def _messages(opened: Opened) -> Iterator[Any]:
    """The messages of a plain list, or of each request (responses were told apart by their
    own marks before)."""
    if opened.documents is None:
        yield from list_or_empty(opened.data)
        return
    for document in opened.documents:
        yield from list_or_empty(document.data.get("messages"))
