"""Reading what ``load`` is given: a path (JSON, JSON lines, an inspect_ai ``.eval`` zip) or
an object already in memory, into one ``Source`` the format readers share.

A file that is not UTF-8, or not JSON and not JSON lines, is a ``TranscriptError`` naming the
file, the line (and column) and what was expected. In JSON lines, a bad line is listed as
unreadable and the other lines are read.

A JSON lines file is streamed: only its first ``HEAD_LINES`` values are read to tell its format
(``head``), and a reader that can go line by line (MCP traffic) reads ``stream()``, one line in
memory at a time; any other reader asks for ``materialize()``, which reads every line. An
inspect_ai ``.json`` log is left unread but for the members before its samples (``log_head``),
which its reader then reads one by one; a request document with ``messages`` is read once for
its other members (and the first messages, for detection) and its reader then reads the
messages one by one (``stream_key``, ``items``). A Responses document reads its ``input``
items and then its ``output`` items the same way (``stream_sequel``), and so does a response
object alone (its ``output``). A log of request and response objects (or pairs of them), as a
JSON list or JSON lines, is read entry by entry (``exchanges``, ``entries``). ``shape`` names
which of these ways a source was opened to be read, for the formats' table to say whose reader
reads it so.

One load sees its source through ``Opened``: the data detection and the reader look at, and its
request and response objects, found once for both.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
import os
import stat
from collections.abc import Callable, Iterator
from dataclasses import field
from pathlib import Path
from typing import IO, Any

from workbench.transcripts._exchanges import Document, documents_of, logged
from workbench.transcripts._json_stream import (
    JsonStreamError,
    array_head,
    array_items,
    frame_of,
    head_before,
    members,
)
from workbench.transcripts._parsed import TranscriptError, Unreadable

JSON_EXPECTED = "a JSON document (an object or a list of messages) or JSON lines"
HEAD_LINES = 50
"""How many values of a JSON lines file (or messages of a document read by parts) detection
reads."""
RUN_KEYS = frozenset({"messages", "input", "contents", "output"})
"""Keys under which a request document (or a Responses response object, ``output``) keeps the
run its reader can read item by item."""
RUN_SEQUELS = {"input": "output"}
"""A run key → the key whose array, when it follows, continues the same run (a Responses
request logged with its response: the input items, then the output items)."""
OTHER_RUN_KEYS = frozenset({"choices", "candidates", "samples"})
"""Keys under which other formats keep their run: a document with one of these holds no run
under ``messages`` (and is not read through to find that out)."""
LOG_HEAD = 4
"""How many entries of a log of API objects detection reads: each request repeats the run so
far, so an entry can be long, and the first one names its API."""
LIST_KEY = "[]"
"""The ``stream_key`` of a file that is itself the list of messages (or items)."""
WHOLE = "whole"
"""The ``shape`` of a source opened whole: in memory, or a file with nothing to read by parts."""
LINES = "lines"
"""The ``shape`` of JSON lines read line by line."""
LOG = "log"
"""The ``shape`` of a JSON list of request and response objects read entry by entry."""
LOG_LINES = "log lines"
"""The ``shape`` of JSON lines of request and response objects read line by line."""
SAMPLES = "samples"
"""The ``shape`` of an inspect_ai ``.json`` log read sample by sample."""


@dataclasses.dataclass(slots=True)
class Source:
    """One transcript to read.

    ``data`` is the parsed JSON document; for JSON lines it is the list of the lines' values,
    and ``line_numbers`` maps each value's index to its line. ``path`` is set for a file;
    ``name`` is what errors call it. ``fingerprint`` identifies the content, for run ids.
    ``log_head`` is set, and ``data`` left unread, for an inspect_ai ``.json`` log: the members
    before its samples, which its reader then reads one by one. ``stream_key`` is set for a
    document whose messages are read one by one (``items``): ``data`` then holds its other
    members and only the first ``HEAD_LINES`` of its messages, which detection looks at;
    ``stream_sequel`` names the member whose items continue the run after them, if any.
    ``exchanges`` is set for a log of API objects read entry by entry (``entries``): its first
    ``LOG_HEAD`` entries are in ``head`` (JSON lines, ``streamed``) or ``data`` (a JSON list).
    """

    name: str
    data: Any = None
    path: Path | None = None
    line_numbers: list[int] | None = None
    bad_lines: list[Unreadable] = field(default_factory=list)
    fingerprint: str = ""
    head: list[Any] | None = None
    streamed: bool = False
    log_head: dict[str, Any] | None = None
    stream_key: str | None = None
    stream_sequel: str | None = None
    exchanges: bool = False

    @property
    def is_json_lines(self) -> bool:
        """True when ``data`` came from JSON lines (or the file is JSON lines, streamed)."""
        return self.line_numbers is not None or self.streamed

    def stream(self, unreadable: list[Unreadable]) -> Iterator[tuple[int, Any]]:
        """(line number, value) of each line of a streamed file, read one at a time; a line
        that is not JSON is added to ``unreadable`` where it is met."""
        assert self.path is not None and self.streamed
        with self.path.open(encoding="utf-8-sig", errors="strict") as handle:
            number = 0
            while True:
                try:
                    line = handle.readline()
                except UnicodeDecodeError:
                    raise TranscriptError(
                        self.name,
                        f"line {number + 1}",
                        "the bytes are not UTF-8",
                        "UTF-8 JSON text",
                    ) from None
                if not line:
                    return
                number += 1
                if not line.strip():
                    continue
                try:
                    yield number, json.loads(line)
                except (ValueError, RecursionError) as exc:
                    unreadable.append(
                        Unreadable(f"line {number}", f"not JSON ({exc}); expected one JSON value")
                    )

    def items(
        self, unreadable: list[Unreadable], where: str = "message {}"
    ) -> Iterator[tuple[str, Any]]:
        """(where, item) for each item of the array under ``stream_key`` of a document read by
        parts, one at a time, ``where`` formatted with the item's index; where the text stops
        being JSON, the rest is listed in ``unreadable``."""
        assert self.path is not None and (self.stream_key is not None or self.exchanges)
        index = 0
        with self.path.open(encoding="utf-8-sig") as handle:
            try:
                for item in self._run_items(handle):
                    yield where.format(index), item
                    index += 1
            except (JsonStreamError, UnicodeDecodeError) as exc:
                unreadable.append(
                    Unreadable(f"{where.format(index)} onwards", f"{exc}; the rest is unread")
                )

    def entries(self, unreadable: list[Unreadable]) -> Iterator[tuple[str, Any]]:
        """(where, entry) for each entry of a log read entry by entry (``exchanges``): ``"line
        N"`` of JSON lines, ``"exchange N"`` of a JSON list."""
        assert self.exchanges
        if self.streamed:
            for number, value in self.stream(unreadable):
                yield f"line {number}", value
        else:
            yield from self.items(unreadable, "exchange {}")

    def _run_items(self, handle: IO[str]) -> Iterator[Any]:
        if self.stream_key == LIST_KEY or self.exchanges:
            yield from array_items(handle)
            return
        keys = (self.stream_key or "", *([self.stream_sequel] if self.stream_sequel else []))
        for name, value in members(handle, *keys):
            if name in keys:
                yield from value if isinstance(value, Iterator) else ()
                if name == keys[-1]:
                    return

    @property
    def shape(self) -> str:
        """How the source was opened to be read by parts, which says the readers that can read
        it so: ``LOG_LINES``, ``LOG``, ``LINES``, ``SAMPLES``, the ``stream_key`` of a document
        read item by item (``LIST_KEY`` for a bare list), or ``WHOLE`` (nothing to read by
        parts: every reader reads it as it is)."""
        if self.exchanges:
            return LOG_LINES if self.streamed else LOG
        if self.streamed:
            return LINES
        if self.log_head is not None:
            return SAMPLES
        return self.stream_key or WHOLE

    @property
    def read_by_parts(self) -> bool:
        """True when the file was opened to be read by parts (``data`` is not all of it)."""
        return self.log_head is not None or self.stream_key is not None or self.exchanges

    def materialize(self) -> None:
        """Read every line of a streamed file, or the whole of a document read by parts, into
        ``data`` (for readers that need it all). A streamed file (a log of API objects among
        them) is read line by line, and is no longer streamed: what is looked at next is all of
        it, not its first lines."""
        if self.streamed:
            bad: list[Unreadable] = []
            numbers: list[int] = []
            values: list[Any] = []
            for number, value in self.stream(bad):
                numbers.append(number)
                values.append(value)
            self.data, self.line_numbers, self.bad_lines = values, numbers, bad
            self.streamed, self.head, self.exchanges = False, None, False
        elif self.read_by_parts and self.path is not None:
            whole = _from_text(_decode(self.path.read_bytes(), self.name), self.name)
            self.data, self.line_numbers, self.bad_lines = whole.data, whole.line_numbers, []
            self.log_head, self.stream_key, self.stream_sequel = None, None, None
            self.exchanges = False

    def where(self, index: int, noun: str = "message") -> str:
        """``"line N"`` for JSON lines, else ``"<noun> <index>"``."""
        if self.line_numbers is not None and 0 <= index < len(self.line_numbers):
            return f"line {self.line_numbers[index]}"
        return f"{noun} {index}"

    def error(self, where: str, problem: str, expected: str) -> TranscriptError:
        """A ``TranscriptError`` about this source."""
        return TranscriptError(self.name, where, problem, expected)


class Opened:
    """A source as one load sees it, for detection and then the reader: ``data`` (the first
    values of a streamed file, else the source's data) and its request and response objects
    (``documents``, None when it is not API traffic), found once, when first asked for."""

    def __init__(self, source: Source) -> None:
        self.source = source
        self.data = source.head if source.streamed else source.data

    @functools.cached_property
    def documents(self) -> list[Document] | None:
        """The request and response objects of ``data`` in order (a list's entries named by
        their lines in JSON lines), or None."""
        source = self.source
        return documents_of(self.data, source.where if source.line_numbers is not None else None)

    def whole(self) -> Opened:
        """The source read whole (``Source.materialize``), as seen then: this one when reading
        it whole changed nothing."""
        self.source.materialize()
        again = Opened(self.source)
        return self if again.data is self.data else again


def open_source(given: Any) -> Source:
    """A ``Source`` for a path (``str`` or ``os.PathLike``) or an in-memory object (a list or a
    dict as ``json.loads`` gives, or JSON text as ``bytes``)."""
    if isinstance(given, os.PathLike) or (isinstance(given, str) and _looks_like_path(given)):
        return _from_file(Path(given))
    if isinstance(given, bytes | bytearray | str):
        text = _decode(bytes(given) if not isinstance(given, str) else given, "<text>")
        return _from_text(text, "<text>")
    dump = getattr(given, "model_dump", None)
    if callable(dump) and not isinstance(given, type):
        given = dump(mode="json")  # a pydantic model, such as inspect_ai's EvalLog
    if isinstance(given, list | dict):
        fingerprint = hashlib.sha1(repr(_shape(given)).encode()).hexdigest()[:12]
        return Source(name="<object>", data=given, fingerprint=fingerprint)
    raise TranscriptError(
        "<object>",
        "the input",
        f"a {type(given).__name__} cannot be read as a transcript",
        "a path, a list of messages, a dict, or JSON text",
    )


SHAPE_DEPTH = 32
"""How deep ``_shape`` looks into an object: a fingerprint needs no more, and an object nested
past the recursion limit is summed up, not a ``RecursionError``."""


def _shape(value: Any, depth: int = 0) -> Any:
    """A cheap summary of an object, for a fingerprint that does not walk every byte twice."""
    if depth >= SHAPE_DEPTH:
        return type(value).__name__
    if isinstance(value, list):
        return (len(value), [_shape(item, depth + 1) for item in value[:3]])
    if isinstance(value, dict):
        items = list(value.items())[:20]
        return sorted((str(key), _shape(item, depth + 1)) for key, item in items)
    return repr(value)[:200]


def _looks_like_path(text: str) -> bool:
    return "\n" not in text and not text.lstrip().startswith(("{", "["))


def _decode(raw: bytes | str, name: str) -> str:
    if isinstance(raw, str):
        return raw
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise TranscriptError(
            name, f"line {line} (byte {exc.start})", "the bytes are not UTF-8", "UTF-8 JSON text"
        ) from None


def _from_file(path: Path) -> Source:
    name = path.name
    if not path.exists():
        raise TranscriptError(name, "the file", f"{path} does not exist", "a transcript file")
    if path.is_dir():
        raise TranscriptError(name, "the path", "it is a directory", "a transcript file")
    kind = _special_kind(path)
    if kind is not None:  # its bytes never end (/dev/zero) or wait on a writer (a FIFO)
        problem = f"it is {kind}, not a regular file; it is not read"
        raise TranscriptError(name, "the path", problem, "a transcript file")
    fingerprint = _file_fingerprint(path)
    with path.open("rb") as handle:
        start = handle.read(2)
    if start == b"PK":  # a zip archive: an inspect_ai .eval log, read by its own reader
        return Source(name=name, path=path, fingerprint=fingerprint)
    streamed = _json_lines_head(path, name, fingerprint)
    if streamed is not None:
        return streamed
    log_head = _inspect_log_head(path)
    if log_head is not None:
        return Source(name=name, path=path, fingerprint=fingerprint, log_head=log_head)
    framed = _run_frame(path)
    if framed is not None:
        frame, (key, *sequel) = framed
        return Source(
            name=name,
            path=path,
            fingerprint=fingerprint,
            data=frame,
            stream_key=key,
            stream_sequel=sequel[0] if sequel else None,
        )
    head = _list_head(path)
    documents = documents_of(head) if head is not None else None
    if head is not None and documents is None:
        return Source(name=name, path=path, fingerprint=fingerprint, data=head, stream_key=LIST_KEY)
    if logged(documents):
        return Source(name=name, path=path, fingerprint=fingerprint, data=head, exchanges=True)
    raw = path.read_bytes()
    source = _from_text(_decode(raw, name), name)
    source.path = path
    source.fingerprint = fingerprint
    return source


_SPECIAL_KINDS = (
    (stat.S_ISFIFO, "a named pipe (FIFO)"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)


def _special_kind(path: Path) -> str | None:
    """What a path that is not a regular file is (``stat`` looks without opening it, so a FIFO
    with no writer does not block), or None for a regular file."""
    mode = path.stat().st_mode
    return next((kind for test, kind in _SPECIAL_KINDS if test(mode)), None)


def _file_fingerprint(path: Path) -> str:
    digest = hashlib.sha1()
    with path.open("rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 16), b""):
            digest.update(chunk)
    return digest.hexdigest()[:12]


def _inspect_log_head(path: Path) -> dict[str, Any] | None:
    """The members before ``samples`` of an inspect_ai ``.json`` log (``eval`` among them), or
    None for any other file."""
    try:
        with path.open(encoding="utf-8-sig") as handle:
            head = head_before(handle, "samples")
    except (JsonStreamError, UnicodeDecodeError):
        return None  # not a log that can be read by parts: the whole-file read names why
    return head if head is not None and isinstance(head.get("eval"), dict) else None


def _run_frame(path: Path) -> tuple[dict[str, Any], tuple[str, ...]] | None:
    """A request document's members with only the first items of its run (Chat Completions
    and Anthropic ``messages``, Responses ``input`` and then ``output``, Gemini ``contents``),
    and the run's keys; None for any other file."""
    try:
        with path.open(encoding="utf-8-sig") as handle:
            return frame_of(handle, RUN_KEYS, HEAD_LINES, OTHER_RUN_KEYS, RUN_SEQUELS)
    except (JsonStreamError, UnicodeDecodeError):
        return None  # not a document that can be read by parts: the whole-file read says why


def _list_head(path: Path) -> list[Any] | None:
    """The first entries of a file that is a list of objects (messages, items, or requests
    and responses), or None for any other file."""
    try:
        with path.open(encoding="utf-8-sig") as handle:
            head = array_head(handle, _head_length, lambda first: isinstance(first, dict))
    except (JsonStreamError, UnicodeDecodeError):
        return None  # not a list that can be read by parts: the whole-file read says why
    if not head or not all(isinstance(item, dict) for item in head):
        return None
    return head


def _head_length(first: Any) -> int:
    """How many entries detection reads of a list (or JSON lines) starting with ``first``."""
    return LOG_HEAD if documents_of([first]) is not None else HEAD_LINES


def _one_line(path: Path) -> bool:
    """True when nothing but white space follows the file's first line break (or it has none),
    found by reading chunks, never the line itself."""
    with path.open("rb") as handle:
        seen_break = False
        for chunk in iter(lambda: handle.read(1 << 16), b""):
            if not seen_break:
                at = chunk.find(b"\n")
                if at < 0:
                    continue
                seen_break, chunk = True, chunk[at:]
            if chunk.strip():
                return False
    return True


def _json_lines_head(path: Path, name: str, fingerprint: str) -> Source | None:
    """A streamed ``Source`` when the file is JSON lines: its first non-empty line is a whole
    JSON object or list and more follows. None for anything else (read whole)."""
    if _one_line(path):
        return None  # one JSON document on one line: not parsed here only to be parsed again
    source = Source(name=name, path=path, fingerprint=fingerprint, streamed=True)
    head: list[Any] = []
    bad: list[Unreadable] = []
    length = HEAD_LINES
    try:
        for _, value in source.stream(bad):
            if not head and (bad or not isinstance(value, dict | list)):
                return None
            length = length if head else _head_length(value)
            head.append(value)
            if len(head) > length:
                break
    except TranscriptError:
        return None  # not UTF-8: the whole-file read names the line and byte
    if len(head) < 2 or bad:
        return None  # one value, or lines that are not JSON early on: read as a whole document
    source.head = head
    source.exchanges = logged(documents_of(head))
    return source


def _from_text(text: str, name: str) -> Source:
    fingerprint = hashlib.sha1(text.encode("utf-8", "backslashreplace")).hexdigest()[:12]
    if not text.strip():
        raise TranscriptError(name, "line 1", "the file is empty", JSON_EXPECTED)
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        lines = text.splitlines()
        if exc.lineno > 1 and sum(1 for line in lines if line.strip()) > 1:
            return _json_lines(lines, name, fingerprint, exc)
        raise TranscriptError(
            name, f"line {exc.lineno} column {exc.colno}", exc.msg, JSON_EXPECTED
        ) from None
    except RecursionError:
        raise TranscriptError(name, "line 1", "nesting too deep to read", JSON_EXPECTED) from None
    except ValueError as exc:  # JSON, but an integer longer than Python converts
        problem = f"a value Python will not read ({exc})"
        raise TranscriptError(name, "the file", problem, JSON_EXPECTED) from None
    return Source(name=name, data=data, fingerprint=fingerprint)


def _json_lines(
    lines: list[str], name: str, fingerprint: str, first_failure: json.JSONDecodeError
) -> Source:
    values: list[Any] = []
    numbers: list[int] = []
    bad: list[Unreadable] = []
    parse: Callable[[str], Any] = json.loads
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            values.append(parse(line))
        except (ValueError, RecursionError) as exc:
            bad.append(Unreadable(f"line {number}", f"not JSON ({exc}); expected one JSON value"))
            continue
        numbers.append(number)
    # Pretty-printed JSON broken somewhere is not JSON lines: most of its lines are not values.
    objects = sum(1 for value in values if isinstance(value, dict | list))
    if objects * 2 < len(values) + len(bad):
        raise TranscriptError(
            name,
            f"line {first_failure.lineno} column {first_failure.colno}",
            first_failure.msg,
            JSON_EXPECTED,
        )
    return Source(
        name=name, data=values, line_numbers=numbers, bad_lines=bad, fingerprint=fingerprint
    )
