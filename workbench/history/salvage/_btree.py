"""The rows of one table of an SQLite file, read from its pages without SQLite.

SQLite stops at the first page it cannot trust; this reader does not. It follows the
documented file format: the committed frames of a write-ahead log beside the file are laid
over the pages they replace, the table's b-tree is walked where it can still be, and then every
other page is scanned for table leaves holding records of the table's shape (the way
``sqlite3``'s ``.recover`` works; the SQLite that Python links against has neither that
command's ``sqlite_dbpage`` table nor its recovery API). A page, cell or value that fails is
skipped and counted; text that is not UTF-8 is read with replacement characters and named.
"""

from __future__ import annotations

import bisect
import contextlib
import dataclasses
import mmap
import sqlite3
import struct
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

_PAGE_SIZES = tuple(2**n for n in range(9, 17))
_TABLE_LEAF, _TABLE_INTERIOR = 13, 5
_INDEX_INTERIOR = 2
_BTREE_KINDS = (2, 5, 10, 13)
_GUESS_SPAN = 4 << 20  # bytes read to guess a page size: 64 pages of the largest size
_MAX_CHAIN = 1 << 20
_FIXED_SIZES = (0, 1, 2, 3, 4, 6, 8, 8, 0, 0)  # bytes of serial types 0-9
_WAL_MAGIC = {0x377F0682: "<", 0x377F0683: ">"}  # the checksums' byte order
_MISSING = object()  # stands for the part of a row that was on a lost overflow page
MIN_COLUMNS = 6
"""Fewest values a record needs to be taken for a row (the schema's own tables have fewer)."""


class _Bad(Exception):
    """A page, cell or value that does not hold what the format says it must."""


# Damaged bytes also show as slices too short to unpack or offsets past the data.
_FAILS = (_Bad, struct.error, IndexError)


@dataclasses.dataclass
class Value:
    """One value of a record: what it holds, and what was wrong with it (or None)."""

    value: Any
    problem: str | None = None


@dataclasses.dataclass
class LooseRow:
    """A row read from the pages: its rowid, its values by column, and what was wrong."""

    rowid: int
    values: dict[str, Any]
    problems: list[str]


@dataclasses.dataclass
class Counts:
    """Rows the table's structure says existed but that could not be read."""

    lost: int = 0


class _Kept:
    """The rows given so far, by rowid and by key, and the doubtful rows held back: a row that
    is not sound waits until every page was read, so that a sound row of its key (or under its
    rowid) is given instead of it."""

    def __init__(self, sound: Callable[[LooseRow], bool]) -> None:
        self.sound = sound
        self.rowids: set[int] = set()
        self.keys: set[object] = set()
        self.doubtful: dict[object, LooseRow] = {}

    def offer(self, row: LooseRow) -> LooseRow | None:
        """The row to give now (None: held back, or a copy of a row given already)."""
        key = _key(row)
        if key in self.keys:
            return None
        if not self.sound(row):
            self.doubtful.setdefault(key, row)
            return None
        self.doubtful.pop(key, None)
        self.keys.add(key)
        self.rowids.add(row.rowid)
        return row

    def known(self, row: LooseRow) -> bool:
        """True when ``row``'s key was given, or is held back already."""
        key = _key(row)
        return key in self.keys or key in self.doubtful

    def rest(self) -> Iterator[LooseRow]:
        """The doubtful rows no sound row of their key replaced, in the order met."""
        for key, row in self.doubtful.items():
            if key not in self.keys:
                self.keys.add(key)
                self.rowids.add(row.rowid)
                yield row
        self.doubtful.clear()


def _key(row: LooseRow) -> object:
    values = list(row.values.values())
    return values[1] if len(values) > 1 else row.rowid


def read_rows(
    path: Path,
    table: str,
    default_columns: Sequence[str],
    counts: Counts,
    sound: Callable[[LooseRow], bool] = lambda row: True,
) -> Iterator[LooseRow]:
    """Every readable row of ``table`` in the SQLite file at ``path`` (and its ``-wal``).

    ``default_columns`` name the values when the file's own schema is unreadable; the first is
    the rowid alias, the second the key each row is known by (a row found twice is given
    once). ``sound(row)`` says a row came back as it was written: a row that is not (its page
    damaged, its rowid perhaps too) never hides a sound one, and is given last, only when no
    sound row of its key turned up. The files are only read, mapped into memory, so a large file
    costs no more memory than the pages in use. ``counts.lost`` is filled in once the rows are
    read.
    """
    if path.stat().st_size == 0:
        return
    with contextlib.ExitStack() as stack:
        main = stack.enter_context(_mapped(path))
        wal_path = path.with_name(path.name + "-wal")
        wal = None
        if wal_path.exists() and wal_path.stat().st_size > 32:
            wal = stack.enter_context(_mapped(wal_path))
        reader = _Reader(main, wal, table, default_columns)
        yield from reader.rows(counts, _Kept(sound))


@contextlib.contextmanager
def _mapped(path: Path) -> Iterator[mmap.mmap]:
    with path.open("rb") as handle, mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as data:
        yield data


def _varint(data: bytes, at: int, end: int) -> tuple[int, int]:
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


class _Reader:
    def __init__(
        self, main: mmap.mmap, wal: mmap.mmap | None, table: str, columns: Sequence[str]
    ) -> None:
        self.main = main
        self.table = table
        self.columns = list(columns)
        self.page_size = self._page_size(wal)
        self.frames: dict[int, int] = {}  # page number -> offset of its latest committed frame
        self.loose_frames: list[int] = []  # offsets of frames past damage in the log
        self.wal_damage: str | None = None
        self.sequence_root: int | None = None
        self.wal = wal
        pages = -(-len(main) // self.page_size)
        if wal is not None:
            pages = max(pages, self._read_wal(wal))
        self.pages = pages
        header = self.page(1)[:100] if pages else b""
        reserved = header[20] if len(header) > 20 and header[20] < 64 else 0
        self.usable = self.page_size - reserved
        self.root: int | None = None
        self.highest_rowid = 0
        self.freelist: set[int] = set()
        with contextlib.suppress(*_FAILS):
            self._read_schema()
        with contextlib.suppress(*_FAILS):
            self._read_freelist(header)

    # ── pages ────────────────────────────────────────────────────────────────────────────
    def page(self, number: int) -> bytes:
        """Page ``number`` (1-based) as the last commit left it; one cut short by the end of
        the file is as long as what is left of it."""
        if not 1 <= number <= self.pages:
            raise _Bad(f"page {number} does not exist")
        size = self.page_size
        frame = self.frames.get(number)
        if frame is not None and self.wal is not None:
            return bytes(self.wal[frame + 24 : frame + 24 + size])
        start = (number - 1) * size
        if start >= len(self.main):
            raise _Bad(f"page {number} is past the end of the file")
        return bytes(self.main[start : start + size])

    def _page_size(self, wal: mmap.mmap | None) -> int:
        for header, at in ((self.main, 16), (wal, 8)):
            if header is None or len(header) < at + 4:
                continue
            raw = int.from_bytes(header[at : at + (2 if at == 16 else 4)], "big")
            stated = 65536 if raw == 1 else raw
            if stated in _PAGE_SIZES:
                return stated
        return self._guess_page_size()

    def _guess_page_size(self) -> int:
        """The page size under which the first bytes of the file hold the most b-tree cells
        (for a file whose header is damaged): a page read at a size smaller than its own has
        cells past its end, and a size larger than the file's finds its pages only at
        multiples of itself, so fewer of them in the same bytes."""
        span = min(len(self.main), _GUESS_SPAN)
        best, best_cells = 4096, 0
        for size in _PAGE_SIZES:
            cells = sum(_cell_count(self.main, at, size) for at in range(size, span, size))
            if cells > best_cells:
                best, best_cells = size, cells
        return best

    def _read_wal(self, wal: mmap.mmap) -> int:
        """Index the frames of the log's committed transactions (those whose checksums hold,
        up to the last commit); returns the page count the last commit left. When the log is
        damaged (see ``wal_frames``), its other frames are kept as loose pages to scan."""
        frames = wal_frames(wal, self.page_size)
        self.frames = frames.committed
        self.loose_frames = frames.loose
        self.wal_damage = frames.damage
        return frames.pages

    # ── records ──────────────────────────────────────────────────────────────────────────
    def _cells(self, page: bytes, kind: int, header_at: int = 0) -> tuple[list[int], int]:
        """The cell offsets of a b-tree page of ``kind``, and the right-most child of an
        interior page."""
        if len(page) - header_at < 12 or page[header_at] != kind:
            raise _Bad("not a table page")
        count = int.from_bytes(page[header_at + 3 : header_at + 5], "big")
        size = 12 if kind == _TABLE_INTERIOR else 8
        right = int.from_bytes(page[header_at + 8 : header_at + 12], "big") if size == 12 else 0
        pointers = header_at + size
        if pointers + 2 * count > len(page):
            raise _Bad("a page claims more cells than it can hold")
        cells = struct.unpack(f">{count}H", page[pointers : pointers + 2 * count])
        return list(cells), right

    def _payload(self, page: bytes, cell: int) -> tuple[int, bytes, str | None]:
        """The rowid and payload of a table leaf cell (overflow pages followed), and what
        was missing from it (or None)."""
        end = len(page)
        size, at = _varint(page, cell, end)
        rowid, at = _varint(page, at, end)
        if rowid >= 1 << 63:
            rowid -= 1 << 64
        most = self.usable - 35
        if size <= most:
            if at + size > end:
                raise _Bad("a cell runs past its page")
            return rowid, page[at : at + size], None
        least = (self.usable - 12) * 32 // 255 - 23
        local = least + (size - least) % (self.usable - 4)
        if local > most:
            local = least
        if at + local + 4 > end:
            raise _Bad("a cell runs past its page")
        parts = [page[at : at + local]]
        have = local
        following = int.from_bytes(page[at + local : at + local + 4], "big")
        seen: set[int] = set()
        while have < size:
            if following in seen or len(seen) > _MAX_CHAIN:
                return rowid, b"".join(parts), "its overflow pages loop"
            seen.add(following)
            try:
                overflow = self.page(following)
            except _Bad:
                return rowid, b"".join(parts), "part of it was on a page that is lost"
            if len(overflow) < 4:
                return rowid, b"".join(parts), "part of it was on a page cut short"
            parts.append(overflow[4 : self.usable][: size - have])
            have += len(parts[-1])
            following = int.from_bytes(overflow[:4], "big")
        return rowid, b"".join(parts), None

    def _records(
        self, page: bytes, header_at: int = 0, *, each: bool = False
    ) -> list[tuple[int, list[Value]]]:
        """Every record of the table leaf page ``page``; _Bad if any cell fails, unless
        ``each``: then every cell that can be read (a page the tree no longer reaches may
        have damaged cells beside intact ones)."""
        cells, _ = self._cells(page, _TABLE_LEAF, header_at)
        records = []
        for cell in cells:
            try:
                rowid, payload, missing = self._payload(page, cell)
                values = _record(payload)
            except _FAILS:
                if each:
                    continue  # this cell is unreadable; the rows lost are counted by rowid
                raise
            if missing is not None:
                values.append(Value(_MISSING, missing))
            records.append((rowid, values))
        return records

    def _read_schema(self, page_one: bytes | None = None) -> None:
        """The table's root page and columns, and its highest rowid ever used, from the
        schema on page 1 (left at the defaults when page 1 is damaged)."""
        page = self.page(1) if page_one is None else page_one
        for _, values in self._records(page, header_at=100):
            if len(values) < 5 or values[0].value != "table":
                continue
            name, root, sql = values[1].value, values[3].value, values[4].value
            if name == self.table and isinstance(root, int) and isinstance(sql, str):
                self.root = root if 1 < root <= self.pages else None
                self.columns = _columns_of(sql, self.table) or self.columns
            elif name == "sqlite_sequence" and isinstance(root, int):
                self.sequence_root = root
                with contextlib.suppress(*_FAILS):
                    self._read_sequence(self.page(root))

    def _read_sequence(self, page: bytes) -> None:
        """The table's highest rowid ever used, from a page of ``sqlite_sequence``."""
        for _, row in self._records(page):
            if row and row[0].value == self.table and isinstance(row[-1].value, int):
                self.highest_rowid = max(self.highest_rowid, row[-1].value)

    def _read_freelist(self, header: bytes) -> None:
        """Pages the file had freed: what they hold was deleted on purpose."""
        trunk = int.from_bytes(header[32:36], "big")
        while trunk and trunk not in self.freelist and len(self.freelist) < self.pages:
            page = self.page(trunk)
            self.freelist.add(trunk)
            following, count = struct.unpack(">II", page[:8])
            count = min(count, (len(page) - 8) // 4)
            self.freelist.update(struct.unpack(f">{count}I", page[8 : 8 + 4 * count]))
            trunk = following

    # ── the table ────────────────────────────────────────────────────────────────────────
    def rows(self, counts: Counts, kept: _Kept) -> Iterator[LooseRow]:
        """Every readable row, in rowid order where the tree still gives it, then the rows
        of pages the tree no longer reaches, then the doubtful rows no sound one replaced."""
        seen = kept.rowids
        visited: set[int] = set()
        gaps: list[tuple[int, int | None]] = []  # rowid ranges under pages that were lost
        if self.root is not None:
            yield from self._walk(self.root, None, None, kept, visited, gaps, counts)
        else:
            gaps.append((0, None))
        for number in range(2, self.pages + 1):
            if number in visited or number in self.freelist:
                continue
            try:
                records = self._records(self.page(number), each=True)
            except _FAILS:
                continue  # not a table leaf, or one too damaged to read
            yield from self._unseen(records, kept)
        if self.wal_damage is not None:
            # Rows past those the file itself holds were in the log: any not read are lost.
            gaps.append((max(seen, default=0), None))
            yield from self._loose_frame_rows(kept)
        yield from kept.rest()
        highest = max(self.highest_rowid, max(seen, default=0))
        missing: set[int] = set()  # gaps can overlap: each rowid is counted once
        for low, high in gaps:
            top = highest if high is None else min(high, highest)
            missing.update(rowid for rowid in range(low + 1, top + 1) if rowid not in seen)
        counts.lost += len(missing)

    def _loose_frame_rows(self, kept: _Kept) -> Iterator[LooseRow]:
        """The rows of the frames of a damaged log that no commit could be trusted for, each
        to be checked on its own; the newest ``sqlite_sequence`` among them raises the
        highest rowid, so rows lost at the log's end are counted too."""
        wal = self.wal
        assert wal is not None
        size = self.page_size
        pages = [
            (int.from_bytes(wal[at : at + 4], "big"), wal[at + 24 : at + 24 + size])
            for at in self.loose_frames
        ]
        for number, page in pages:
            if number == 1 and self.sequence_root is None:
                with contextlib.suppress(*_FAILS):
                    self._read_schema(page)
        for number, page in pages:
            try:
                if number == self.sequence_root:
                    self._read_sequence(page)
                    continue
                records = self._records(page, each=True)
            except _FAILS:
                continue  # not a table leaf, or one too damaged to read
            yield from self._unseen(records, kept)

    def _unseen(self, records: list[tuple[int, list[Value]]], kept: _Kept) -> Iterator[LooseRow]:
        """The records of a loose page that are rows of the table not read before (a copy
        of a row read already, an older page's, is no row lost)."""
        for rowid, values in records:
            row = self._shaped(rowid, values)
            if row is not None and (given := kept.offer(row)) is not None:
                yield given

    def _walk(
        self,
        number: int,
        low: int | None,
        high: int | None,
        kept: _Kept,
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
            page = self.page(number)
            if page[0] == _TABLE_INTERIOR:
                cells, right = self._cells(page, _TABLE_INTERIOR)
                children: list[tuple[int, int | None]] = []
                for cell in cells:
                    child = int.from_bytes(page[cell : cell + 4], "big")
                    key, _ = _varint(page, cell + 4, len(page))
                    children.append((child, key))
                children.append((right, high))
            else:
                cells, _ = self._cells(page, _TABLE_LEAF)
                children = []
        except _FAILS:
            gaps.append((floor, high))
            return
        keys = [upper for _, upper in children]
        for (child, _), (below, upper) in zip(children, _bounds(keys, low, high), strict=True):
            yield from self._walk(child, below, upper, kept, visited, gaps, counts)
        for cell in cells if not children else ():
            try:
                rowid, payload, missing = self._payload(page, cell)
                values = _record(payload)
            except _FAILS:
                counts.lost += 1
                continue
            if missing is not None:
                values.append(Value(_MISSING, missing))
            row = self._shaped(rowid, values)
            if row is None or kept.known(row):
                counts.lost += 1  # a cell of this table that is not a row, or a row twice
            elif (given := kept.offer(row)) is not None:
                yield given

    def _shaped(self, rowid: int, values: list[Value]) -> LooseRow | None:
        """The record as a row of the table, or None for a record of another shape."""
        problems = [v.problem for v in values if v.value is _MISSING and v.problem]
        values = [v for v in values if v.value is not _MISSING]
        if not MIN_COLUMNS <= len(values) <= len(self.columns) or values[0].value is not None:
            return None
        if not isinstance(values[1].value, str):
            return None
        named = zip(self.columns, values, strict=False)
        problems += [f"{name}: {value.problem}" for name, value in named if value.problem]
        row = {
            name: values[i].value if i < len(values) else None
            for i, name in enumerate(self.columns)
        }
        return LooseRow(rowid, row, problems)


@dataclasses.dataclass
class WalFrames:
    """What a write-ahead log holds: ``committed`` frames by page (their offsets), the page
    count the last commit left, the ``loose`` frames a damaged log still has past the damage
    (or all of them, when its header is damaged), and what the damage was (None if none)."""

    committed: dict[int, int] = dataclasses.field(default_factory=dict)
    pages: int = 0
    loose: list[int] = dataclasses.field(default_factory=list)
    damage: str | None = None


def wal_frames(wal: mmap.mmap | bytes, page_size: int | None = None) -> WalFrames:
    """Read a write-ahead log as SQLite does (its committed transactions, checksums held),
    and tell what SQLite would drop without a word: a damaged header, or a frame that fails
    with frames of the same log after it. A torn end (frames never committed) is no damage.
    ``page_size`` is the database's, used when the log's own header cannot be trusted."""
    found = WalFrames()
    if len(wal) < 32:
        return found
    magic, _, size, _, salt1, salt2 = struct.unpack(">6I", wal[:24])
    order = _WAL_MAGIC.get(magic)
    sound = (
        order is not None
        and size in _PAGE_SIZES
        and (page_size is None or size == page_size)
        and _wal_checksum(order, wal[:24], (0, 0)) == struct.unpack(">2I", wal[24:32])
    )
    frame_size = size if sound else page_size
    if frame_size is None or len(wal) < 32 + 24 + frame_size:
        return found
    offsets = range(32, len(wal) - 24 - frame_size + 1, 24 + frame_size)
    if not sound or order is None:
        found.damage = "its header is damaged, so SQLite would read none of its frames"
        found.loose = list(offsets)
        return found
    sums = _wal_checksum(order, wal[:24], (0, 0))
    pending: dict[int, int] = {}
    for index, at in enumerate(offsets):
        number, committed, frame_salt1, frame_salt2 = struct.unpack(">4I", wal[at : at + 16])
        if (frame_salt1, frame_salt2) == (salt1, salt2):
            sums = _wal_checksum(order, wal[at : at + 8], sums)
            sums = _wal_checksum(order, wal[at + 24 : at + 24 + frame_size], sums)
            if sums == struct.unpack(">2I", wal[at + 16 : at + 24]):
                pending[number] = at
                if committed:
                    found.committed.update(pending)
                    pending.clear()
                    found.pages = committed
                continue
        later = [o for o in offsets[index + 1 :] if wal[o + 8 : o + 16] == wal[16:24]]
        if later:
            found.damage = (
                f"frame {index + 1} fails its checksum and {len(later)} frame(s) of the same "
                "log follow it, which SQLite would drop"
            )
            found.loose = [*pending.values(), at, *later]
        break
    return found


def wal_damage(path: Path) -> str | None:
    """Why the write-ahead log beside the SQLite file ``path`` holds frames SQLite would drop
    without a word (see ``wal_frames``), or None when it holds none or is sound."""
    wal_path = path.with_name(path.name + "-wal")
    try:
        if wal_path.stat().st_size <= 32:
            return None
        with _mapped(path) as main:
            stated = int.from_bytes(main[16:18], "big") if len(main) >= 18 else 0
        with _mapped(wal_path) as wal:
            page_size = 65536 if stated == 1 else stated if stated in _PAGE_SIZES else None
            return wal_frames(wal, page_size).damage
    except (OSError, ValueError):
        return None  # no log, or one that cannot be mapped: SQLite reports on it itself


def _bounds(
    keys: list[int | None], low: int | None, high: int | None
) -> list[tuple[int | None, int | None]]:
    """The rowid range under each child of an interior page whose children's keys are ``keys``
    (the last is the page's own ``high``), within (``low``, ``high``]. A damaged key breaks
    the order: the keys trusted are the longest run that rises within the range, and a child
    whose key is not trusted is given the range from the trusted key before it to the one
    after, so the rows under a lost child are still counted however its key was damaged."""
    floor = 0 if low is None else low
    inner = keys[:-1]
    fits = {
        i: key
        for i, key in enumerate(inner)
        if key is not None and key > floor and (high is None or key <= high)
    }
    # The longest strictly rising run of the keys that fit (patience sorting).
    tails: list[int] = []  # tails[n]: the index ending the best rising run of length n + 1
    tail_keys: list[int] = []  # and its key
    before: dict[int, int | None] = {}
    for i, key in fits.items():
        place = bisect.bisect_left(tail_keys, key)
        before[i] = tails[place - 1] if place else None
        if place == len(tails):
            tails.append(i)
            tail_keys.append(key)
        else:
            tails[place], tail_keys[place] = i, key
    trusted: set[int] = set()
    at = tails[-1] if tails else None
    while at is not None:
        trusted.add(at)
        at = before[at]
    uppers: list[int | None] = [high] * len(keys)
    following = high
    for i in range(len(inner) - 1, -1, -1):
        if i in trusted:
            following = inner[i]
        uppers[i] = following
    bounds = []
    previous = low
    for i, upper in enumerate(uppers):
        bounds.append((previous, upper))
        if i in trusted:
            previous = inner[i]
    return bounds


def _cell_count(data: mmap.mmap, at: int, size: int) -> int:
    """The cells of the b-tree page at ``at`` if it holds together as a page of ``size``
    bytes (every cell pointer inside it, after the pointers and the content area's start),
    else 0."""
    kind = data[at]
    if kind not in _BTREE_KINDS:
        return 0
    header = 12 if kind in (_TABLE_INTERIOR, _INDEX_INTERIOR) else 8
    count = int.from_bytes(data[at + 3 : at + 5], "big")
    content = int.from_bytes(data[at + 5 : at + 7], "big") or 65536
    pointers_end = header + 2 * count
    if not count or pointers_end > content or content > size or at + pointers_end > len(data):
        return 0
    cells = struct.unpack(f">{count}H", data[at + header : at + pointers_end])
    if min(cells) < content or max(cells) >= size:
        return 0
    return count


def _wal_checksum(order: str, data: bytes, sums: tuple[int, int]) -> tuple[int, int]:
    """SQLite's running checksum of the write-ahead log over ``data`` (a multiple of 8)."""
    first, second = sums
    words = struct.unpack(f"{order}{len(data) // 4}I", data)
    for i in range(0, len(words), 2):
        first = (first + words[i] + second) & 0xFFFFFFFF
        second = (second + words[i + 1] + first) & 0xFFFFFFFF
    return first, second


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
        elif serial <= 7:
            if short:
                values.append(Value(None, "cut short"))
            elif serial == 7:
                values.append(Value(struct.unpack(">d", raw)[0]))
            else:
                values.append(Value(int.from_bytes(raw, "big", signed=True)))
        elif serial % 2:
            try:
                text, problem = raw.decode("utf-8"), None
            except UnicodeDecodeError:
                text = raw.decode("utf-8", "replace")
                problem = "not valid UTF-8, read with replacement characters"
            if short:
                problem = "cut short" + (f", and {problem}" if problem else "")
            values.append(Value(text, problem))
        else:
            values.append(Value(raw, "cut short" if short else None))
    return values


def _columns_of(sql: str, table: str) -> list[str]:
    """The column names a ``CREATE TABLE`` statement declares, as SQLite itself reads it."""
    with contextlib.closing(sqlite3.connect(":memory:")) as conn:
        try:
            conn.execute(sql)
            return [row[1] for row in conn.execute(f"PRAGMA table_info({table})")]
        except sqlite3.Error:
            return []
