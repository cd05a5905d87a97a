"""Reading the rows of a damaged history file page by page, and the check that says a row
came back exactly as it was written.

SQLite stops at the first page it cannot trust; this module does not. It reads the file's
pages itself (the documented SQLite file format), walks the ``calls`` table's b-tree where it
still can, then scans every other page for table leaves holding rows of the same shape, the way
``sqlite3``'s ``.recover`` does (the SQLite Python links against has neither that command's
``sqlite_dbpage`` table nor its recovery API, so it is done here). A cell, a value or a page
that fails is skipped and counted; a text that is not UTF-8 is read with replacement characters
and named.

Every row workbench writes carries a check (``seal``): a CRC-32 of its stored values,
appended to its JSON document. ``check`` says whether a row read back (from SQLite or from
loose pages) still holds exactly those values, so a value changed on disk never passes as the
original.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import mmap
import re
import sqlite3
import struct
import zlib
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

from workbench._record import plain_json

_CHECK_KEY = ', "check": '
_SEALED = re.compile(r', "check": (\d{1,10})\}\Z')

# ── the check on every row ───────────────────────────────────────────────────────────────


def _canonical(kind: str, value: Any) -> bytes:
    """The value as SQLite will give it back from a column of ``kind`` (its type affinity
    applied), so a row checks the same before it is written and after it is read."""
    if value is None:
        return b"n"
    if isinstance(value, str):
        return b"s" + value.encode("utf-8", "surrogatepass")
    if isinstance(value, bytes):
        return b"b" + value
    if kind == "text":
        if isinstance(value, bool | int):
            return b"s%d" % value
        text = f"{value:.15g}"
        return b"s" + (text if re.search(r"[.eni]", text) else text + ".0").encode()
    if kind == "real":
        try:
            return b"f" + float(value).hex().encode()
        except OverflowError:
            return b"s%d" % value
    if isinstance(value, float):
        if value.is_integer() and abs(value) < 2**63:
            return b"i%d" % int(value)
        return b"f" + value.hex().encode()
    return b"i%d" % int(value)


def digest(kinds: Sequence[str], scalars: Sequence[Any], document: str) -> int:
    """CRC-32 of a row's scalar values (read as columns of ``kinds``) and its JSON document."""
    parts = [
        b"n"
        if value is None
        else b"s" + value.encode("utf-8", "surrogatepass")
        if type(value) is str
        else _canonical(kind, value)
        for kind, value in zip(kinds, scalars, strict=True)
    ]
    # Run together without lengths: the check is against damage on disk, not against forgery.
    return zlib.crc32(document.encode("utf-8", "surrogatepass"), zlib.crc32(b"\0".join(parts)))


def seal(kinds: Sequence[str], scalars: Sequence[Any], document: str) -> str:
    """``document`` (a JSON object) with the check of the whole row added as its last key."""
    return f"{document[:-1]}{_CHECK_KEY}{digest(kinds, scalars, document)}}}"


CheckResult = Literal["ok", "changed", "unchecked"]


def check(kinds: Sequence[str], scalars: Sequence[Any], document: object) -> CheckResult:
    """Whether a row read back holds the values it was sealed with: "ok", "changed", or
    "unchecked" (a row written before rows carried a check, or one whose check is gone)."""
    if not isinstance(document, str):
        return "unchecked"
    at = document.rfind(_CHECK_KEY)
    stated = document[at + len(_CHECK_KEY) : -1] if at >= 0 else ""
    if not (stated.isascii() and stated.isdigit() and document.endswith("}")):
        return "unchecked"
    unsealed = document[:at] + "}"
    return "ok" if digest(kinds, scalars, unsealed) == int(stated) else "changed"


# ── the file format ──────────────────────────────────────────────────────────────────────

_PAGE_SIZES = tuple(2**n for n in range(9, 17))
_TABLE_LEAF, _TABLE_INTERIOR = 13, 5
_MAX_CHAIN = 1 << 20
_FIXED_SIZES = (0, 1, 2, 3, 4, 6, 8, 8, 0, 0)  # bytes of serial types 0-9
_MISSING = object()  # stands for the part of a row that was on a lost overflow page


class _Bad(Exception):
    """A page, cell or value that does not hold what the format says it must."""


# Damaged bytes also show as slices too short to unpack or offsets past the data.
_FAILS = (_Bad, struct.error, IndexError)


def _varint(data: bytes | mmap.mmap, at: int, end: int) -> tuple[int, int]:
    value = 0
    for i in range(9):
        if at + i >= end:
            raise _Bad("a number runs past its page")
        byte = data[at + i]
        if i == 8:
            return (value << 8) | byte, at + 9
        value = (value << 7) | (byte & 0x7F)
        if byte < 0x80:
            return value, at + i + 1
    raise _Bad("unreachable")  # pragma: no cover


@dataclasses.dataclass
class Value:
    """One value read from a row: what it holds, and what was wrong with it (or None)."""

    value: Any
    problem: str | None = None


@dataclasses.dataclass
class LooseRow:
    """A row read from the pages: its rowid, its values by column, and what was wrong."""

    rowid: int
    values: dict[str, Any]
    problems: list[str]


@dataclasses.dataclass
class _Layout:
    page_size: int
    usable: int
    pages: int
    root: int | None
    columns: list[str]
    freelist: set[int]
    highest_rowid: int


class PageReader:
    """The pages of one SQLite file, read without SQLite."""

    def __init__(self, data: bytes | mmap.mmap, default_columns: Sequence[str]) -> None:
        self.data = data
        self.size = len(data)
        self.default_columns = list(default_columns)
        self.layout = self._layout()

    # ── pages ────────────────────────────────────────────────────────────────────────────
    def page(self, number: int) -> tuple[int, int]:
        """The start and end offsets of page ``number`` (1-based) in the file; a page cut
        short by the end of the file ends there."""
        size = self.layout.page_size
        if number < 1:
            raise _Bad(f"page {number} does not exist")
        start = (number - 1) * size
        if start >= self.size:
            raise _Bad(f"page {number} is past the end of the file")
        return start, min(start + size, self.size)

    def _page_size(self) -> int:
        if self.size >= 18:
            raw = struct.unpack(">H", self.data[16:18])[0]
            stated = 65536 if raw == 1 else raw
            if stated in _PAGE_SIZES:
                return stated
        return self._guess_page_size()

    def _guess_page_size(self) -> int:
        """The page size under which the most pages begin like b-tree pages (the header that
        says it is damaged)."""
        best, best_score = 4096, -1
        for size in _PAGE_SIZES:
            starts = range(size, min(self.size, size * 64), size)
            score = sum(1 for at in starts if self.data[at] in (2, 5, 10, 13)) * size
            if score > best_score:
                best, best_score = size, score
        return best

    def _layout(self) -> _Layout:
        size = self._page_size()
        reserved = self.data[20] if self.size > 20 and self.data[20] < 64 else 0
        self.layout = _Layout(
            page_size=size,
            usable=size - reserved,
            pages=-(-self.size // size),
            root=None,
            columns=self.default_columns,
            freelist=set(),
            highest_rowid=0,
        )
        with contextlib.suppress(*_FAILS):
            self._read_schema()
        with contextlib.suppress(*_FAILS):
            self._read_freelist()
        return self.layout

    def _read_schema(self) -> None:
        """The ``calls`` table's root page and columns, and its highest rowid ever used, from
        the schema on page 1 (left at the defaults when page 1 is damaged)."""
        for _, values in self._leaf_records(1, header_at=100):
            if len(values) < 5 or values[0].value != "table":
                continue
            name, root, sql = values[1].value, values[3].value, values[4].value
            if name == "calls" and isinstance(root, int) and isinstance(sql, str):
                self.layout.root = root if 1 < root <= self.layout.pages else None
                self.layout.columns = _columns_of(sql) or self.default_columns
            elif name == "sqlite_sequence" and isinstance(root, int):
                with contextlib.suppress(*_FAILS):
                    for _, row in self._leaf_records(root):
                        if row and row[0].value == "calls" and isinstance(row[-1].value, int):
                            self.layout.highest_rowid = row[-1].value

    def _read_freelist(self) -> None:
        """Pages the file had freed: what they hold are rows deleted on purpose."""
        trunk = struct.unpack(">I", self.data[32:36])[0]
        seen = 0
        while trunk and seen < self.layout.pages:
            start, end = self.page(trunk)
            if end - start < 8:
                raise _Bad("a freelist page is cut short")
            self.layout.freelist.add(trunk)
            following, count = struct.unpack(">II", self.data[start : start + 8])
            count = min(count, (end - start - 8) // 4)
            leaves = struct.unpack(f">{count}I", self.data[start + 8 : start + 8 + 4 * count])
            self.layout.freelist.update(leaves)
            trunk, seen = following, seen + 1

    # ── cells ────────────────────────────────────────────────────────────────────────────
    def _cells(self, number: int, kind: int, header_at: int = 0) -> tuple[list[int], int]:
        """The cell offsets of a b-tree page of ``kind``, and the right-most child of an
        interior page."""
        start, end = self.page(number)
        head = start + header_at
        if end - head < 12 or self.data[head] != kind:
            raise _Bad(f"page {number} is not a table page")
        count = struct.unpack(">H", self.data[head + 3 : head + 5])[0]
        size = 12 if kind == _TABLE_INTERIOR else 8
        right = struct.unpack(">I", self.data[head + 8 : head + 12])[0] if size == 12 else 0
        pointers = head + size
        if pointers + 2 * count > end:
            raise _Bad(f"page {number} claims more cells than it can hold")
        cells = []
        for i in range(count):
            offset = struct.unpack(">H", self.data[pointers + 2 * i : pointers + 2 * i + 2])[0]
            cells.append(start + offset)
        return cells, right

    def _payload(self, cell: int, page_end: int) -> tuple[int, bytes, str | None]:
        """The rowid and payload of a table leaf cell (overflow pages followed), and what
        was missing from it (or None)."""
        if not cell < page_end:
            raise _Bad("a cell lies outside its page")
        size, at = _varint(self.data, cell, page_end)
        rowid, at = _varint(self.data, at, page_end)
        if rowid >= 1 << 63:
            rowid -= 1 << 64
        usable = self.layout.usable
        most = usable - 35
        if size <= most:
            if at + size > page_end:
                raise _Bad("a cell runs past its page")
            return rowid, bytes(self.data[at : at + size]), None
        least = (usable - 12) * 32 // 255 - 23
        local = least + (size - least) % (usable - 4)
        if local > most:
            local = least
        if at + local + 4 > page_end:
            raise _Bad("a cell runs past its page")
        parts = [bytes(self.data[at : at + local])]
        have = local
        following = struct.unpack(">I", self.data[at + local : at + local + 4])[0]
        seen: set[int] = set()
        missing = None
        while have < size:
            if following in seen or len(seen) > _MAX_CHAIN:
                missing = "its overflow pages loop"
                break
            seen.add(following)
            try:
                start, end = self.page(following)
            except _FAILS as exc:
                missing = f"part of it was on a lost page ({exc})"
                break
            if end - start < 4:
                missing = "part of it was on a page cut short"
                break
            chunk = bytes(self.data[start + 4 : min(end, start + usable)])
            parts.append(chunk[: size - have])
            have += len(parts[-1])
            following = struct.unpack(">I", self.data[start : start + 4])[0]
        return rowid, b"".join(parts), missing

    def _leaf_records(self, number: int, header_at: int = 0) -> list[tuple[int, list[Value]]]:
        """Every record of a table leaf page, or _Bad if any cell fails."""
        cells, _ = self._cells(number, _TABLE_LEAF, header_at)
        _, end = self.page(number)
        records = []
        for cell in cells:
            rowid, payload, missing = self._payload(cell, end)
            values = _record(payload)
            if missing is not None:
                values.append(Value(_MISSING, missing))
            records.append((rowid, values))
        return records

    # ── the calls table ──────────────────────────────────────────────────────────────────
    def rows(self, counts: Counts) -> Iterator[LooseRow]:
        """Every row of the ``calls`` table that can be read, oldest first where the tree
        still says the order; ``counts`` is filled in with what was lost on the way."""
        seen: set[int] = set()
        visited: set[int] = set()
        gaps: list[tuple[int, int | None]] = []
        if self.layout.root is not None:
            yield from self._walk(self.layout.root, None, None, seen, visited, gaps, counts)
        else:
            gaps.append((0, None))
        for number in range(2, self.layout.pages + 1):
            if number in visited or number in self.layout.freelist:
                continue
            try:
                records = self._leaf_records(number)
            except _FAILS:
                continue  # not a table leaf, or one too damaged to read
            for rowid, values in records:
                row = self._shaped(rowid, values)
                if row is not None and rowid not in seen:
                    seen.add(rowid)
                    yield row
        highest = max([self.layout.highest_rowid, *seen]) if seen else self.layout.highest_rowid
        for low, high in gaps:
            top = highest if high is None else min(high, highest)
            counts.lost += sum(1 for rowid in range(low + 1, top + 1) if rowid not in seen)

    def _walk(
        self,
        number: int,
        low: int | None,
        high: int | None,
        seen: set[int],
        visited: set[int],
        gaps: list[tuple[int, int | None]],
        counts: Counts,
    ) -> Iterator[LooseRow]:
        floor = 0 if low is None else low
        if number in visited:
            gaps.append((floor, high))
            return
        visited.add(number)
        try:
            kind = self.data[self.page(number)[0]]
        except _FAILS:
            gaps.append((floor, high))
            return
        if kind == _TABLE_INTERIOR:
            try:
                cells, right = self._cells(number, _TABLE_INTERIOR)
                _, end = self.page(number)
                children: list[tuple[int, int | None]] = []
                for cell in cells:
                    if cell + 4 > end:
                        raise _Bad("a cell lies outside its page")
                    child = struct.unpack(">I", self.data[cell : cell + 4])[0]
                    key, _ = _varint(self.data, cell + 4, end)
                    children.append((child, key))
            except _FAILS:
                gaps.append((floor, high))
                return
            previous = low
            for below, upper in [*children, (right, high)]:
                yield from self._walk(below, previous, upper, seen, visited, gaps, counts)
                previous = upper
            return
        try:
            cells, _ = self._cells(number, _TABLE_LEAF)
            _, end = self.page(number)
        except _FAILS:
            gaps.append((floor, high))
            return
        for cell in cells:
            try:
                rowid, payload, missing = self._payload(cell, end)
                values = _record(payload)
            except _FAILS:
                counts.lost += 1
                continue
            if missing is not None:
                values.append(Value(_MISSING, missing))
            row = self._shaped(rowid, values)
            if row is None or rowid in seen:
                counts.lost += 1  # a cell of this table that is not a row, or a rowid twice
            else:
                seen.add(rowid)
                yield row

    def _shaped(self, rowid: int, values: list[Value]) -> LooseRow | None:
        """The row as ``calls`` columns, or None for a record of another shape."""
        columns = self.layout.columns
        problems = [v.problem for v in values if v.value is _MISSING and v.problem]
        values = [v for v in values if v.value is not _MISSING]
        if not 6 <= len(values) <= len(columns) or values[0].value is not None:
            return None
        if not isinstance(values[1].value, str):
            return None
        problems += [
            f"{name}: {v.problem}" for name, v in zip(columns, values, strict=False) if v.problem
        ]
        row = {name: values[i].value if i < len(values) else None for i, name in enumerate(columns)}
        return LooseRow(rowid, row, problems)


@dataclasses.dataclass
class Counts:
    """Rows lost while reading pages (the rows kept are counted by whoever copies them)."""

    lost: int = 0


def _record(payload: bytes) -> list[Value]:
    """The values of one SQLite record; a value cut short or not UTF-8 is named."""
    end = len(payload)
    header_size, at = _varint(payload, 0, end)
    if not 1 <= header_size <= end:
        raise _Bad("a record's header is damaged")
    types = []
    while at < header_size:
        serial, at = _varint(payload, at, header_size)
        types.append(serial)
    values: list[Value] = []
    body = header_size
    for serial in types:
        if serial in (10, 11):
            raise _Bad("a record uses a reserved type")
        length = (serial - 12) // 2 if serial >= 12 else _FIXED_SIZES[serial]
        raw = payload[body : body + length]
        body += length
        short = len(raw) < length
        if serial == 0:
            values.append(Value(None))
        elif serial in (8, 9):
            values.append(Value(serial - 8))
        elif serial == 7:
            if short:
                values.append(Value(None, "cut short"))
            else:
                values.append(Value(struct.unpack(">d", raw)[0]))
        elif serial < 7:
            if short:
                values.append(Value(None, "cut short"))
            else:
                values.append(Value(int.from_bytes(raw, "big", signed=True)))
        elif serial % 2:
            try:
                text = raw.decode("utf-8")
                problem = None
            except UnicodeDecodeError:
                text = raw.decode("utf-8", "replace")
                problem = "not valid UTF-8, read with replacement characters"
            if short:
                problem = "cut short" + (f", and {problem}" if problem else "")
            values.append(Value(text, problem))
        else:
            values.append(Value(raw, "cut short" if short else None))
    return values


def _columns_of(sql: str) -> list[str]:
    """The column names a ``CREATE TABLE`` statement declares, as SQLite itself reads it."""
    with contextlib.closing(sqlite3.connect(":memory:")) as conn:
        try:
            conn.execute(sql)
            return [row[1] for row in conn.execute("PRAGMA table_info(calls)")]
        except sqlite3.Error:
            return []


def read_rows(path: Path, default_columns: Sequence[str], counts: Counts) -> Iterator[LooseRow]:
    """Every readable row of the ``calls`` table in the file at ``path``, read page by page.

    ``default_columns`` name the values when the file's own schema is unreadable. The file is
    only read (mapped into memory, so a large file costs no more memory than its pages in use).
    """
    with path.open("rb") as handle:
        if path.stat().st_size == 0:
            return
        with mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as data:
            reader = PageReader(data, default_columns)
            yield from reader.rows(counts)


CHANGED = "its values do not match the check written with them: some were changed on disk"


def checked(row: LooseRow, kinds: Mapping[str, str], document_column: str) -> CheckResult:
    """``check`` of a row read from loose pages (``kinds``: its scalar columns and their
    kinds, in stored order)."""
    scalars = [row.values.get(name) for name in kinds]
    return check(list(kinds.values()), scalars, row.values.get(document_column))


# ── copying what was read into a new history ─────────────────────────────────────────────


@dataclasses.dataclass(frozen=True)
class SalvageReport:
    """What a salvage did: ``kept`` rows copied into ``path`` (``damaged`` of them with values
    that fail their check or could not be read whole, ``unchecked`` of them written before rows
    carried a check), ``lost`` rows that could not be read at all (counted from the gaps in the
    row numbers the file still shows, so an upper bound), and where the ``original`` file now
    lies, byte for byte as it was found."""

    path: Path
    original: Path
    kept: int
    damaged: int
    unchecked: int
    lost: int

    def __str__(self) -> str:
        parts = [f"{self.kept} row(s) were copied into {self.path.name}"]
        if self.damaged:
            parts.append(f"{self.damaged} of them damaged (each says how in its warnings)")
        if self.unchecked:
            parts.append(f"{self.unchecked} of them written without a check to verify")
        parts.append(f"{self.lost} row(s) could not be read and are lost")
        return f"{', '.join(parts)}; the original is kept as {self.original.name}"


def salvage_into(
    source: Path,
    conn: sqlite3.Connection,
    *,
    stored: Sequence[str],
    kinds: Mapping[str, str],
    insert: str,
    new_path: Path,
    batch: int = 500,
) -> SalvageReport:
    """Copy every readable row of the history file ``source`` into ``conn`` with ``insert``
    (whose parameters are the ``stored`` columns, the last being the JSON document), each row
    marked with a warning saying where it came from and what was wrong with it."""
    document_column = stored[-1]
    counts = Counts()
    kept = damaged = unchecked = 0
    first_sealed: int | None = None  # rows after it were all written with a check
    pending: list[list[Any]] = []

    def write() -> int:
        before = conn.total_changes
        with conn:
            conn.executemany(insert, pending)
        pending.clear()
        return conn.total_changes - before

    for row in read_rows(source, ["seq", *stored], counts):
        problems = list(row.problems)
        verdict = checked(row, kinds, document_column)
        if verdict == "changed":
            problems.append(CHANGED)
        elif verdict == "ok" and (first_sealed is None or row.rowid < first_sealed):
            first_sealed = row.rowid
        elif verdict == "unchecked" and first_sealed is not None and row.rowid > first_sealed:
            problems.append("its check is gone although older rows have one: it was damaged")
        warnings = [f"salvaged from the damaged history {source.name}", *problems]
        if verdict == "unchecked" and not problems:
            warnings.append("written without a check, so its values could not be verified")
            unchecked += 1
        damaged += bool(problems)
        scalars = [row.values.get(name) for name in kinds]
        document = _marked(row.values.get(document_column), warnings)
        pending.append([*scalars, seal(list(kinds.values()), scalars, document)])
        if len(pending) >= batch:
            kept += write()
    if pending:
        kept += write()
    return SalvageReport(new_path, source, kept, damaged, unchecked, counts.lost)


def _marked(document: object, warnings: list[str]) -> str:
    """The row's JSON document with ``warnings`` added (its old check dropped); a document
    that is no longer a JSON object is kept whole as text beside them."""
    raw = document.decode("utf-8", "replace") if isinstance(document, bytes) else document
    detail: Any = None
    if isinstance(raw, str):
        found = _SEALED.search(raw)
        with contextlib.suppress(ValueError, RecursionError):  # kept as text just below
            detail = json.loads(raw if found is None else raw[: found.start()] + "}")
    if not isinstance(detail, dict):
        detail = {"unreadable_record": raw if isinstance(raw, str) else None}
        warnings = [*warnings, "its record was not a JSON object; kept as unreadable_record"]
    earlier = detail.get("warnings")
    detail["warnings"] = [*(earlier if isinstance(earlier, list) else []), *warnings]
    return plain_json(detail, [])
