"""The reader of Google Gemini (``generateContent``) transcripts: a list of contents, a request
object (``{"contents": [...], "tools": [{"functionDeclarations": [...]}]}``), a response object
(``{"candidates": [...]}``), or a run logged as request/response pairs. camelCase and
snake_case keys are alike. ``READER`` reads them (the steps are ``ApiReader``'s);
``is_own_object`` and ``has_call_parts`` are the marks the formats' table detects them by.

Calls are ``functionCall`` parts of the model's turns, answered by ``functionResponse`` parts
with the same ``id``, or, where the API sent no ids, by the next response with the same
``name``. The receipt is the ``response`` object as JSON (what the model is given back). Code
the model ran on Google's side (an ``executableCode`` part answered by a
``codeExecutionResult``) is a row with ``executed_by="server"`` whose receipt is the output; an
outcome other than ``OUTCOME_OK`` is a failure. Only ``candidates[0]`` continues a run; a part
of a kind this reader does not know is listed in ``history.unreadable``.

google-genai's own ``model_dump()`` writes every field of a part, the unset ones as ``null``
(``"function_call": null`` beside a ``text``), in snake_case or, with ``by_alias=True``, in
camelCase: a ``null`` field is read as absent, and either spelling of a key as the same key.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from workbench.transcripts._api_reader import ApiReader, Documents, Listed
from workbench.transcripts._parsed import (
    ImportedCall,
    Pairing,
    list_or_empty,
    sent_call,
    text_or_none,
)
from workbench.transcripts._source import Opened

NAME = "gemini"
EXPECTED = (
    "a list of Gemini contents, a request object with 'contents', a response object with "
    "'candidates', or a list of request/response pairs"
)
_SNAKE = re.compile(r"_([a-z0-9])")
NOT_TOOLS = frozenset(
    {
        "text",
        "thought",
        "inlineData",
        "fileData",
        "videoMetadata",
        "thoughtSignature",
        "partMetadata",
        "mediaResolution",
    }
)
CALL_PARTS = frozenset({"functionCall", "functionResponse", "executableCode"})


def _camel(part: dict[str, Any]) -> dict[str, Any]:
    """``part`` with camelCase keys and without its ``null`` fields (the SDK dumps unset
    fields as ``null``)."""
    return {
        _SNAKE.sub(lambda match: match.group(1).upper(), key): value
        for key, value in part.items()
        if value is not None
    }


def is_own_object(data: dict[str, Any]) -> bool:
    """True for a Gemini request (``contents``) or response (``candidates``) object."""
    return isinstance(data.get("contents"), list) or isinstance(data.get("candidates"), list)


def has_call_parts(opened: Opened) -> bool:
    """True when a list of contents holds a function call or response part."""
    for content in list_or_empty(opened.data):
        parts = content.get("parts") if isinstance(content, dict) else None
        for part in list_or_empty(parts):
            if isinstance(part, dict) and CALL_PARTS & set(_camel(part)):
                return True
    return False


def _declarations(data: Any) -> Iterator[dict[str, Any]]:
    """The function declarations with a name in the ``tools`` of an object (camelCase keys)."""
    tools = data.get("tools") if isinstance(data, dict) else None
    for tool in list_or_empty(tools):
        declarations = _camel(tool).get("functionDeclarations") if isinstance(tool, dict) else None
        for declaration in list_or_empty(declarations):
            if isinstance(declaration, dict) and isinstance(declaration.get("name"), str):
                yield _camel(declaration)


def _json_schema(value: Any) -> Any:
    if isinstance(value, dict):
        return {
            key: item.lower() if key == "type" and isinstance(item, str) else _json_schema(item)
            for key, item in value.items()
        }
    if isinstance(value, list):
        return [_json_schema(item) for item in value]
    return value


REPLAYED = object()
"""The content ``document_entries`` gives where a request starts: it repeats the run from its
start, so the calls that answers without ids pair with are those of this request, in its
order."""


Entry = tuple[str, Any, int]
"""(where, content, model turn number)."""


def receipt_of(response: Any) -> tuple[str, bool]:
    """The text a ``functionResponse.response`` gave the model, and whether it was an error: a
    lone ``output`` or ``error`` string is that text (the API's own convention), anything else
    the JSON the model was shown."""
    if isinstance(response, dict) and len(response) == 1:
        ((key, value),) = response.items()
        if key in ("output", "error") and isinstance(value, str):
            return value, key == "error"
    return json.dumps(response, ensure_ascii=False), False


class _Gemini(ApiReader[Entry]):
    """Gemini runs: each request's contents, and each response's first candidate's content as
    one more, with the model turn each is in."""

    expected = EXPECTED
    missing = "no contents list"
    run_where = "contents[{}]"

    def tools_of(self, data: Any) -> dict[str, dict[str, Any]]:
        """Tool name → input schema from ``tools[].functionDeclarations`` (OpenAPI type names
        such as ``"OBJECT"`` read as their JSON Schema spelling)."""
        found: dict[str, dict[str, Any]] = {}
        for entry in _declarations(data):
            schema = entry.get("parametersJsonSchema") or entry.get("parameters")
            found[entry["name"]] = (
                _json_schema(schema) if isinstance(schema, dict) else {"type": "object"}
            )
        return found

    def document_entries(self, documents: Documents) -> Iterator[Entry]:
        """(where, content, model turn number) of every content of every request and response,
        and ``REPLAYED`` where each request starts."""
        turn = 0  # a response's content is the model turn after its request's last one
        for document in documents:
            data = document.data
            contents = data.get("contents")
            if isinstance(contents, list):
                turn = 0
                yield document.where, REPLAYED, turn
            for index, content in enumerate(list_or_empty(contents)):
                yield document.at(f"contents[{index}]"), content, turn
                if isinstance(content, dict) and content.get("role") == "model":
                    turn += 1
            alternatives = documents.first_of(document, "candidates", "another candidate")
            for where, candidate in alternatives:
                content = candidate.get("content") if isinstance(candidate, dict) else None
                yield where, content, turn

    def in_order(self, values: Iterable[Listed]) -> Iterator[Entry]:
        """(where, content, model turn number): the turn counts the model's contents before."""
        turn = 0
        for where, content in values:
            yield where, content, turn
            if isinstance(content, dict) and content.get("role") == "model":
                turn += 1

    def run_id(self, first: dict[str, Any]) -> str | None:
        """A response's ``responseId`` (or an object's ``id``)."""
        keys = _camel(first)
        return text_or_none(keys.get("responseId")) or text_or_none(keys.get("id"))

    def entry_reader(self, pairing: Pairing) -> Callable[[int, Entry], None]:
        return _Run(pairing)


READER = _Gemini()
"""The reader of Gemini transcripts."""


class _Run:
    """Parts in order; calls without ids are answered by name, first sent first answered."""

    def __init__(self, pairing: Pairing) -> None:
        self.pairing = pairing
        self.by_name: dict[str, list[str]] = {}
        self.code: list[str] = []

    def __call__(self, index: int, entry: Entry) -> None:
        """One content, or the start of a request that repeats the run (``REPLAYED``)."""
        where, content, turn = entry
        if content is REPLAYED:
            self.replayed()
        else:
            self.content(where, content, turn)

    def replayed(self) -> None:
        """A request starts again from the run's start: calls waiting for an answer without
        an id are those it sends from here on (each once more, with the key made up for it
        before), not those of the requests before it."""
        self.by_name.clear()
        self.code.clear()

    def content(self, where: str, content: Any, turn: int) -> None:
        parts = content.get("parts") if isinstance(content, dict) else None
        if not isinstance(parts, list):
            if content is not None:
                self.pairing.unreadable(
                    where, "expected a content object with a 'parts' list", content
                )
            return
        for position, raw in enumerate(parts):
            if not isinstance(raw, dict):
                continue
            part = _camel(raw)
            at = f"{where}, part {position}"
            if "functionCall" in part:
                self.call(part["functionCall"], at, turn, position)
            elif "functionResponse" in part:
                self.response(part["functionResponse"], at)
            elif "executableCode" in part:
                self.executable(part["executableCode"], at, turn, position)
            elif "codeExecutionResult" in part:
                self.code_result(part["codeExecutionResult"], at)
            elif not set(part) & NOT_TOOLS:
                kinds = ", ".join(sorted(part))
                self.pairing.unreadable(
                    at, f"a part of a kind this reader does not know ({kinds})", raw
                )

    def call(self, call: Any, where: str, turn: int, position: int) -> None:
        name = call.get("name") if isinstance(call, dict) else None
        if not isinstance(name, str) or not name:
            self.pairing.unreadable(where, "a functionCall without a 'name'", call)
            return
        assert isinstance(call, dict)
        call_id = text_or_none(call.get("id"))
        made_up = call_id is None
        if call_id is None:
            call_id = f"{name}@turn {turn}.{position}"
        if call_id not in self.by_name.get(name, []):
            self.by_name.setdefault(name, []).append(call_id)
        raw = call.get("args")
        turn_id = f"model turn {turn}"
        self.pairing.call(sent_call(name, call_id, raw, where, message_id=turn_id), made_up=made_up)

    def response(self, response: Any, where: str) -> None:
        name = response.get("name") if isinstance(response, dict) else None
        if not isinstance(response, dict) or not isinstance(name, str):
            self.pairing.unreadable(where, "a functionResponse without a 'name'", response)
            return
        call_id = text_or_none(response.get("id"))
        waiting = self.by_name.get(name, [])
        if call_id is None:
            call_id = waiting[0] if waiting else f"{name} (no call of that name)"
        if call_id in waiting:
            waiting.remove(call_id)
        text, failed = receipt_of(response.get("response"))
        self.pairing.result(call_id, text, where=where, message_id=where, flagged_error=failed)

    def executable(self, code: Any, where: str, turn: int, position: int) -> None:
        call_id = f"code_execution@turn {turn}.{position}"
        self.code.append(call_id)
        raw = code if isinstance(code, dict) else {"code": code}
        self.pairing.call(
            ImportedCall(
                tool="code_execution",
                model_call_id=call_id,
                raw_args=raw,
                arguments=raw,
                where=where,
                message_id=f"model turn {turn}",
                executed_by="server",
            ),
            made_up=True,
        )

    def code_result(self, result: Any, where: str) -> None:
        call_id = self.code.pop(0) if self.code else "code_execution (no code part before it)"
        outcome = result.get("outcome") if isinstance(result, dict) else None
        output = result.get("output") if isinstance(result, dict) else None
        self.pairing.result(
            call_id,
            output if isinstance(output, str) else "",
            where=where,
            flagged_error=outcome not in (None, "OUTCOME_OK"),
            message_id=where,
        )
