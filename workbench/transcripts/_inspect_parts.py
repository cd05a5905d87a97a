"""An inspect_ai sample read message by message, however large.

A sample's tool calls are in its ``messages``, but what reading them needs comes after them:
each call's times and the tool definitions in the sample's ``events``, and the long texts its
messages name (``attachment://<key>``) in its ``attachments``. So a large sample is read in two
passes over its bytes. The first reads every part once, one at a time, and keeps only where
each tool-call and tool-result message lies, each call's times, the tools, and where each
attachment lies. The second reads those messages back one by one, and an attachment when a
message names it. Memory holds one message or attachment at a time, and a few dozen bytes for
each message, call and attachment, not the sample.

Places are byte offsets in the file: the first pass reads its bytes as Latin-1 text (one
character a byte), and decodes again, as UTF-8, each value it keeps whose bytes are not all
ASCII. Values are decoded by Python's own decoder, so they are exactly what ``json.load`` gives.
"""

from __future__ import annotations

import array
import codecs
import contextlib
import io
import json
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import IO, Any

from workbench.transcripts._json_stream import JsonReader, names, spanned_items, spanned_members

LARGE_BYTES = 4 << 20
"""An ``.eval`` sample member larger than this is copied to disk and read by parts; a smaller
one is read whole from memory (held as Python objects, it takes about eight times its size)."""

NOT_AN_OBJECT = -1
"""The place kept for an entry of ``messages`` that is not an object (it is listed unreadable)."""

EventReader = Callable[[Any], None]


class ByteText:
    """A file read as Latin-1 text for its structure, and by byte range for its values."""

    def __init__(self, handle: IO[bytes]) -> None:
        self._fd = handle.fileno()
        start = len(codecs.BOM_UTF8) if handle.read(3) == codecs.BOM_UTF8 else 0
        handle.seek(start)
        self._text = io.TextIOWrapper(handle, encoding="latin-1", newline="")
        self.reader = JsonReader(self._text, offset=start)

    def read(self, start: int, length: int) -> Any:
        """The JSON value whose bytes are ``length`` long from ``start`` (the read position of
        the first pass is left where it is)."""
        return json.loads(os.pread(self._fd, length, start).decode("utf-8"))

    def detach(self) -> None:
        """Let the caller close the file (closing the text view would close it here)."""
        with contextlib.suppress(ValueError):  # already detached: nothing to let go of
            self._text.detach()


def decoded(value: Any, text: str) -> Any:
    """``value``, read from ``text`` (Latin-1 of its bytes), as the UTF-8 of those bytes says."""
    return value if text.isascii() else json.loads(text.encode("latin-1").decode("utf-8"))


class Attachments:
    """A sample's attachments by key, each read from the file when it is asked for."""

    def __init__(self, file: ByteText) -> None:
        self._file = file
        self._places: dict[str, tuple[int, int]] = {}

    def add(self, key: str, start: int, length: int) -> None:
        self._places[key] = (start, length)

    def get(self, key: str) -> Any:
        """The attachment under ``key``, or None when the sample has none."""
        place = self._places.get(key)
        return None if place is None else self._file.read(*place)


@dataclass
class SampleParts:
    """What the first pass keeps of one sample, for the second to read its calls."""

    file: ByteText
    attachments: Attachments
    id: Any = None
    epoch: Any = 1
    has_messages: bool = False
    timing: dict[str, tuple[float | None, float | None]] = field(default_factory=dict)
    # (index, start, length) of each tool-call or tool-result message, run together
    places: array.array[int] = field(default_factory=lambda: array.array("q"))

    def messages(self) -> Iterator[tuple[int, Any]]:
        """(index, message) of each message the second pass reads: an entry that is not an
        object comes as None."""
        places = self.places
        for at in range(0, len(places), 3):
            index, start, length = places[at], places[at + 1], places[at + 2]
            yield index, None if start == NOT_AN_OBJECT else self.file.read(start, length)


def read_sample(file: ByteText, on_event: EventReader) -> SampleParts:
    """The first pass over the sample object ``file.reader`` stands at (read to its end):
    ``on_event`` gets each of its events, decoded."""
    reader = file.reader
    parts = SampleParts(file, Attachments(file))
    for name in names(reader):
        if name == "messages" and reader.peek() == "[":
            parts.has_messages = True
            for index, (message, text, start) in enumerate(spanned_items(reader)):
                if not isinstance(message, dict):
                    parts.places.extend((index, NOT_AN_OBJECT, 0))
                elif message.get("role") in ("assistant", "tool"):
                    parts.places.extend((index, start, len(text)))
        elif name == "events" and reader.peek() == "[":
            for event, text, _ in spanned_items(reader):
                on_event(decoded(event, text))
        elif name == "attachments" and reader.peek() == "{":
            for (key, key_text), (_, text, start) in spanned_members(reader):
                parts.attachments.add(decoded(key, key_text), start, len(text))
        elif name in ("id", "epoch"):
            value, text, _ = reader.spanned()
            setattr(parts, name, decoded(value, text))
        else:
            reader.value()
    return parts
