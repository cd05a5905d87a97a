"""Runs logged as API traffic: request and response objects, alone or as a list of exchanges.

A provider's request object (``{"model", "messages" | "input" | "contents", "tools"}``) and its
response object (``{"object": "chat.completion", "choices"}``, ``{"type": "message",
"content"}``, ``{"object": "response", "output"}``, ``{"candidates"}``) are each a transcript on
their own. A run logged call by call is a list (or JSON lines) of them: request/response pairs
(``{"request": {...}, "response": {...}}``, an HTTP capture's ``body`` inside each side), or the
objects themselves one after another. ``documents_of`` puts any of these in order as
``Document``s; each format reader reads their messages, and because every request repeats the
conversation so far, a call or result seen once is read once (``Pairing(repeated=True)``).

A log in a file is read entry by entry (``Documents``): memory holds one entry (one request
with the conversation it repeats, and its response), not the log, whose size grows with the
square of the run's length.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Iterator
from typing import TYPE_CHECKING, Any

from workbench.transcripts._parsed import Unreadable

if TYPE_CHECKING:
    from workbench.transcripts._parsed import Parsed
    from workbench.transcripts._source import Source

PAIR_KEYS = ("request", "response")
BODY_KEYS = ("body", "json", "data")


@dataclasses.dataclass(frozen=True, slots=True)
class Document:
    """One request or response object of a run and where it is (``""`` for the whole input,
    ``"exchange 3 request"`` or ``"line 4 response"`` in a log)."""

    where: str
    data: dict[str, Any]
    side: str  # "request", "response" or "" when the log does not say

    def at(self, rest: str) -> str:
        """``rest`` (``"message 2"``) placed inside this document."""
        return f"{self.where}, {rest}" if self.where else rest


def is_api_object(value: Any) -> bool:
    """True for a provider request or response object (not a message, not an item)."""
    if not isinstance(value, dict):
        return False
    if value.get("object") in ("chat.completion", "response") or value.get("type") == "message":
        return True
    if "role" in value:
        return False  # a message, even one with extra keys
    return (
        isinstance(value.get("messages"), list)
        or isinstance(value.get("choices"), list)
        or isinstance(value.get("contents"), list)
        or isinstance(value.get("candidates"), list)
        or ("type" not in value and ("input" in value or isinstance(value.get("output"), list)))
    )


def _side(value: Any) -> dict[str, Any] | None:
    """The API object of one side of a pair (an HTTP capture keeps it under ``body``)."""
    if is_api_object(value):
        assert isinstance(value, dict)
        return value
    if isinstance(value, dict):
        for key in BODY_KEYS:
            if is_api_object(value.get(key)):
                found: dict[str, Any] = value[key]
                return found
    return None


def is_pair(value: Any) -> bool:
    """True for ``{"request": ..., "response": ...}`` with an API object on either side."""
    return isinstance(value, dict) and any(_side(value.get(key)) is not None for key in PAIR_KEYS)


def documents_of(data: Any, where: Any = None) -> list[Document] | None:
    """The request and response objects of ``data`` in order, or None when ``data`` is not API
    traffic (a plain message or item list). ``where(index)`` names a list entry."""
    if is_api_object(data):
        return [Document("", data, "")]
    if is_pair(data):
        return _pair(data, "")
    if not isinstance(data, list) or not data:
        return None
    entries = [entry for entry in data if isinstance(entry, dict)]
    if not entries or not all(is_pair(entry) or is_api_object(entry) for entry in entries):
        return None
    documents: list[Document] = []
    for index, entry in enumerate(data):
        place = where(index) if where is not None else f"exchange {index}"
        if is_pair(entry):
            documents.extend(_pair(entry, place))
        elif isinstance(entry, dict):
            documents.append(Document(place, entry, ""))
    return documents


def _pair(entry: dict[str, Any], place: str) -> list[Document]:
    found = []
    for key in PAIR_KEYS:
        side = _side(entry.get(key))
        if side is not None:
            found.append(Document(f"{place} {key}".strip(), side, key))
    return found


def logged(data: Any) -> bool:
    """True when ``data`` (the first entries of a file) starts a log of API objects that is
    worth reading entry by entry: more than one request or response object."""
    documents = documents_of(data)
    return documents is not None and len(documents) > 1


ToolsOf = Callable[[Any], dict[str, dict[str, Any]]]


@dataclasses.dataclass(frozen=True, slots=True)
class Documents:
    """The request and response objects of a run in order, read as they are iterated (once).

    ``head`` is what is known before reading: every object of a run in memory, or those of the
    first entries of a log read entry by entry. Iterating adds each object's tools to the
    run's before the object is handed on (a run in memory has all of them added up front)."""

    head: list[Document]
    rest: Iterable[Document]

    @property
    def first(self) -> Document:
        """The first object (its id names a run of one object)."""
        return self.head[0]

    @property
    def many(self) -> bool:
        """True when the run has more than one object: each request repeats the conversation
        so far, so a call or result met again is the same one (``Pairing(repeated=True)``)."""
        return len(self.head) > 1

    def __iter__(self) -> Iterator[Document]:
        return iter(self.rest)


def read_documents(source: Source, parsed: Parsed, tools_of: ToolsOf) -> Documents | None:
    """The API objects of a source in order (None when it is a plain message or item list),
    the tools each one offers added to ``parsed.tools``: the opening of every format reader
    that reads API traffic. A log in a file is read entry by entry as it is iterated."""
    if source.exchanges:
        head = documents_of(source.head if source.streamed else source.data)
        assert head is not None  # the source is opened as a log only when its head is one
        return Documents(head, _entry_by_entry(source, parsed, tools_of))
    documents = documents_of(source.data, source.where if source.is_json_lines else None)
    if documents is None:
        return None
    for document in documents:
        parsed.tools.update(tools_of(document.data))
    return Documents(documents, documents)


def _entry_by_entry(source: Source, parsed: Parsed, tools_of: ToolsOf) -> Iterator[Document]:
    """The objects of a log in a file, one entry in memory at a time; an entry that is neither
    an API object nor a pair of them is listed as unreadable where it is met."""
    for place, entry in source.entries(parsed.unreadable):
        if is_pair(entry):
            found = _pair(entry, place)
        elif is_api_object(entry):
            found = [Document(place, entry, "")]
        else:
            problem = "expected a request or response object, or a pair of them; not read"
            parsed.unreadable.append(Unreadable(place, problem))
            continue
        for document in found:
            parsed.tools.update(tools_of(document.data))
            yield document


def numbered(source: Source, values: list[Any], noun: str = "message") -> list[tuple[str, Any]]:
    """(where, value) for each value of a plain list: its line in JSON lines, else its index."""
    return [(source.where(index, noun), value) for index, value in enumerate(values)]
