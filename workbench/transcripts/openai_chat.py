"""The reader of OpenAI Chat Completions transcripts: a list of messages, a request object
(``{"messages": [...], "tools": [...]}``, optionally with the ``choices`` of its response), a
bare response object (``{"object": "chat.completion", "choices": [...]}``), or a run logged as
request/response pairs. ``READER`` reads them (the steps are ``ApiReader``'s);
``is_own_object``, ``offers_functions`` and ``has_tool_marks`` are the marks the formats'
table detects them by. Calls are ``tool_calls`` answered by ``role: "tool"`` messages, and the
legacy ``function_call`` answered by ``role: "function"``.

The receipt is the tool message's ``content``: a string as it is, a list of content parts as
their text joined by newlines. The format has no error flag: failures are recognised from the
text by the envelope rules.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from functools import partial
from typing import Any

from workbench.transcripts import _parsed
from workbench.transcripts._api_reader import ApiReader, Documents, Listed
from workbench.transcripts._parsed import Pairing, list_or_empty, sent_call, text_or_none

NAME = "openai_chat"
EXPECTED = (
    "a list of chat messages, a request object with 'messages', a response object with "
    "'choices', or a list of request/response pairs"
)


def is_own_object(data: dict[str, Any]) -> bool:
    """True for a Chat Completions response object."""
    return data.get("object") == "chat.completion" or isinstance(data.get("choices"), list)


def offers_functions(data: dict[str, Any]) -> bool:
    """True for a request whose first tool is a Chat ``{"type": "function", "function": ...}``."""
    tools = data.get("tools")
    first = tools[0] if isinstance(tools, list) and tools else None
    return isinstance(first, dict) and isinstance(first.get("function"), dict)


def has_tool_marks(message: Any) -> bool:
    """True for a message with ``tool_calls`` or a legacy ``function_call``, or one that is a
    tool's (``role: "tool"`` or ``"function"``)."""
    return isinstance(message, dict) and bool(
        message.get("tool_calls")
        or message.get("function_call")
        or message.get("role") in ("tool", "function")
    )


def _has_run(data: dict[str, Any]) -> bool:
    """True for a request with messages or a Chat Completions response."""
    messages = data.get("messages")
    return is_own_object(data) or (isinstance(messages, list) and bool(messages))


Entry = tuple[str, Any, int]
"""(where, message, its position in the conversation)."""


class _Chat(ApiReader[Entry]):
    """Chat Completions runs: each request's messages, and each response's first choice as one
    more (a request logged whole with its response's ``choices`` is read whole, not by
    parts)."""

    expected = EXPECTED

    def tools_of(self, data: Any) -> dict[str, dict[str, Any]]:
        """Tool name → input schema, from ``tools`` (``{"type": "function", "function":
        ...}``) or the legacy ``functions``."""
        if not isinstance(data, dict):
            return {}
        entries = [
            *list_or_empty(data.get("tools")),
            *list_or_empty(data.get("functions")),
        ]
        functions = [
            entry["function"]
            if isinstance(entry, dict) and isinstance(entry.get("function"), dict)
            else entry
            for entry in entries
        ]
        return _parsed.schemas_of(functions, "parameters")

    def document_entries(self, documents: Documents) -> Iterator[Entry]:
        """Every message of every request and response, in order; the objects must hold a
        conversation. Only the first choice of a response continues the run; other choices
        are listed as unreadable. A response's message comes after the messages of the
        request before it, where the next request repeats it."""
        if not any(_has_run(document.data) for document in documents.head):
            raise documents.source.error("the top level", "no message list", EXPECTED)
        return _entries(documents)

    def in_order(self, values: Iterable[Listed]) -> Iterator[Entry]:
        """The messages of one conversation, each at its index."""
        for index, (where, message) in enumerate(values):
            yield where, message, index

    def entry_reader(self, pairing: Pairing) -> Callable[[int, Entry], None]:
        legacy_open: dict[str, str] = {}  # the legacy calls waiting, by name: their pairing keys
        return partial(_message, pairing, legacy_open)


READER = _Chat()
"""The reader of Chat Completions transcripts."""


def _entries(documents: Documents) -> Iterator[Entry]:
    sent = 0  # messages in the conversation so far
    for document in documents:
        data = document.data
        messages = data.get("messages")
        if isinstance(messages, list):
            sent = len(messages)
        for index, message in enumerate(list_or_empty(messages)):
            yield document.at(f"message {index}"), message, index
        for where, choice in documents.first_of(document, "choices", "another choice (n > 1)"):
            message = choice.get("message") if isinstance(choice, dict) else None
            if isinstance(message, dict) and "id" not in message and text_or_none(data.get("id")):
                message = {**message, "id": data["id"]}  # the response's id names its message
            yield where, message, sent
            sent += 1


def _message(pairing: Pairing, legacy_open: dict[str, str], index: int, entry: Entry) -> None:
    """The calls or the result of one message."""
    where, message, place = entry
    if not isinstance(message, dict):
        pairing.unreadable(where, f"expected a message object, found {_kind(message)}", message)
        return
    message_id = text_or_none(message.get("id")) or f"messages[{index}]"
    role = message.get("role")
    if role == "assistant":
        _calls(message, where, message_id, place, pairing, legacy_open)
    elif role == "tool":
        pairing.content_result(
            message.get("tool_call_id"),
            message.get("content"),
            where=where,
            not_text="the tool message's content is not text or parts",
            part=message,
            message_id=message_id,
        )
    elif role == "function":
        name = message.get("name")
        notes: list[str] = []
        text = _parsed.block_text(message.get("content"), notes)
        if text is None:
            pairing.unreadable(where, "the function message's content is not text", message)
            return
        pairing.result(
            legacy_open.pop(str(name), f"function_call {name}"),
            text,
            where=where,
            message_id=message_id,
            notes=notes,
        )


def _calls(
    message: dict[str, Any],
    where: str,
    message_id: str,
    place: int,
    pairing: Pairing,
    legacy_open: dict[str, str],
) -> None:
    """The calls of an assistant message, the ``place``-th message of its conversation."""
    tool_calls = message.get("tool_calls")
    if tool_calls is not None and not isinstance(tool_calls, list):
        pairing.unreadable(where, "'tool_calls' is not a list", message)
        tool_calls = []
    for position, entry in enumerate(tool_calls or []):
        function = entry.get("function") if isinstance(entry, dict) else None
        name = function.get("name") if isinstance(function, dict) else None
        if not isinstance(name, str) or not name:
            pairing.unreadable(
                f"{where}, tool call {position}", "expected a 'function' with a 'name'", entry
            )
            continue
        assert isinstance(function, dict) and isinstance(entry, dict)
        call_id = text_or_none(entry.get("id"))
        pairing.call(
            sent_call(name, call_id, function.get("arguments"), where, message_id=message_id)
        )
    legacy = message.get("function_call")
    if isinstance(legacy, dict) and isinstance(legacy.get("name"), str):
        name = legacy["name"]
        # The legacy call has no id: it is paired by name, under a key made from its place in
        # the conversation, which a request that repeats the conversation repeats.
        made_up = f"function_call@message {place}"
        legacy_open[name] = made_up
        raw = legacy.get("arguments")
        pairing.call(sent_call(name, made_up, raw, where, message_id=message_id), made_up=True)


def _kind(value: Any) -> str:
    return "null" if value is None else f"a {type(value).__name__}"
