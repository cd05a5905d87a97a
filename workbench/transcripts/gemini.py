"""Gemini ``generateContent``: ``{"contents": [...], "tools": [{"functionDeclarations": ...}]}``
(REST camelCase; snake_case keys are read too), calls as ``functionCall`` parts of model
contents answered by ``functionResponse`` parts, matched by ``id`` when the call has one and
else by name, in order.

The receipt is the text the model was given: the response's ``output`` (or ``error``, which
marks the result as a failure) when it is the one text field, else the response object as
JSON.
"""

from __future__ import annotations

import json
from typing import Any

from workbench.transcripts._model import (
    ImportedCall,
    Pairing,
    Parsed,
    parse_arguments,
    text_or_none,
)
from workbench.transcripts._source import Source

NAME = "gemini"
EXPECTED = "an object with a 'contents' list of Gemini contents"
PART_KEYS = ("functionCall", "function_call", "functionResponse", "function_response")


def contents_of(data: Any) -> list[Any] | None:
    """The contents of a Gemini transcript, or None if it has none."""
    if isinstance(data, dict) and isinstance(data.get("contents"), list):
        return list(data["contents"])
    return None


def has_function_parts(data: Any) -> bool:
    """True when some content of ``data`` holds a function call or response part."""
    for content in contents_of(data) or []:
        parts = content.get("parts") if isinstance(content, dict) else None
        if isinstance(parts, list) and any(
            isinstance(part, dict) and any(key in part for key in PART_KEYS) for part in parts
        ):
            return True
    return False


def tools_of(data: Any) -> dict[str, dict[str, Any]]:
    """Tool name → ``parameters`` from every tool's function declarations."""
    found: dict[str, dict[str, Any]] = {}
    tools = data.get("tools") if isinstance(data, dict) else None
    for tool in tools if isinstance(tools, list) else []:
        if not isinstance(tool, dict):
            continue
        declarations = tool.get("functionDeclarations", tool.get("function_declarations"))
        for declaration in declarations if isinstance(declarations, list) else []:
            if isinstance(declaration, dict) and isinstance(declaration.get("name"), str):
                schema = declaration.get("parameters")
                found[declaration["name"]] = (
                    schema if isinstance(schema, dict) else {"type": "object"}
                )
    return found


def receipt_of(response: Any) -> tuple[str, bool]:
    """The text a ``functionResponse.response`` gave the model, and whether it was an error."""
    if isinstance(response, dict) and len(response) == 1:
        ((key, value),) = response.items()
        if key in ("output", "error") and isinstance(value, str):
            return value, key == "error"
    return json.dumps(response, ensure_ascii=False), False


def read(source: Source) -> Parsed:
    """The calls of a Gemini transcript."""
    data = source.data
    contents = contents_of(data)
    if contents is None:
        raise source.error("the top level", "no contents list", EXPECTED)
    assert isinstance(data, dict)
    parsed = Parsed(tools=tools_of(data), run_id=text_or_none(data.get("id")))
    pairing = Pairing(parsed)
    by_name: dict[str, list[str]] = {}
    made_up: list[ImportedCall] = []  # calls the model sent without an id
    for index, content in enumerate(contents):
        where = source.where(index)
        parts = content.get("parts") if isinstance(content, dict) else None
        if not isinstance(parts, list):
            pairing.unreadable(where, "expected a content with a 'parts' list")
            continue
        message_id = f"contents[{index}]"
        for position, part in enumerate(parts):
            if not isinstance(part, dict):
                continue
            at = f"{where}, part {position}"
            call = part.get("functionCall", part.get("function_call"))
            answer = part.get("functionResponse", part.get("function_response"))
            if isinstance(call, dict):
                name = call.get("name")
                if not isinstance(name, str) or not name:
                    pairing.unreadable(at, "a functionCall without a 'name'")
                    continue
                call_id = text_or_none(call.get("id")) or f"{message_id}:{position}"
                by_name.setdefault(name, []).append(call_id)
                raw = call.get("args", {})
                arguments, problem = parse_arguments(raw)
                imported = ImportedCall(
                    tool=name,
                    model_call_id=call_id,
                    raw_args=raw,
                    arguments=arguments,
                    args_problem=problem,
                    where=at,
                    message_id=message_id,
                )
                pairing.call(imported)
                if text_or_none(call.get("id")) is None:
                    made_up.append(imported)
            elif isinstance(answer, dict):
                name = answer.get("name")
                waiting = by_name.get(str(name), [])
                answered = text_or_none(answer.get("id"))
                if answered is None and waiting:
                    answered = waiting[0]
                if answered in waiting:
                    waiting.remove(answered)
                text, failed = receipt_of(answer.get("response"))
                pairing.result(
                    answered, text, where=at, flagged_error=failed, message_id=message_id
                )
    for imported in made_up:
        imported.model_call_id = None  # paired by position; the row keeps what the model sent
    return parsed
