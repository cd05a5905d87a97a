"""Reading a line or byte range of a file of any size with bounded memory.

One pass counts lines in blocks (never holding a whole line, however long); the selected span is
then previewed from its two ends like any stream (head and tail with the cut marker). Used by
``file_read`` and ``artifact_read``; both return the file family's ``kind: "file"`` result.

Every function takes a ``Source``: an open descriptor (what the built-ins pass: the file they
checked, read with ``pread`` and never reopened by name) or a path (opened for the call).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from workbench.envelope import ErrorKind, Preview, ToolFailure
from workbench.families import ends_preview

BLOCK = 1 << 20
SNIFF_BYTES = 8192
Source = int | Path


@contextmanager
def _descriptor(source: Source) -> Iterator[int]:
    if isinstance(source, int):
        yield source
        return
    fd = os.open(source, os.O_RDONLY | os.O_CLOEXEC)
    try:
        yield fd
    finally:
        os.close(fd)


def read_at(fd: int, size: int, offset: int) -> bytes:
    """Up to ``size`` bytes from ``offset`` (fewer only at the end of the file)."""
    chunks: list[bytes] = []
    while size > 0:
        chunk = os.pread(fd, size, offset)
        if not chunk:
            break
        chunks.append(chunk)
        size -= len(chunk)
        offset += len(chunk)
    return b"".join(chunks)


@dataclass(frozen=True)
class Span:
    """A byte range ``[start, end)`` of a file and the lines it covers."""

    start: int
    end: int
    first_line: int
    lines: int
    total_lines: int
    size: int


@dataclass
class _Scan:
    size: int = 0
    newlines: int = 0
    last_byte: bytes = b""


def _scan(
    fd: int, after_newline: tuple[int, ...], before: tuple[int, ...], block_size: int
) -> tuple[_Scan, dict[int, int], dict[int, int]]:
    """One pass over the file: totals, the offset just after the n-th newline for each n in
    ``after_newline``, and the number of newlines before each byte offset in ``before``."""
    scan = _Scan()
    found: dict[int, int] = {}
    counted: dict[int, int] = {}
    wanted = sorted(set(after_newline))
    offsets = sorted(set(before))
    while block := read_at(fd, block_size, scan.size):
        base, seen = scan.size, scan.newlines
        here = block.count(b"\n")
        while offsets and offsets[0] <= base + len(block):
            offset = offsets.pop(0)
            counted[offset] = seen + block.count(b"\n", 0, offset - base)
        while wanted and wanted[0] <= seen + here:
            target, position, number = wanted.pop(0), -1, seen
            while number < target:
                position = block.index(b"\n", position + 1)
                number += 1
            found[target] = base + position + 1
        scan.size += len(block)
        scan.newlines += here
        scan.last_byte = block[-1:]
    for offset in offsets:
        counted[offset] = scan.newlines
    return scan, found, counted


def _total_lines(scan: _Scan) -> int:
    unterminated = scan.size > 0 and scan.last_byte != b"\n"
    return scan.newlines + (1 if unterminated else 0)


def line_span(source: Source, offset: int, limit: int | None, *, block_size: int = BLOCK) -> Span:
    """The span of ``limit`` lines (all when None) from line ``offset`` (1-based).

    Raises ``invalid_args`` on ``offset`` when it is past the last line of a non-empty file.
    """
    last = None if limit is None else offset - 1 + limit
    targets = (offset - 1,) if last is None else (offset - 1, last)
    with _descriptor(source) as fd:
        scan, found, _ = _scan(fd, tuple(n for n in targets if n > 0), (), block_size)
    total = _total_lines(scan)
    if total and offset > total:
        raise ToolFailure(
            ErrorKind.INVALID_ARGS,
            f"`offset` {offset} is past the end: the file has {total} lines.",
            field="offset",
            expected=f"a line number from 1 to {total}",
        )
    start = 0 if offset == 1 else found.get(offset - 1, scan.size)
    end = scan.size if last is None else found.get(last, scan.size)
    lines = min(total, offset - 1 + limit if limit is not None else total) - (offset - 1)
    return Span(start, end, offset, max(0, lines), total, scan.size)


def byte_span(
    source: Source, byte_offset: int, byte_limit: int | None, *, block_size: int = BLOCK
) -> Span:
    """The span of ``byte_limit`` bytes (to the end when None) from ``byte_offset`` (0-based)."""
    with _descriptor(source) as fd:
        return _byte_span(fd, byte_offset, byte_limit, block_size)


def _byte_span(fd: int, byte_offset: int, byte_limit: int | None, block_size: int) -> Span:
    size = os.fstat(fd).st_size
    if byte_offset > size:
        raise ToolFailure(
            ErrorKind.INVALID_ARGS,
            f"`byte_offset` {byte_offset} is past the end: the file has {size} bytes.",
            field="byte_offset",
            expected=f"a byte offset from 0 to {size}",
        )
    end = size if byte_limit is None else min(size, byte_offset + byte_limit)
    scan, _, counted = _scan(fd, (), (byte_offset, end), block_size)
    first = counted[byte_offset] + 1
    inside = counted[end] - counted[byte_offset]
    ends_mid_line = end > byte_offset and read_at(fd, 1, end - 1) != b"\n"
    lines = inside + (1 if ends_mid_line else 0)
    return Span(byte_offset, end, first, lines, _total_lines(scan), scan.size)


def span_preview(source: Source, span: Span, max_chars: int) -> Preview:
    """Head and tail of the span's text (UTF-8, invalid bytes replaced), within ``max_chars``."""
    length = span.end - span.start
    with _descriptor(source) as fd:

        def head(limit: int) -> bytes:
            return read_at(fd, min(limit, length), span.start)

        def tail(limit: int) -> bytes:
            return read_at(fd, min(limit, length), max(span.start, span.end - limit))

        return ends_preview(length, head, tail, max_chars)


def file_result(display: str, span: Span, cut: Preview, *, bytes_mode: bool) -> dict[str, Any]:
    """The file family's canonical result for a span read through ``span_preview``."""
    result: dict[str, Any] = {
        "kind": "file",
        "path": display,
        "text": cut.text,
        "start_line": span.first_line,
        "end_line": span.first_line + span.lines - 1,
        "selected_lines": span.lines,
        "total_lines": span.total_lines,
        "bytes": span.size,
        "truncated": cut.truncated,
    }
    if bytes_mode:
        result["start_byte"] = span.start
        result["end_byte"] = span.end
    return result


def binary_reason(source: Source) -> str | None:
    """Why the file is not UTF-8 text, judged from its first bytes; None when it is text."""
    with _descriptor(source) as fd:
        sample = read_at(fd, SNIFF_BYTES, 0)
    nul = sample.find(b"\0")
    if nul >= 0:
        return f"it contains a NUL byte at offset {nul}"
    try:
        sample.decode("utf-8")
    except UnicodeDecodeError as exc:
        # A multi-byte character cut by the end of the sample is still text.
        if exc.reason == "unexpected end of data" and len(sample) == SNIFF_BYTES:
            return None
        return f"it is not UTF-8 text (byte 0x{sample[exc.start]:02x} at offset {exc.start})"
    return None
