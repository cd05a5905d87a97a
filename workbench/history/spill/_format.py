"""The spill's one line format: a first line naming the format, its version and the history it
belongs to, then one entry a line, each sealed with the CRC-32 of its own bytes.

    workbench-history-spill 1 "/path/to/history.sqlite"
    1c291ca3 ["row", "call_…", "add", …, "{…}"]
    0b4ed1f0 ["warn", "call_…", "late result discarded after the call ended"]

An entry is a JSON array whose first item names what it is (the history decides what each
means); its CRC is eight hex digits and a space before it. A line that fails its CRC, or is
not such an array, is damaged; a last line with no newline was torn by its process ending
inside the ``write``.
"""

from __future__ import annotations

import json
import zlib
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, Protocol

MAGIC = b"workbench-history-spill 1 "
"""How a spill's first line begins: its format and version. A file whose first line does not
begin so is not a spill, and is never read past it, renamed or removed."""

MAX_HEADER = 8192
"""The longest first line read when deciding whether a file is a spill."""

Entry = list[Any]


class Source(Protocol):
    """A file of rows to write into SQLite (a spill a process left, a file of the previous
    version), held by this process while it is read."""

    name: str
    problems: list[str]
    """What was wrong with its lines, filled as they are read."""

    @property
    def path(self) -> Path:
        """Where the file is."""
        ...

    def entries(self) -> Iterator[Entry]:
        """Its whole entries, oldest first."""
        ...

    def retire(self) -> str | None:
        """Once its entries are written: remove it, or keep it aside (its new name)."""
        ...

    def release(self) -> None:
        """Let go of it without retiring it (its entries were not written)."""
        ...


def header(database: Path) -> bytes:
    """The first line of a spill of the history at ``database``."""
    return MAGIC + json.dumps(str(database), ensure_ascii=True).encode() + b"\n"


def history_named(first_line: bytes) -> str | None:
    """The history a spill's first line names, or None when the line is not a spill's."""
    if not first_line.startswith(MAGIC) or not first_line.endswith(b"\n"):
        return None
    try:
        named = json.loads(first_line[len(MAGIC) :])
    except ValueError:
        return None
    return named if isinstance(named, str) else None


def lines_of(entries: Sequence[Entry]) -> bytes:
    """``entries`` as spill lines, each sealed with its CRC."""
    out = []
    for entry in entries:
        body = json.dumps(entry, ensure_ascii=True, allow_nan=False).encode()
        out.append(b"%08x %s\n" % (zlib.crc32(body), body))
    return b"".join(out)


def entry_of(line: bytes) -> Entry | None:
    """The entry a whole line holds (without its newline), or None when it is damaged."""
    crc, space, body = line[:8], line[8:9], line[9:]
    if space != b" ":
        return None
    try:
        if int(crc, 16) != zlib.crc32(body):
            return None
        entry = json.loads(body)
    except (ValueError, RecursionError):
        return None
    if not isinstance(entry, list) or not entry or not isinstance(entry[0], str):
        return None
    return entry


def call_id_in(line: bytes) -> str | None:
    """The call id a damaged line seems to hold, to name it (never trusted for anything else)."""
    start = line.find(b'"call_')
    end = line.find(b'"', start + 1)
    if start < 0 or end < 0:
        return None
    return line[start + 1 : end].decode("ascii", "replace")[:80]


def read_entries(chunks: Iterator[bytes], name: str, problems: list[str]) -> Iterator[Entry]:
    """The entries of a spill's body, read a chunk at a time (memory bounded by the longest
    line); each damaged line and a torn last line is named in ``problems``."""
    rest = bytearray()
    number = 1  # the first line is the header
    for chunk in chunks:
        start = len(rest)
        rest += chunk
        if chunk.find(b"\n") < 0:
            continue  # a line longer than a chunk: gathered whole first
        begin = 0
        while (end := rest.find(b"\n", max(begin, start))) >= 0:
            line = bytes(rest[begin:end])
            begin = end + 1
            number += 1
            if not line:
                continue
            entry = entry_of(line)
            if entry is None:
                problems.append(damaged(name, number, line))
            else:
                yield entry
        del rest[:begin]
    if rest:
        problems.append(
            f"{name} line {number + 1} is torn (its process ended inside the write, so that "
            "call was never told it ended); skipped"
        )


def damaged(name: str, number: int, line: bytes) -> str:
    """The sentence for a damaged line: where it is, and whose row it seems to have held."""
    call_id = call_id_in(line)
    whose = f" (it seems to hold the row of {call_id})" if call_id else ""
    return f"{name} line {number} is damaged: it fails its check{whose}; it was not written"
