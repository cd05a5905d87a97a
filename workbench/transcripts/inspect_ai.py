"""The reader of inspect_ai eval logs: the ``.eval`` zip (``header.json`` and
``samples/*.json``) and the ``.json`` log (one object with ``eval`` and ``samples``), read
without the inspect_ai package (``read``; ``is_eval_log`` is the formats' table's mark of one).

Each sample is a run (``run_id`` is ``<eval_id>/<sample id>/<epoch>``). Calls are the
``tool_calls`` of assistant messages, answered by ``role: "tool"`` messages; tool events give
the timing and model events the tool definitions. A tool message with an ``error`` is a
failure, and its receipt is ``Error: <message>``, the text inspect_ai sends OpenAI-compatible
models for it. Content stored as ``attachment://`` references is read from the sample's
attachments. Recent inspect_ai compresses ``.eval`` members with zstd: before Python 3.14 they
are read with the ``zipfile-zstd`` package of the ``transcripts`` extra, and without it the
error names the extra.

A log is read one sample at a time, and a sample message by message
(``workbench/transcripts/_inspect_parts.py``), so that one huge sample is not held whole
either: every sample of a ``.json`` log, and an ``.eval`` sample member larger than
``LARGE_BYTES`` (a smaller one is read whole, from memory, which saves copying it to disk).

An archive's members are read against what its directory declares, so that a zip bomb costs
neither memory nor disk: a member is decompressed a chunk at a time and never past its declared
size (one whose bytes run past it fails its checksum and is listed as damaged), and a member
larger than ``LARGE_BYTES`` that declares more than ``MAX_RATIO`` times its compressed size is
listed as unreadable without being decompressed at all.
"""

from __future__ import annotations

import datetime
import errno
import importlib
import json
import lzma
import shutil
import tempfile
import zipfile
import zlib
from collections.abc import Iterator
from typing import IO, Any, Protocol

from workbench._extras import install_hint
from workbench.transcripts._inspect_parts import LARGE_BYTES, ByteText, SampleParts, read_sample
from workbench.transcripts._json_stream import JsonStreamError, each, names
from workbench.transcripts._parsed import (
    ImportedCall,
    Pairing,
    Parsed,
    Unreadable,
    block_text,
    list_or_empty,
    schemas_of,
    sent_call,
    text_or_none,
)
from workbench.transcripts._source import Opened, Source

NAME = "inspect_ai"
EXPECTED = "an inspect_ai eval log ('.eval' zip or '.json' with 'eval' and 'samples')"
ATTACHMENT = "attachment://"
ZSTD = f"the 'transcripts' extra installed ({install_hint('transcripts')})"
_DAMAGED = (zipfile.BadZipFile, zlib.error, lzma.LZMAError, EOFError, OSError, NotImplementedError)
"""What reading a member whose bytes were damaged in the archive raises: an offset before the
file's start, in a damaged directory, is an OSError; a flag or method zipfile does not know
(once zstd has been taught) is NotImplementedError; damaged LZMA data is an LZMAError."""

MAX_RATIO = 200
"""The most a member larger than ``LARGE_BYTES`` may declare, as a multiple of its compressed
size. Logs of real runs compress tens of times at most; a member of a few megabytes declaring
gigabytes (a zip bomb) is listed as unreadable rather than copied to disk and read."""

CHUNK = 1 << 16
"""Bytes decompressed at a time: what one read of a member may add to memory."""


def is_log(data: Any) -> bool:
    """True for the object of an inspect_ai ``.json`` log."""
    return isinstance(data, dict) and isinstance(data.get("eval"), dict) and "samples" in data


def is_eval_log(opened: Opened) -> bool:
    """True for an inspect_ai log: a zip archive (a file opened without data), or a ``.json``
    log's object (``is_log``)."""
    return (opened.data is None and opened.source.path is not None) or is_log(opened.data)


def read(source: Source) -> Parsed:
    """The calls of every sample of an eval log, sample by sample: an ``.eval`` archive is read
    one sample member at a time and a ``.json`` log one sample of its ``samples`` at a time,
    message by message, each call handed on once answered, so memory holds one message (or
    one small member), not the log."""
    parsed = Parsed()
    samples: Iterator[tuple[str, Any]]
    if source.log_head is not None and source.path is not None:
        header = source.log_head
        samples = _json_samples(source, parsed)
    elif source.data is None and source.path is not None:
        header, names = _zip_contents(source)
        samples = _zip_samples(source, names, parsed)
    elif is_log(source.data):
        header = source.data
        samples = (
            (f"samples[{index}]", sample)
            for index, sample in enumerate(list_or_empty(source.data.get("samples")))
        )
    else:
        raise source.error("the top level", "no 'eval' object", EXPECTED)
    eval_info = header.get("eval") if isinstance(header, dict) else None
    eval_id = text_or_none(eval_info.get("eval_id")) if isinstance(eval_info, dict) else None
    parsed.run_id = eval_id
    parsed.calls = _calls(samples, eval_id or source.fingerprint, parsed)
    return parsed


def _calls(
    samples: Iterator[tuple[str, Any]], eval_id: str, parsed: Parsed
) -> Iterator[ImportedCall]:
    for where, sample in samples:
        if isinstance(sample, SampleParts):
            yield from _sample_by_parts(sample, where, eval_id, parsed)
        elif not isinstance(sample, dict):
            parsed.unreadable.append(Unreadable(where, "expected a sample object"))
        else:
            yield from _sample(sample, where, eval_id, parsed)


def _zip_contents(source: Source) -> tuple[dict[str, Any], list[str]]:
    """The log's header and the names of its sample members, in order."""
    with _archive(source) as archive:
        names = archive.namelist()
        header_name = next(
            (name for name in ("header.json", "_journal/start.json") if name in names), None
        )
        if header_name is None:
            raise source.error("the archive", "no header.json in it", EXPECTED)
        bomb = _bomb(archive.getinfo(header_name))
        if bomb is not None:
            raise source.error(header_name, bomb, EXPECTED)
        try:
            header = _member(archive, header_name, source)
        except _DAMAGED as exc:
            raise source.error(header_name, f"damaged in the archive ({exc})", EXPECTED) from None
    samples = sorted(n for n in names if n.startswith("samples/") and n.endswith(".json"))
    return header, samples


def _zip_samples(source: Source, members: list[str], parsed: Parsed) -> Iterator[tuple[str, Any]]:
    """Each sample member, read when it is asked for (one larger than ``LARGE_BYTES`` by
    parts, from a copy on disk). One that is not JSON, is damaged in the archive, or cannot be
    copied to disk is listed as unreadable, and the next is read."""
    with _archive(source) as archive:
        for name in members:
            try:
                info = archive.getinfo(name)
                size = info.file_size
                bomb = _bomb(info)
                if bomb is not None:
                    parsed.unreadable.append(Unreadable(name, bomb))
                    continue
                if size > LARGE_BYTES:
                    with tempfile.TemporaryFile() as copy:
                        try:
                            _copy_member(archive, name, source, copy)
                        except OSError as exc:  # the temporary directory is full, say
                            parsed.unreadable.append(Unreadable(name, _uncopied(size, exc)))
                            continue
                        yield name, _member_by_parts(copy, name, source, parsed)
                    continue
                sample = _member(archive, name, source)
            except ValueError as exc:
                parsed.unreadable.append(Unreadable(name, str(exc)))
                continue
            except _DAMAGED as exc:
                parsed.unreadable.append(Unreadable(name, f"damaged in the archive ({exc})"))
                continue
            yield name, sample


def _uncopied(size: int, exc: OSError) -> str:
    """Why a member to be read by parts was not read: its copy on disk failed."""
    full = exc.errno in (errno.ENOSPC, errno.EDQUOT, errno.EFBIG)
    return (
        f"a {size:,}-byte member, read by parts from a copy on disk, could not be copied to a "
        f"temporary file ({exc.strerror or exc})"
        + ("; set TMPDIR to a directory with room for it" if full else "")
    )


def _bomb(info: zipfile.ZipInfo) -> str | None:
    """Why a member is not decompressed (its declared size is more than ``MAX_RATIO`` times
    its compressed size, and more than ``LARGE_BYTES``), or None to read it."""
    declared, compressed = info.file_size, info.compress_size
    if declared <= LARGE_BYTES or declared <= MAX_RATIO * max(compressed, 1):
        return None
    return (
        f"declares {declared:,} bytes from {compressed:,} compressed, more than {MAX_RATIO} "
        "times its compressed size as a zip bomb does; not decompressed"
    )


def _open_member(archive: zipfile.ZipFile, name: str, source: Source) -> IO[bytes]:
    try:
        return archive.open(name)
    except NotImplementedError:
        # inspect_ai writes its members with zstd, which zipfile reads natively only from
        # Python 3.14 on; before that the zipfile-zstd package (the ``transcripts`` extra)
        # teaches it, once imported.
        _teach_zipfile_zstd(name, source)
        return archive.open(name)


def _copy_member(archive: zipfile.ZipFile, name: str, source: Source, copy: IO[bytes]) -> None:
    with _open_member(archive, name, source) as member:
        shutil.copyfileobj(member, copy, CHUNK)
    copy.seek(0)


def _member_by_parts(copy: IO[bytes], name: str, source: Source, parsed: Parsed) -> Any:
    """The first pass over a sample member (the sample's parts), or the member's value when it
    is not an object; ValueError, naming the member, when it is not JSON."""
    file = ByteText(copy)
    try:
        reader = file.reader
        found = _sample_at(file, parsed)
        if reader.peek():
            raise JsonStreamError(f"expected the end of the member, found {reader.peek()!r}")
    except (JsonStreamError, UnicodeDecodeError) as exc:
        raise source.error(name, f"not JSON ({exc})", "a JSON file inside the log") from None
    finally:
        file.detach()
    return found


def _json_samples(source: Source, parsed: Parsed) -> Iterator[tuple[str, Any]]:
    """Each sample of a ``.json`` log, by parts, read when it is asked for; where the text
    stops being JSON, the rest of the log is listed as unreadable."""
    assert source.path is not None
    index = 0
    with source.path.open("rb") as handle:
        file = ByteText(handle)
        reader = file.reader
        try:
            for name in names(reader):
                if name != "samples" or reader.peek() != "[":
                    reader.value()
                    continue
                for found in each(reader, lambda: _sample_at(file, parsed)):
                    yield f"samples[{index}]", found
                    index += 1
                return  # what follows the samples holds no calls
        except (JsonStreamError, UnicodeDecodeError) as exc:
            parsed.unreadable.append(
                Unreadable(f"samples[{index}] onwards", f"{exc}; the rest of the log is unread")
            )
        finally:
            file.detach()


def _sample_at(file: ByteText, parsed: Parsed) -> Any:
    """The sample ``file.reader`` stands at, by parts; a value that is not an object as it is
    (listed as no sample object)."""
    return _parts_of(file, parsed) if file.reader.peek() == "{" else file.reader.value()


def _parts_of(file: ByteText, parsed: Parsed) -> SampleParts:
    """The first pass over the sample ``file.reader`` stands at, its events read as it goes."""
    events = _EventReader(parsed)
    parts = read_sample(file, events)
    parts.timing = events.timing
    return parts


def _archive(source: Source) -> zipfile.ZipFile:
    assert source.path is not None
    try:
        return zipfile.ZipFile(source.path)
    except zipfile.BadZipFile as exc:
        raise source.error("the archive", f"not a readable zip ({exc})", EXPECTED) from None


def _member(archive: zipfile.ZipFile, name: str, source: Source) -> Any:
    """A member's JSON value, decompressed a chunk at a time (``zipfile`` stops each member at
    its declared size and checks its CRC there; a whole read would first inflate up to 2 GiB
    at once, whatever the member declares)."""
    chunks: list[bytes] = []
    with _open_member(archive, name, source) as member:
        while chunk := member.read(CHUNK):
            chunks.append(chunk)
    raw = b"".join(chunks)
    del chunks
    try:
        return json.loads(raw.decode("utf-8"))
    except (ValueError, RecursionError) as exc:
        raise source.error(name, f"not JSON ({exc})", "a JSON file inside the log") from None


def _teach_zipfile_zstd(name: str, source: Source) -> None:
    try:
        importlib.import_module("zipfile_zstd")
    except ImportError:
        raise source.error(
            name,
            "compressed with zstd, which this Python's zipfile cannot read without the "
            "zipfile-zstd package",
            ZSTD,
        ) from None


def _sample(sample: dict[str, Any], where: str, eval_id: str, parsed: Parsed) -> list[ImportedCall]:
    """The calls of one sample, each with its result (the sample's tools and unreadable parts
    go to ``parsed``)."""
    attachments = sample.get("attachments")
    attachments = attachments if isinstance(attachments, dict) else {}
    run_id = f"{eval_id}/{sample.get('id')}/{sample.get('epoch', 1)}"
    timing = _timing(sample.get("events"), parsed)
    pairing = Pairing(Parsed(tools=parsed.tools, unreadable=parsed.unreadable))
    messages = sample.get("messages")
    if not isinstance(messages, list):
        parsed.unreadable.append(Unreadable(where, "the sample has no 'messages' list"))
        return []
    for index, message in enumerate(messages):
        _message(message, index, where, run_id, timing, attachments, pairing)
    assert isinstance(pairing.parsed.calls, list)
    return pairing.parsed.calls


def _sample_by_parts(
    parts: SampleParts, where: str, eval_id: str, parsed: Parsed
) -> Iterator[ImportedCall]:
    """The calls of one sample read by parts (``read_sample`` has read its timing, tools and
    where its attachments lie), each handed on once its result is read."""
    run_id = f"{eval_id}/{parts.id}/{parts.epoch}"
    if not parts.has_messages:
        parsed.unreadable.append(Unreadable(where, "the sample has no 'messages' list"))
        return
    pairing = Pairing(Parsed(tools=parsed.tools, unreadable=parsed.unreadable))
    try:
        for index, message in parts.messages():
            _message(message, index, where, run_id, parts.timing, parts.attachments, pairing)
            yield from pairing.answered()
    except ValueError as exc:  # not UTF-8, or the file changed since the first pass
        parsed.unreadable.append(
            Unreadable(
                f"{where} onwards",
                f"could not be read back ({exc}); the rest of the sample is unread",
            )
        )
    yield from pairing.remaining()


class _Attachments(Protocol):
    def get(self, key: str) -> Any: ...


def _message(
    message: Any,
    index: int,
    where: str,
    run_id: str,
    timing: dict[str, tuple[float | None, float | None]],
    attachments: _Attachments,
    pairing: Pairing,
) -> None:
    at = f"{where} message {index}"
    if not isinstance(message, dict):
        pairing.unreadable(at, "expected a message object")
        return
    message_id = text_or_none(message.get("id")) or f"messages[{index}]"
    role = message.get("role")
    tool_calls = message.get("tool_calls")
    if role == "assistant" and tool_calls is not None and not isinstance(tool_calls, list):
        pairing.unreadable(at, "'tool_calls' is not a list")
    elif role == "assistant":
        for position, entry in enumerate(list_or_empty(tool_calls)):
            _call(entry, f"{at}, tool call {position}", message_id, run_id, timing, pairing)
    elif role == "tool":
        _result(message, at, message_id, attachments, pairing)


def _call(
    entry: Any,
    where: str,
    message_id: str,
    run_id: str,
    timing: dict[str, tuple[float | None, float | None]],
    pairing: Pairing,
) -> None:
    name = entry.get("function") if isinstance(entry, dict) else None
    if not isinstance(name, str) or not name:
        pairing.unreadable(where, "a tool call without a 'function' name")
        return
    assert isinstance(entry, dict)
    call_id = text_or_none(entry.get("id"))
    started, ended = timing.get(call_id or "", (None, None))
    call = sent_call(
        name,
        call_id,
        entry.get("arguments"),
        where,
        run_id=run_id,
        message_id=message_id,
        started_at=started,
        ended_at=ended,
    )
    # inspect_ai's own word on arguments it could not parse, where they parse here
    call.args_problem = call.args_problem or text_or_none(entry.get("parse_error"))
    pairing.call(call)


def _result(
    message: dict[str, Any],
    where: str,
    message_id: str,
    attachments: _Attachments,
    pairing: Pairing,
) -> None:
    notes: list[str] = []
    error = message.get("error")
    if isinstance(error, dict):
        text: str | None = f"Error: {_resolve(str(error.get('message') or ''), attachments)}"
    else:
        text = block_text(_resolved(message.get("content"), attachments), notes)
    if text is None:
        pairing.unreadable(where, "the tool message's content is not text or content parts")
        return
    pairing.result(
        message.get("tool_call_id"),
        text,
        where=where,
        flagged_error=isinstance(error, dict),
        message_id=message_id,
        notes=notes,
    )


def _resolve(text: str, attachments: _Attachments) -> str:
    if text.startswith(ATTACHMENT):
        found = attachments.get(text[len(ATTACHMENT) :])
        if isinstance(found, str):
            return found
    return text


def _resolved(content: Any, attachments: _Attachments) -> Any:
    if isinstance(content, str):
        return _resolve(content, attachments)
    if isinstance(content, list):
        return [
            {**block, "text": _resolve(block["text"], attachments)}
            if isinstance(block, dict) and isinstance(block.get("text"), str)
            else block
            for block in content
        ]
    return content


def _timing(events: Any, parsed: Parsed) -> dict[str, tuple[float | None, float | None]]:
    """Tool call id → (started, ended) from the sample's tool events; tool definitions from
    its model events."""
    reader = _EventReader(parsed)
    for event in list_or_empty(events):
        reader(event)
    return reader.timing


class _EventReader:
    """Reads a sample's events one at a time: each tool call's times (``timing``, call id →
    (started, ended)), and the tool definitions of its model events (into ``parsed``)."""

    def __init__(self, parsed: Parsed) -> None:
        self.parsed = parsed
        self.timing: dict[str, tuple[float | None, float | None]] = {}

    def __call__(self, event: Any) -> None:
        if not isinstance(event, dict):
            return
        if event.get("event") == "tool" and isinstance(event.get("id"), str):
            times = (_time(event.get("timestamp")), _time(event.get("completed")))
            self.timing[event["id"]] = times
        elif event.get("event") == "model":
            for name, schema in schemas_of(event.get("tools"), "parameters").items():
                self.parsed.tools.setdefault(name, schema)


def _time(value: Any) -> float | None:
    if not isinstance(value, str):
        return None
    try:
        return datetime.datetime.fromisoformat(value).timestamp()
    except ValueError:
        return None
