"""Reading the API formats' runs: the request and response objects of a source, in order.

Each API format (Chat Completions, Responses, Anthropic Messages, Gemini) reads the same shapes
of run: a plain list of its messages (or items, or contents), one request or response object,
or a log of them. ``read_documents`` opens the objects of a source (``_exchanges``) and adds
the tools each one offers to the run's; a log in a file is read entry by entry as it is
iterated (``Documents``), so that memory holds one entry (one request with the conversation it
repeats, and its response), not the log, whose size grows with the square of the run's length.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from workbench.transcripts._exchanges import Document, documents_of, entry_documents
from workbench.transcripts._parsed import Parsed, Unreadable
from workbench.transcripts._source import Source

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
    the tools each one offers added to ``parsed.tools``. A log in a file is read entry by entry
    as it is iterated."""
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
        found = entry_documents(entry, place)
        if found is None:
            problem = "expected a request or response object, or a pair of them; not read"
            parsed.unreadable.append(Unreadable(place, problem))
            continue
        for document in found:
            parsed.tools.update(tools_of(document.data))
            yield document


def numbered(source: Source, values: list[Any], noun: str = "message") -> list[tuple[str, Any]]:
    """(where, value) for each value of a plain list: its line in JSON lines, else its index."""
    return [(source.where(index, noun), value) for index, value in enumerate(values)]
