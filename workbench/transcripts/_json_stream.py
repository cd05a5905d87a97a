"""Reading one JSON document a value at a time, with Python's own decoder.

A log whose run sits in one long array (inspect_ai's ``.json`` log keeps every sample under
``samples``) can be read item by item: ``members`` gives the document's top-level members in
order and hands the chosen array over as an iterator, so memory holds one item (and the read
buffer), not the file. Values are decoded by ``json.JSONDecoder.raw_decode``, so they are
exactly what ``json.load`` gives.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Mapping
from typing import IO, Any

CHUNK = 1 << 16
"""Characters read at a time; a value longer than that is read in reads that double what of it
is held, so the buffer holds at most about twice the longest value, whatever the file's size."""

PIECE = 1 << 20
"""The most characters read from the file at once, however much a long value needs."""

_WHITESPACE = " \t\n\r"
_DELIMITERS = _WHITESPACE + ",]}:"
_DECODER = json.JSONDecoder()


class JsonStreamError(ValueError):
    """The text is not the JSON expected where it was read, or holds a value Python's decoder
    will not build (nesting past the recursion limit, an integer longer than
    ``sys.get_int_max_str_digits()``); the message says what was found."""


class JsonReader:
    """The values of a JSON text, read from ``handle`` as they are asked for."""

    def __init__(self, handle: IO[str], offset: int = 0) -> None:
        self.handle = handle
        self.buffer = ""
        self.position = 0
        self.offset = offset  # where in the text ``buffer`` starts
        self.ended = False

    def _more(self, at_least: int = CHUNK) -> bool:
        """Drop what was read, add at least ``at_least`` characters; False at the end."""
        # ``at_least`` must not count what is dropped: the buffer would then grow by the part
        # of a value it held each time one is cut, with the file (about the square root of the
        # file's size times the longest value's), not with the longest value.
        if self.ended:
            return False
        self.offset += self.position
        kept, self.buffer = self.buffer[self.position :], ""
        self.position = 0
        before, wanted = len(kept), max(at_least, CHUNK)
        # Read a piece at a time: held by this name alone, ``kept`` grows in place, where one
        # large read would hold its bytes, their text and the joined buffer at once.
        while len(kept) - before < wanted:
            text = self.handle.read(min(wanted - (len(kept) - before), PIECE))
            if not text:
                break
            kept += text
        self.buffer = kept
        if len(kept) == before:
            self.ended = True
            return False
        return True

    def peek(self) -> str:
        """The next character that is not white space ('' at the end), left unread."""
        while True:
            while self.position < len(self.buffer) and self.buffer[self.position] in _WHITESPACE:
                self.position += 1
            if self.position < len(self.buffer) or not self._more():
                return self.buffer[self.position : self.position + 1]

    def take(self, expected: str) -> None:
        """Read one structural character, which must be one of ``expected``."""
        found = self.peek()
        if not found or found not in expected:
            shown = repr(found) if found else "the end of the file"
            raise JsonStreamError(f"expected one of {expected!r}, found {shown}")
        self.position += 1

    def value(self) -> Any:
        """The next whole JSON value."""
        self.peek()
        while True:
            try:
                value, end = _DECODER.raw_decode(self.buffer, self.position)
            except json.JSONDecodeError as exc:
                # Cut by the end of the buffer, or not JSON: only more text can tell.
                if not self._more(len(self.buffer) - self.position):
                    raise JsonStreamError(f"not JSON ({exc.msg})") from None
                continue
            except RecursionError:
                raise JsonStreamError("a value nested too deeply to read") from None
            except ValueError as exc:  # JSON, but an integer longer than Python converts
                raise JsonStreamError(f"a value Python will not read ({exc})") from None
            # A number cut by the end of the buffer reads as a shorter one ("12" of "12.5"):
            # it is whole only where a delimiter follows it.
            cut = end == len(self.buffer) or (
                type(value) in (int, float) and self.buffer[end] not in _DELIMITERS
            )
            if not cut or self.ended:
                self.position = end
                return value
            self._more(len(self.buffer) - self.position)

    def spanned(self) -> tuple[Any, str, int]:
        """The next whole JSON value, its text, and where in the text it starts."""
        self.peek()
        start = self.offset + self.position
        value = self.value()
        # value() keeps the value's text in the buffer (it drops only what came before it)
        return value, self.buffer[start - self.offset : self.position], start


def names(reader: JsonReader) -> Iterator[str]:
    """The names of the members of the object ``reader`` stands at, in order. After each name
    the reader stands at that member's value, which the caller reads (whole, or item by item)
    before asking for the next name."""
    yield from _member_names(reader, reader.value)


def _member_names(reader: JsonReader, read: Callable[[], Any]) -> Iterator[Any]:
    reader.take("{")
    if reader.peek() == "}":
        reader.take("}")
        return
    while True:
        if reader.peek() != '"':
            raise JsonStreamError(f"expected a member's name, found {reader.peek()!r}")
        name = read()
        reader.take(":")
        yield name
        reader.take(",}")
        if reader.buffer[reader.position - 1] == "}":
            return


def head_before(handle: IO[str], key: str) -> dict[str, Any] | None:
    """The members of the top-level object read from ``handle`` that come before ``key``, or
    None when the text is not such an object (or another member's value is an array: the
    text is then not the log looked for, and no long array is read to find that out)."""
    reader = JsonReader(handle)
    if reader.peek() != "{":
        return None
    head: dict[str, Any] = {}
    for name in names(reader):
        if name == key:
            return head
        if reader.peek() == "[":
            return None
        head[name] = reader.value()
    return None


def members(handle: IO[str], *streamed: str) -> Iterator[tuple[str, Any]]:
    """(key, value) for each member of the top-level object read from ``handle``, in order;
    the value of a key in ``streamed``, when it is an array, is an iterator of its items, read
    as the iterator is advanced (read all of it before asking for the next member)."""
    reader = JsonReader(handle)
    for name in names(reader):
        if name in streamed and reader.peek() == "[":
            yield name, _items(reader)
        else:
            yield name, reader.value()


def _items(reader: JsonReader) -> Iterator[Any]:
    yield from each(reader, reader.value)


def spanned_items(reader: JsonReader) -> Iterator[tuple[Any, str, int]]:
    """Each item of the array ``reader`` stands at, with its text and where that starts."""
    yield from each(reader, reader.spanned)


def spanned_members(
    reader: JsonReader,
) -> Iterator[tuple[tuple[str, str], tuple[Any, str, int]]]:
    """Each member of the object ``reader`` stands at: its name and the name's text, then its
    value as ``spanned`` gives it."""
    for name, text, _ in _member_names(reader, reader.spanned):
        yield (name, text), reader.spanned()


def each(reader: JsonReader, read: Callable[[], Any]) -> Iterator[Any]:
    """Each item of the array ``reader`` stands at, as ``read()`` reads it (which must read
    the whole item)."""
    reader.take("[")
    if reader.peek() == "]":
        reader.take("]")
        return
    while True:
        yield read()
        reader.take(",]")
        if reader.buffer[reader.position - 1] == "]":
            return


def frame_of(
    handle: IO[str],
    keys: frozenset[str],
    keep: int,
    stop_at: frozenset[str] = frozenset(),
    sequels: Mapping[str, str] | None = None,
) -> tuple[dict[str, Any], tuple[str, ...]] | None:
    """The members of the top-level object read from ``handle``, with the first array under
    one of ``keys`` cut to its first ``keep`` items (its other items are read and let go), and
    the keys the run is read from: that key, then ``sequels[key]`` when an array under it
    follows (it continues the same run, and is cut alike). None when the text is not such an
    object, has no array under any of ``keys``, or has another array under one of ``keys`` or
    of ``stop_at`` (found without reading it): it then holds more than one run, or a run of
    another kind, or its parts in an order one pass cannot keep."""
    reader = JsonReader(handle)
    if reader.peek() != "{":
        return None
    frame: dict[str, Any] = {}
    found: list[str] = []
    for name in names(reader):
        array = reader.peek() == "["
        follows = len(found) == 1 and name == (sequels or {}).get(found[0])
        if array and ((not found and name in keys) or follows):
            found.append(name)
            frame[name] = [item for number, item in enumerate(_items(reader)) if number < keep]
        elif array and (name in keys or name in stop_at):
            return None
        else:
            frame[name] = reader.value()
    return (frame, tuple(found)) if found else None


def array_head(
    handle: IO[str],
    keep: int | Callable[[Any], int],
    first_fits: Callable[[Any], bool] = lambda _: True,
) -> list[Any] | None:
    """The first ``keep`` items of the top-level array read from ``handle`` (the others are
    read and let go, so the whole text is checked), or None when the text is not an array or
    its first item does not fit (decided before anything after it is read). ``keep`` may be
    a function of the first item."""
    reader = JsonReader(handle)
    if reader.peek() != "[":
        return None
    kept: list[Any] = []
    length = keep if isinstance(keep, int) else 0
    for number, item in enumerate(_items(reader)):
        if number == 0 and not first_fits(item):
            return None
        if number == 0 and not isinstance(keep, int):
            length = keep(item)
        if number < length:
            kept.append(item)
    if reader.peek():
        raise JsonStreamError(f"expected the end of the file, found {reader.peek()!r}")
    return kept


def array_items(handle: IO[str]) -> Iterator[Any]:
    """Each item of the top-level array read from ``handle``, read as it is asked for."""
    yield from _items(JsonReader(handle))
