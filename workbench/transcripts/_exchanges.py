"""Runs logged as API traffic: request and response objects, alone or as a list of exchanges.

A provider's request object (``{"model", "messages" | "input" | "contents", "tools"}``) and its
response object (``{"object": "chat.completion", "choices"}``, ``{"type": "message",
"content"}``, ``{"object": "response", "output"}``, ``{"candidates"}``) are each a transcript on
their own. A run logged call by call is a list (or JSON lines) of them: request/response pairs
(``{"request": {...}, "response": {...}}``, an HTTP capture's ``body`` inside each side), or the
objects themselves one after another. ``documents_of`` puts any of these in order as
``Document``s; each format reader reads their messages, and because every request repeats the
conversation so far, a call or result seen once is read once (``Pairing(repeated=True)``).

A log in a file is read entry by entry: ``entry_documents`` gives the objects of one entry. This
module only tells the objects apart and orders them; reading them from a source, entry by entry,
is ``_api_reader``'s.
"""

from __future__ import annotations

import dataclasses
from typing import Any

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
        documents.extend(entry_documents(entry, place) or ())
    return documents


def entry_documents(entry: Any, place: str) -> list[Document] | None:
    """The objects of one entry of a log at ``place``: both sides of a pair, or the object
    itself; None when the entry is neither."""
    if is_pair(entry):
        return _pair(entry, place)
    if is_api_object(entry):
        return [Document(place, entry, "")]
    return None


def _pair(entry: dict[str, Any], place: str) -> list[Document]:
    found = []
    for key in PAIR_KEYS:
        side = _side(entry.get(key))
        if side is not None:
            found.append(Document(f"{place} {key}".strip(), side, key))
    return found


def logged(documents: list[Document] | None) -> bool:
    """True when ``documents`` (of the first entries of a file) start a log of API objects
    worth reading entry by entry: more than one request or response object."""
    return documents is not None and len(documents) > 1
