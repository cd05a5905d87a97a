"""OpenAI Responses API: a list of items (or a request/response object with ``input`` and
``output`` lists), calls as ``function_call`` items answered by ``function_call_output`` items
with the same ``call_id``.

The receipt is the output item's ``output``: a string as it is, a list of content parts as
their text joined by newlines.
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

NAME = "openai_responses"
EXPECTED = "a list of Responses API items, or an object with 'input' and 'output' item lists"
CALL_TYPES = frozenset({"function_call", "function_call_output"})


def items_of(data: Any) -> list[Any] | None:
    """The items of a Responses transcript in order: ``input`` then ``output``."""
    if isinstance(data, list):
        return data
    if isinstance(data, dict):
        items: list[Any] = []
        for key in ("input", "output"):
            value = data.get(key)
            if isinstance(value, list):
                items.extend(value)
        return items if ("input" in data or "output" in data) else None
    return None


def tools_of(data: Any) -> dict[str, dict[str, Any]]:
    """Tool name → input schema from ``tools`` (``{"type": "function", "name", "parameters"}``)."""
    return schemas_of(data.get("tools") if isinstance(data, dict) else None, "parameters")


def read(source: Source) -> Parsed:
    """The calls of a Responses API transcript."""
    data = source.data
    items = items_of(data)
    if items is None:
        raise source.error("the top level", "no item list", EXPECTED)
    run_id = text_or_none(data.get("id")) if isinstance(data, dict) else None
    parsed = Parsed(tools=tools_of(data), run_id=run_id)
    pairing = Pairing(parsed)
    for index, item in enumerate(items):
        where = source.where(index, "item")
        if not isinstance(item, dict):
            pairing.unreadable(where, f"expected an item object, found a {type(item).__name__}")
            continue
        kind = item.get("type")
        item_id = text_or_none(item.get("id")) or f"items[{index}]"
        if kind == "function_call":
            name = item.get("name")
            if not isinstance(name, str) or not name:
                pairing.unreadable(where, "a function_call item without a 'name'")
                continue
            raw = item.get("arguments")
            arguments, problem = parse_arguments(raw)
            pairing.call(
                ImportedCall(
                    tool=name,
                    model_call_id=text_or_none(item.get("call_id")) or item_id,
                    raw_args=raw,
                    arguments=arguments,
                    args_problem=problem,
                    where=where,
                    message_id=item_id,
                )
            )
        elif kind == "function_call_output":
            notes: list[str] = []
            text = block_text(item.get("output"), notes)
            if text is None:
                pairing.unreadable(where, "the 'output' is not text or content parts")
                continue
            pairing.result(item.get("call_id"), text, where=where, message_id=item_id, notes=notes)
    return parsed
