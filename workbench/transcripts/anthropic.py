"""Anthropic Messages: a list of messages (or ``{"messages": [...], "tools": [...]}``), calls as
``tool_use`` blocks in assistant messages answered by ``tool_result`` blocks in user messages.

The receipt is the ``tool_result``'s ``content``: a string as it is, a list of blocks as the
text of its text blocks joined by newlines (other blocks are named in the row's warnings).
``is_error: true`` marks the result as a failure.
"""

from __future__ import annotations

from typing import Any

from workbench.transcripts._model import (
    ImportedCall,
    Pairing,
    Parsed,
    block_text,
    parse_arguments,
    schemas_of,
    text_or_none,
)
from workbench.transcripts._source import Source

NAME = "anthropic"
EXPECTED = "a list of messages, or an object with a 'messages' list"
BLOCK_TYPES = frozenset({"tool_use", "tool_result"})


def messages_of(data: Any) -> list[Any] | None:
    """The message list of a Messages transcript (a response object ends it)."""
    if isinstance(data, list):
        return data
    if isinstance(data, dict):
        if isinstance(data.get("messages"), list):
            return list(data["messages"])
        if data.get("type") == "message" and isinstance(data.get("content"), list):
            return [data]
    return None


def tools_of(data: Any) -> dict[str, dict[str, Any]]:
    """Tool name → ``input_schema`` from ``tools``."""
    return schemas_of(data.get("tools") if isinstance(data, dict) else None, "input_schema")


def read(source: Source) -> Parsed:
    """The calls of an Anthropic Messages transcript."""
    data = source.data
    messages = messages_of(data)
    if messages is None:
        raise source.error("the top level", "no message list", EXPECTED)
    run_id = text_or_none(data.get("id")) if isinstance(data, dict) else None
    parsed = Parsed(tools=tools_of(data), run_id=run_id)
    pairing = Pairing(parsed)
    for index, message in enumerate(messages):
        where = source.where(index)
        if not isinstance(message, dict):
            found = type(message).__name__
            pairing.unreadable(where, f"expected a message object, found a {found}")
            continue
        content = message.get("content")
        if isinstance(content, str) or content is None:
            continue  # plain text: no tool blocks
        if not isinstance(content, list):
            pairing.unreadable(where, "'content' is neither text nor a list of blocks")
            continue
        message_id = text_or_none(message.get("id")) or f"messages[{index}]"
        for position, block in enumerate(content):
            if not isinstance(block, dict):
                continue
            kind = block.get("type")
            if kind == "tool_use":
                _call(block, f"{where}, block {position}", message_id, pairing)
            elif kind == "tool_result":
                notes: list[str] = []
                text = block_text(block.get("content"), notes)
                block_where = f"{where}, block {position}"
                if text is None:
                    pairing.unreadable(block_where, "the tool_result's content is not text")
                    continue
                pairing.result(
                    block.get("tool_use_id"),
                    text,
                    where=block_where,
                    flagged_error=block.get("is_error") is True,
                    message_id=message_id,
                    notes=notes,
                )
    return parsed


def _call(block: dict[str, Any], where: str, message_id: str, pairing: Pairing) -> None:
    name = block.get("name")
    if not isinstance(name, str) or not name:
        pairing.unreadable(where, "a tool_use block without a 'name'")
        return
    raw = block.get("input")
    arguments, problem = parse_arguments(raw)
    pairing.call(
        ImportedCall(
            tool=name,
            model_call_id=text_or_none(block.get("id")),
            raw_args=raw,
            arguments=arguments,
            args_problem=problem,
            where=where,
            message_id=message_id,
        )
    )
