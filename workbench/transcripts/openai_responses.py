"""The reader of OpenAI Responses API transcripts: a list of items, a request (``input``) or
response (``output``) object, or a run logged as request/response pairs. ``READER`` reads them
(the steps are ``ApiReader``'s); ``is_own_object`` and ``has_call_items`` are the marks the
formats' table detects them by.

Calls the caller ran are ``function_call`` (and ``custom_tool_call``, ``computer_call``,
``local_shell_call``, ``shell_call``, ``apply_patch_call``) items answered by the matching
``*_output`` item with the same ``call_id``; the receipt is the output: a string as it is, a
list of content parts as their text joined by newlines, anything else as JSON.

Calls OpenAI ran itself are rows with ``executed_by="server"``, the result being part of the
call's own item: ``mcp_call`` (its ``output``, or its ``error`` as a failure),
``code_interpreter_call`` (the text of its ``logs`` outputs), ``file_search_call`` (its
``results`` as JSON), ``web_search_call`` (the ``sources`` of its action when the log has
them), ``tool_search_call`` (answered by a ``tool_search_output``) and
``image_generation_call``. A call whose log holds no result (the API leaves results out unless
asked to ``include`` them) has none, and its row says why. An item of a type this reader does
not know is listed in ``history.unreadable``.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from typing import Any

from workbench.transcripts import _parsed
from workbench.transcripts._api_reader import Documents, Listed, ListedApiReader, numbered
from workbench.transcripts._exchanges import Document
from workbench.transcripts._parsed import Pairing, list_or_empty, sent_call, text_or_none
from workbench.transcripts._source import Opened

NAME = "openai_responses"
EXPECTED = (
    "a list of Responses API items, a request or response object with 'input' or 'output' "
    "item lists, or a list of request/response pairs"
)
CLIENT_CALLS: dict[str, str] = {
    "function_call": "arguments",
    "custom_tool_call": "input",
    "computer_call": "action",
    "local_shell_call": "action",
    "shell_call": "action",
    "apply_patch_call": "operation",
}
"""Item types of calls the caller runs → the key holding the model's arguments."""

SERVER_CALLS = frozenset(
    {
        "mcp_call",
        "web_search_call",
        "code_interpreter_call",
        "file_search_call",
        "tool_search_call",
        "image_generation_call",
    }
)
CALL_TYPES = frozenset({*CLIENT_CALLS, *(f"{kind}_output" for kind in CLIENT_CALLS), *SERVER_CALLS})
NOT_TOOLS = frozenset(
    {
        "message",
        "reasoning",
        "item_reference",
        "compaction",
        "mcp_list_tools",
        "mcp_approval_request",
        "mcp_approval_response",
        "tool_search_output",
    }
)
"""Items that are neither a call nor its result (``tool_search_output`` is read with its call)."""


def is_own_object(data: dict[str, Any]) -> bool:
    """True for a Responses response object, or a request with ``input`` and no Chat
    ``messages``."""
    return (
        data.get("object") == "response"
        or isinstance(data.get("output"), list)
        or ("input" in data and "messages" not in data)
    )


def has_call_items(opened: Opened) -> bool:
    """True when the items of a transcript (a list's, or each request's ``input`` and each
    response's ``output``) hold a call or a call's output."""
    documents = opened.documents
    items = list_or_empty(opened.data) if documents is None else _values(_items_of(documents))
    return any(_parsed.type_of(item) in CALL_TYPES for item in items)


def _has_items(data: dict[str, Any]) -> bool:
    return "input" in data or "output" in data


def _items_of(documents: Iterable[Document]) -> Iterator[Listed]:
    """(where, item) for each request's ``input`` items and each response's ``output`` items."""
    for document in documents:
        for key in ("input", "output"):
            value = document.data.get(key)
            for index, item in enumerate(list_or_empty(value)):
                yield document.at(f"{key} item {index}"), item


def _values(entries: Iterable[Listed]) -> Iterator[Any]:
    return (value for _, value in entries)


class _Responses(ListedApiReader):
    """Responses API runs: each request's ``input`` items and each response's ``output``
    items."""

    expected = EXPECTED
    missing = "no item list"
    noun = "item"

    def tools_of(self, data: Any) -> dict[str, dict[str, Any]]:
        """Tool name → input schema from ``tools`` (``{"type": "function", "name",
        "parameters"}``); the provider's own tools (web search, MCP servers, ...) have none
        and are left out."""
        tools = data.get("tools") if isinstance(data, dict) else None
        functions = [
            entry
            for entry in list_or_empty(tools)
            if isinstance(entry, dict) and entry.get("type", "function") in ("function", "custom")
        ]
        return _parsed.schemas_of(functions, "parameters")

    def document_entries(self, documents: Documents) -> Iterable[Listed] | None:
        """Each request's ``input`` items and each response's ``output`` items; None when no
        object has either (read as a list of items, if it is one)."""
        if not any(_has_items(document.data) for document in documents.head):
            return None
        if documents.many:
            return _items_of(documents)
        # one object: items keep the numbering of the file they came from
        return numbered(documents.source, list(_values(_items_of(documents))), "item")

    def read_entry(self, pairing: Pairing, index: int, entry: Listed) -> None:
        """The call or result of one item."""
        where, item = entry
        if isinstance(item, dict):
            _item(item, where, text_or_none(item.get("id")) or f"items[{index}]", pairing)
        else:
            found = type(item).__name__
            pairing.unreadable(where, f"expected an item object, found a {found}", item)


READER = _Responses()
"""The reader of Responses API transcripts."""


def _item(
    item: dict[str, Any],
    where: str,
    item_id: str,
    pairing: Pairing,
) -> None:
    kind = item.get("type")
    if kind is not None and not isinstance(kind, str):
        pairing.unreadable(where, "an item whose 'type' is not a name", item)
    elif kind in CLIENT_CALLS:
        assert isinstance(kind, str)
        _client_call(item, kind, where, item_id, pairing)
    elif isinstance(kind, str) and kind.endswith("_call_output") and kind[:-7] in CLIENT_CALLS:
        notes: list[str] = []
        text = _output_text(item.get("output"), notes)
        pairing.result(item.get("call_id"), text, where=where, message_id=item_id, notes=notes)
    elif kind in SERVER_CALLS:
        _server_call(item, str(kind), where, item_id, pairing)
    elif kind == "tool_search_output":  # the tools found: what the model was shown
        text = json.dumps(item.get("tools"), ensure_ascii=False)
        pairing.result(item.get("call_id"), text, where=where, message_id=item_id)
    elif kind not in NOT_TOOLS and not (kind is None and "role" in item):  # a message
        pairing.unreadable(
            where, f"an item of type {kind!r}, which this reader does not know", item
        )


def _output_text(output: Any, notes: list[str]) -> str:
    """Text as it is, text parts joined; anything else (or parts that are not all text) as
    JSON, so nothing the model was shown is left out."""
    if isinstance(output, str | list):
        skipped: list[str] = []
        text = _parsed.block_text(output, skipped)
        if text is not None and not skipped:
            return text
    return json.dumps(output, ensure_ascii=False)


def _client_call(
    item: dict[str, Any], kind: str, where: str, item_id: str, pairing: Pairing
) -> None:
    name = item.get("name") if kind in ("function_call", "custom_tool_call") else kind[:-5]
    if not isinstance(name, str) or not name:
        pairing.unreadable(where, f"a {kind} item without a 'name'", item)
        return
    raw = item.get(CLIENT_CALLS[kind])
    call_id = text_or_none(item.get("call_id")) or item_id
    call = sent_call(name, call_id, raw, where, message_id=item_id)
    if kind == "custom_tool_call":
        call.arguments, call.args_problem = {"input": raw}, None  # free-form input: the text
    pairing.call(call)


def _server_call(
    item: dict[str, Any],
    kind: str,
    where: str,
    item_id: str,
    pairing: Pairing,
) -> None:
    notes: list[str] = []
    receipt: str | None = None
    failed = False
    name = kind[:-5]
    raw: Any
    if kind == "mcp_call":
        name = str(item.get("name") or "mcp_call")
        raw = item.get("arguments")
        notes.append(f"run by the MCP server {item.get('server_label')!r}")
        error = item.get("error")
        if error not in (None, ""):
            content = error.get("content") if isinstance(error, dict) else error
            receipt = _output_text(content, notes)
            failed = True
        elif item.get("output") is not None:
            receipt = _output_text(item.get("output"), notes)
    elif kind == "code_interpreter_call":
        raw = {"code": item.get("code"), "container_id": item.get("container_id")}
        receipt = _interpreter_output(item.get("outputs"), notes)
    elif kind == "file_search_call":
        raw = {"queries": item.get("queries")}
        if item.get("results") is not None:
            receipt = json.dumps(item["results"], ensure_ascii=False)
    elif kind == "web_search_call":
        action = item.get("action")
        raw = action if isinstance(action, dict) else {}
        sources = raw.get("sources") if isinstance(raw, dict) else None
        if sources is not None:
            receipt = json.dumps(sources, ensure_ascii=False)
            raw = {key: value for key, value in raw.items() if key != "sources"}
    elif kind == "tool_search_call":
        raw = item.get("arguments")
    else:  # image_generation_call: the image itself is what the model got
        raw = {}
        if item.get("result") is not None:
            notes.append("the result is an image, not text: it is not in the receipt")
    if receipt is None and item.get("status") == "failed":
        receipt, failed = f"the {name} call failed", True
    if receipt is None and kind != "tool_search_call":
        notes.append(
            f"the log holds no result of this {kind} (the API includes it only on request)"
        )
    call = sent_call(
        name,
        text_or_none(item.get("call_id")) or item_id,
        raw,
        where,
        message_id=item_id,
        receipt=receipt,
        flagged_error=failed,
        result_where=where if receipt is not None else None,
        result_message_id=item_id if receipt is not None else None,
        notes=notes,
        executed_by=str(item.get("execution") or "server")
        if kind == "tool_search_call"
        else "server",
    )
    pairing.call(call)


def _interpreter_output(outputs: Any, notes: list[str]) -> str | None:
    if not isinstance(outputs, list):
        return None
    return _parsed.joined_texts(outputs, "logs", notes, "output", strings_are_text=False)
