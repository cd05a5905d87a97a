"""OpenAI Chat Completions: a list of messages (or ``{"messages": [...], "tools": [...]}``,
optionally with the ``choices`` of the response), calls in ``tool_calls`` answered by
``role: "tool"`` messages, and the legacy ``function_call`` answered by ``role: "function"``.

The receipt is the tool message's ``content``: a string as it is, a list of content parts as
their text joined by newlines. The format has no error flag: failures are recognised from the
text by the envelope rules.
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

NAME = "openai_chat"
EXPECTED = "a list of chat messages, or an object with a 'messages' list"


def messages_of(data: Any) -> list[Any] | None:
    """The message list of a Chat Completions transcript, or None if it has none."""
    if isinstance(data, list):
        return data
    if isinstance(data, dict) and isinstance(data.get("messages"), list):
        messages = list(data["messages"])
        choices = data.get("choices")
        if isinstance(choices, list) and choices and isinstance(choices[0], dict):
            messages.append(choices[0].get("message"))
        return messages
    return None


def tools_of(data: Any) -> dict[str, dict[str, Any]]:
    """Tool name → input schema, from ``tools`` (``{"type": "function", "function": ...}``) or
    the legacy ``functions``."""
    if not isinstance(data, dict):
        return {}
    entries = [*(data.get("tools") or []), *(data.get("functions") or [])]
    functions = [
        entry["function"]
        if isinstance(entry, dict) and isinstance(entry.get("function"), dict)
        else entry
        for entry in entries
    ]
    return schemas_of(functions, "parameters")


def read(source: Source) -> Parsed:
    """The calls of a Chat Completions transcript."""
    data = source.data
    messages = messages_of(data)
    if messages is None:
        raise source.error("the top level", "no message list", EXPECTED)
    run_id = text_or_none(data.get("id")) if isinstance(data, dict) else None
    parsed = Parsed(tools=tools_of(data), run_id=run_id)
    pairing = Pairing(parsed)
    legacy_open: dict[str, str] = {}
    for index, message in enumerate(messages):
        where = source.where(index)
        if not isinstance(message, dict):
            pairing.unreadable(where, f"expected a message object, found {_kind(message)}")
            continue
        message_id = text_or_none(message.get("id")) or f"messages[{index}]"
        role = message.get("role")
        if role == "assistant":
            _calls(message, where, message_id, pairing, legacy_open)
        elif role == "tool":
            notes: list[str] = []
            text = block_text(message.get("content"), notes)
            if text is None:
                pairing.unreadable(where, "the tool message's content is not text or parts")
                continue
            pairing.result(
                message.get("tool_call_id"), text, where=where, message_id=message_id, notes=notes
            )
        elif role == "function":
            name = message.get("name")
            notes = []
            text = block_text(message.get("content"), notes)
            if text is None:
                pairing.unreadable(where, "the function message's content is not text")
                continue
            pairing.result(
                legacy_open.pop(str(name), f"function_call {name}"),
                text,
                where=where,
                message_id=message_id,
                notes=notes,
            )
    return parsed


def _calls(
    message: dict[str, Any],
    where: str,
    message_id: str,
    pairing: Pairing,
    legacy_open: dict[str, str],
) -> None:
    tool_calls = message.get("tool_calls")
    if tool_calls is not None and not isinstance(tool_calls, list):
        pairing.unreadable(where, "'tool_calls' is not a list")
        tool_calls = []
    for position, entry in enumerate(tool_calls or []):
        function = entry.get("function") if isinstance(entry, dict) else None
        name = function.get("name") if isinstance(function, dict) else None
        if not isinstance(name, str) or not name:
            pairing.unreadable(
                f"{where}, tool call {position}", "expected a 'function' with a 'name'"
            )
            continue
        assert isinstance(function, dict) and isinstance(entry, dict)
        raw = function.get("arguments")
        arguments, problem = parse_arguments(raw)
        pairing.call(
            ImportedCall(
                tool=name,
                model_call_id=text_or_none(entry.get("id")),
                raw_args=raw,
                arguments=arguments,
                args_problem=problem,
                where=where,
                message_id=message_id,
            )
        )
    legacy = message.get("function_call")
    if isinstance(legacy, dict) and isinstance(legacy.get("name"), str):
        name = legacy["name"]
        raw = legacy.get("arguments")
        arguments, problem = parse_arguments(raw)
        synthetic = f"{message_id}:function_call"
        legacy_open[name] = synthetic
        pairing.call(
            ImportedCall(
                tool=name,
                model_call_id=synthetic,
                raw_args=raw,
                arguments=arguments,
                args_problem=problem,
                where=where,
                message_id=message_id,
            )
        )


def _kind(value: Any) -> str:
    return "null" if value is None else f"a {type(value).__name__}"
