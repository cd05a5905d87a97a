"""One reader for the API formats (Chat Completions, Responses, Anthropic Messages, Gemini),
which each read the same shapes of run: a plain list of their messages (or items, or contents),
a request object read by parts, one request or response object, or a log of them.

``ApiReader.read`` takes the same steps for each: it opens the run's objects, takes its
entries from the shape the source has, pairs calls with results and hands each call on once
answered. Each format subclasses it and fills in the hooks with its own: its tools, the
entries of its objects or of a list, the run's id and how one entry is read.

``read_documents`` opens the objects of a source (``_exchanges``) and adds the tools each one
offers to the run's; a log in a file is read entry by entry as it is iterated (``Documents``),
so that memory holds one entry (one request with the conversation it repeats, and its
response), not the log, whose size grows with the square of the run's length.
"""

from __future__ import annotations

import dataclasses
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Iterator
from functools import partial
from typing import Any, ClassVar, Generic, TypeVar

from workbench.transcripts._exchanges import Document, entry_documents
from workbench.transcripts._parsed import (
    ImportedCall,
    Pairing,
    Parsed,
    Unreadable,
    list_or_empty,
    text_or_none,
)
from workbench.transcripts._source import Opened, Source

ToolsOf = Callable[[Any], dict[str, dict[str, Any]]]
Listed = tuple[str, Any]
"""A value of a list and where it is: ``(where, value)``."""


@dataclasses.dataclass(frozen=True, slots=True)
class Documents:
    """The request and response objects of a run in order, read as they are iterated (once).

    ``head`` is what is known before reading: every object of a run in memory, or those of the
    first entries of a log read entry by entry. Iterating adds each object's tools to the
    run's before the object is handed on (a run in memory has all of them added up front).
    ``source`` is where they are read from, ``unreadable`` where what is not read is listed."""

    head: list[Document]
    rest: Iterable[Document]
    source: Source
    unreadable: list[Unreadable]

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

    def first_of(self, document: Document, key: str, other: str) -> Iterator[Listed]:
        """(where, value) of the first of a response's alternatives under ``key`` (Chat's
        ``choices``, Gemini's ``candidates``): the one the run goes on with. Each other is
        listed as unreadable, ``other`` naming it."""
        for position, value in enumerate(list_or_empty(document.data.get(key))):
            where = document.at(f"{key}[{position}]")
            if position == 0:
                yield where, value
            else:
                problem = f"{other} the run did not continue; not read"
                self.unreadable.append(Unreadable(where, problem))


def read_documents(opened: Opened, parsed: Parsed, tools_of: ToolsOf) -> Documents | None:
    """The API objects of a source in order (None when it is a plain message or item list),
    the tools each one offers added to ``parsed.tools``. A log in a file is read entry by entry
    as it is iterated."""
    source, documents = opened.source, opened.documents
    if source.exchanges:
        assert documents is not None  # the source is opened as a log only when its head is one
        rest = _entry_by_entry(source, parsed, tools_of)
        return Documents(documents, rest, source, parsed.unreadable)
    if documents is None:
        return None
    for document in documents:
        parsed.tools.update(tools_of(document.data))
    return Documents(documents, documents, source, parsed.unreadable)


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


E = TypeVar("E")
"""One entry of a format's run, as its reader reads it (a message, an item, a content...)."""


class ApiReader(ABC, Generic[E]):
    """The reader of one API format: ``read``, the same steps for every API format, and the
    hooks a format's reader fills in with its own (a subclass each).

    ``read`` takes the run's entries from the first of these the source is:

    1. a request object read by parts (``source.stream_key``): the items of its run, one at a
       time, each named by ``run_where`` and made an entry by ``in_order``; the object's id is
       the run's (``run_id``);
    2. request and response objects: their entries, ``document_entries(documents)``, which
       is None when the objects hold no run of this format (read on, as a list) and may raise;
       a run held by one object has its id (``run_id``);
    3. a bare list read by parts: its items, each named ``"<noun> N"``, through ``in_order``;
    4. a plain list: its values, each named ``"<noun> N"`` (``"line N"`` in JSON lines),
       through ``in_order``;

    and anything else is a ``TranscriptError`` (the top level has ``missing``; ``expected``).
    Each entry is then read in turn (``read_entry``, or the ``entry_reader`` a format makes
    for each run), and each call is handed on once its result is read (or the run ends). A run
    of many objects repeats itself, and is paired as such (``Pairing(repeated=True)``).
    ``tools_of`` gives the tools each object offers.
    """

    expected: ClassVar[str]
    """What the error says a transcript of this format is."""
    missing: ClassVar[str] = "no message list"
    """What the error says the top level of a source of no shape this reader reads lacks."""
    noun: ClassVar[str] = "message"
    """What a list of this format holds."""
    run_where: ClassVar[str | None] = None
    """Where an item of a request read by parts is (formatted with its index); ``"<noun> {}"``
    when None."""

    @abstractmethod
    def tools_of(self, data: Any) -> dict[str, dict[str, Any]]:
        """Tool name → input schema, of the tools the object ``data`` offers."""

    @abstractmethod
    def document_entries(self, documents: Documents) -> Iterable[E] | None:
        """The entries of a run of request and response objects, in order; None when the
        objects hold no run of this format."""

    @abstractmethod
    def in_order(self, values: Iterable[Listed]) -> Iterable[E]:
        """The entries of a list's values, in order."""

    def entry_reader(self, pairing: Pairing) -> Callable[[int, E], None]:
        """A reader of one run's entries, given each entry and its index in turn, that adds
        their calls and results to ``pairing``: ``read_entry`` with the run's pairing. A format
        that keeps more of a run than its pairing while it reads makes a reader of its own."""
        return partial(self.read_entry, pairing)

    def read_entry(self, pairing: Pairing, index: int, entry: E) -> None:
        """Read the ``index``-th entry of a run: add its calls and results to ``pairing``."""
        raise NotImplementedError(f"{type(self).__name__} reads a run with its entry_reader")

    def run_id(self, first: dict[str, Any]) -> str | None:
        """The id of a run held by the one object ``first``: its own ``id``."""
        return text_or_none(first.get("id"))

    def read(self, opened: Opened) -> Parsed:
        """The calls of a transcript of this format; they are read as they are iterated."""
        parsed = Parsed()
        documents = read_documents(opened, parsed, self.tools_of)
        entries = self._entries(opened.source, documents, parsed)
        collected = Parsed(tools=parsed.tools, unreadable=parsed.unreadable)
        pairing = Pairing(collected, repeated=documents is not None and documents.many)
        parsed.calls = _calls(entries, self.entry_reader(pairing), pairing)
        return parsed

    def _entries(self, source: Source, documents: Documents | None, parsed: Parsed) -> Iterable[E]:
        if documents is not None and source.stream_key is not None:
            parsed.run_id = self.run_id(documents.first.data)
            where = self.run_where or f"{self.noun} {{}}"
            return self.in_order(source.items(parsed.unreadable, where))
        if documents is not None:
            entries = self.document_entries(documents)
            if entries is not None:
                if not documents.many:
                    parsed.run_id = self.run_id(documents.first.data)
                return entries
        if source.stream_key is not None:
            return self.in_order(source.items(parsed.unreadable, f"{self.noun} {{}}"))
        if isinstance(source.data, list):
            return self.in_order(numbered(source, source.data, self.noun))
        raise source.error("the top level", self.missing, self.expected)


class ListedApiReader(ApiReader[Listed]):
    """The reader of an API format whose entries are a list's values as they are listed,
    ``(where, value)``."""

    def in_order(self, values: Iterable[Listed]) -> Iterable[Listed]:
        return values


def _calls(
    entries: Iterable[E], read_entry: Callable[[int, E], None], pairing: Pairing
) -> Iterator[ImportedCall]:
    """Each call once its result is read (or the run ends), reading ``entries`` as it goes."""
    for index, entry in enumerate(entries):
        yield from pairing.answered()
        read_entry(index, entry)
    yield from pairing.answered()
    yield from pairing.remaining()
