"""A damaged history gives back every row it still holds: a real 2,000-call history file, its
bytes damaged on disk the ways real files are damaged, then opened again. For each damage the
test counts rows against an account of the file kept independently of the salvage: which pages
each row lives on, read from the undamaged file with SQLite's own ``dbstat`` table.
"""

from __future__ import annotations

import contextlib
import lzma
import os
import random
import re
import shutil
import sqlite3
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

import workbench as wb
from workbench.history import HistoryWarning

CALLS = 2_000
SALVAGED = "salvaged from the damaged history"
UNVERIFIED = "written without a check"


@dataclass(frozen=True)
class Pristine:
    """The undamaged history: its bytes, its rows as read back, and where each row lives."""

    data: bytes
    page_size: int
    rows: dict[str, dict[str, Any]]  # by call_id, as History.rows() gives them
    pages_of: dict[str, set[int]]  # call_id -> the pages holding its cell and overflow
    leaves: set[int]  # the pages holding the rows' cells (not their overflow)
    interior: list[int]  # interior pages of the calls table other than its root
    root: int


def build_history(directory: Path) -> Path:
    path = directory / "history.sqlite"
    tools = wb.Registry(history=path, artifacts=directory / "artifacts")

    @tools.tool
    def add(a: int, b: int = 0) -> int:
        """Add two numbers."""
        return a + b

    @tools.tool
    def echo(text: str) -> str:
        """Return the text."""
        return text

    # One call in fifty has a receipt longer than a page, so rows span overflow pages too.
    calls = [
        tools.invoke("echo", {"text": f"{i}:" + "z" * 6000})
        if i % 50 == 7
        else tools.invoke("add", {"a": i, "b": "1"})
        for i in range(CALLS)
    ]
    for call in calls:
        call.wait(60)
    tools.history.close()
    assert not path.with_name(path.name + "-wal").exists()
    return path


def where_rows_live(path: Path) -> tuple[dict[str, set[int]], set[int], list[int], int]:
    """Each row's pages, from SQLite's ``dbstat``: the table's leaves in tree order hold the
    rows in rowid order, ``ncell`` each; an overflow page's path names its leaf and cell.
    Also the leaves, the interior pages and the root."""
    with contextlib.closing(sqlite3.connect(path)) as conn:
        ids = [row[0] for row in conn.execute("SELECT call_id FROM calls ORDER BY seq")]
        pages = conn.execute(
            "SELECT path, pageno, pagetype, ncell FROM dbstat WHERE name = 'calls' ORDER BY path"
        ).fetchall()
    pages_of: dict[str, set[int]] = {}
    cells: dict[str, list[str]] = {}
    interior, root = [], 0
    following = iter(ids)
    for where, number, kind, count in pages:
        if kind == "leaf":
            cells[where] = [next(following) for _ in range(count)]
            for call_id in cells[where]:
                pages_of[call_id] = {number}
        elif kind == "internal":
            if where == "/":
                root = number
            else:
                interior.append(number)
    for where, number, kind, _ in pages:
        if kind == "overflow":
            found = re.fullmatch(r"(.*/)([0-9a-f]+)\+[0-9a-f]+", where)
            assert found is not None, where
            # The overflow page of cell N of the leaf at ``leaf`` (whose path ends in its index).
            parent, cell = found.group(1), int(found.group(2), 16)
            pages_of[cells[parent][cell]].add(number)
    assert next(following, None) is None and len(pages_of) == CALLS
    leaves = {number for _, number, kind, _ in pages if kind == "leaf"}
    return pages_of, leaves, interior, root


LAYOUTS = Path(__file__).resolve().parents[1] / "data" / "history"


def account_of(path: Path) -> Pristine:
    """The undamaged history at ``path``: its bytes, its rows, and where each row lives."""
    pages_of, leaves, interior, root = where_rows_live(path)
    data = path.read_bytes()
    reader = path.parent / "copy" / "history.sqlite"
    reader.parent.mkdir()
    reader.write_bytes(data)
    history = wb.History(reader)
    rows = {row["call_id"]: row for row in history.rows()}
    history.close()
    assert len(rows) == CALLS and history.problems == []
    page_size = int.from_bytes(data[16:18], "big")
    return Pristine(data, page_size, rows, pages_of, leaves, interior, root)


@pytest.fixture(scope="module")
def pristine(tmp_path_factory: pytest.TempPathFactory) -> Pristine:
    """A history built afresh: new call ids, so a layout of its own each run."""
    return account_of(build_history(tmp_path_factory.mktemp("pristine")))


@pytest.fixture(scope="module")
def layout_52(tmp_path_factory: pytest.TempPathFactory) -> Pristine:
    """A layout kept byte for byte: the flipped bytes turned one cell's rowid into the rowid of
    a row on an intact page later in the tree, and salvage, keeping the first row it met under
    each rowid, dropped the intact row as a duplicate (issue 52)."""
    path = tmp_path_factory.mktemp("layout-52") / "history.sqlite"
    path.write_bytes(lzma.decompress((LAYOUTS / "salvage-layout-52.sqlite.xz").read_bytes()))
    return account_of(path)


@pytest.fixture(scope="module")
def layout_with_a_damaged_key(tmp_path_factory: pytest.TempPathFactory) -> Pristine:
    """A layout kept byte for byte: a flipped byte in the root's cell pointers made one child
    read as page 294,276,864 under the key 0, below the key before it, so the rows under the
    lost child fell in no range and five rows were neither kept nor counted lost."""
    path = tmp_path_factory.mktemp("layout-key") / "history.sqlite"
    path.write_bytes(
        lzma.decompress((LAYOUTS / "salvage-layout-key-zeroed.sqlite.xz").read_bytes())
    )
    return account_of(path)


# ── the damage, done to the bytes on disk ───────────────────────────────────────────────


def flip_random_bytes(data: bytearray, pristine: Pristine) -> set[int]:
    chance = random.Random(26)
    spots = chance.sample(range(100, len(data)), 1_000)
    for spot in spots:
        data[spot] ^= chance.randrange(1, 256)
    return {spot // pristine.page_size + 1 for spot in spots}


def overwrite_magic(data: bytearray, pristine: Pristine) -> set[int]:
    data[0:16] = b"not a database!\0"
    return {1}


def zero_header(data: bytearray, pristine: Pristine) -> set[int]:
    data[0:100] = bytes(100)  # the page size with it: salvage must find it from the pages
    return {1}


def overwrite_page_count(data: bytearray, pristine: Pristine) -> set[int]:
    data[28:32] = (0x7FFF_FFF0).to_bytes(4, "big")
    return {1}


def zero_page(data: bytearray, pristine: Pristine, number: int) -> set[int]:
    start = (number - 1) * pristine.page_size
    data[start : start + pristine.page_size] = bytes(pristine.page_size)
    return {number}


def zero_middle_page(data: bytearray, pristine: Pristine) -> set[int]:
    # The leaf nearest the middle of the file: the page there may be one of an index's (about
    # 4 % of the file), which reading the rows never touches, or the overflow page of one long
    # row (where the calls' batches fall in the file moves from run to run), whose loss only
    # shortens that row: the rows on a leaf are lost whole, so the tests count them exactly.
    middle = len(data) // pristine.page_size // 2
    number = min(pristine.leaves, key=lambda page: (abs(page - middle), page))
    return zero_page(data, pristine, number)


def zero_table_root(data: bytearray, pristine: Pristine) -> set[int]:
    return zero_page(data, pristine, pristine.root)


def truncate_mid_page(data: bytearray, pristine: Pristine) -> set[int]:
    pages = len(data) // pristine.page_size
    cut = (pages * 2 // 3) * pristine.page_size + pristine.page_size // 2
    del data[cut:]
    return set(range(cut // pristine.page_size + 1, pages + 1))


DAMAGE: dict[str, Callable[[bytearray, Pristine], set[int]]] = {
    "1000 random bytes flipped": flip_random_bytes,
    "header magic overwritten": overwrite_magic,
    "the whole header zeroed": zero_header,
    "page count overwritten": overwrite_page_count,
    "a middle page zeroed": zero_middle_page,
    "the table's root page zeroed": zero_table_root,
    "truncated mid-page": truncate_mid_page,
}


def damaged_copy(pristine: Pristine, directory: Path, damage: str) -> tuple[Path, bytes, set[int]]:
    data = bytearray(pristine.data)
    pages = DAMAGE[damage](data, pristine)
    path = directory / "history.sqlite"
    path.write_bytes(data)
    return path, bytes(data), pages


def damage_warnings(row: dict[str, Any], original: dict[str, Any]) -> list[str]:
    """The warnings a row carries beyond its own and the mark of a salvaged row."""
    added = row["warnings"][len(original["warnings"]) :]
    return [w for w in added if SALVAGED not in w and UNVERIFIED not in w]


def unchanged(row: dict[str, Any], original: dict[str, Any]) -> bool:
    """Every field equal to the original's, the warnings apart from the salvage mark."""
    same = all(row[name] == original[name] for name in row if name != "warnings")
    return same and row["warnings"][: len(original["warnings"])] == original["warnings"]


def kept_aside(directory: Path) -> list[Path]:
    return sorted(p for p in directory.iterdir() if re.search(r"\.unreadable-[\d-]+$", p.name))


# ── the matrix ──────────────────────────────────────────────────────────────────────────


@pytest.mark.parametrize("damage", list(DAMAGE))
def test_a_damaged_history_gives_back_every_row_on_an_intact_page(pristine, tmp_path, damage):
    salvaged_as_promised(pristine, tmp_path, damage)


def test_a_damaged_rowid_never_hides_the_row_on_an_intact_page_that_owns_it(layout_52, tmp_path):
    salvaged_as_promised(layout_52, tmp_path, "1000 random bytes flipped")


def test_a_damaged_key_in_the_tree_never_hides_the_rows_under_it_from_the_count(
    layout_with_a_damaged_key, tmp_path
):
    salvaged_as_promised(layout_with_a_damaged_key, tmp_path, "1000 random bytes flipped")


def salvaged_as_promised(pristine: Pristine, tmp_path: Path, damage: str) -> None:
    """Damage a copy of ``pristine``, open it, and hold every promise of salvage."""
    path, damaged_bytes, damaged_pages = damaged_copy(pristine, tmp_path, damage)
    intact = {call_id for call_id, pages in pristine.pages_of.items() if not pages & damaged_pages}

    history = wb.History(path)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        rows = history.rows()
    by_id = {row["call_id"]: row for row in rows}

    # Rows that came back as they were written carry no warning of damage; every row that
    # differs from the original in any way says so. None is altered silently.
    clean = {
        call_id
        for call_id, row in by_id.items()
        if call_id in pristine.rows and not damage_warnings(row, pristine.rows[call_id])
    }
    altered_silently = [c for c in clean if not unchanged(by_id[c], pristine.rows[c])]
    assert altered_silently == []
    # Every row whose pages are intact is back, unflagged; beyond them only rows found whole
    # on a damaged page (their bytes untouched, which their check and the comparison confirm).
    assert intact <= clean, f"{len(intact - clean)} intact rows missing"
    whole_pages = damage not in ("1000 random bytes flipped", "truncated mid-page")
    if whole_pages:  # the damage is whole pages: exactly the rows on the others come back
        assert clean == intact
    if damage in ("a middle page zeroed", "the table's root page zeroed"):
        assert len(clean) >= 0.9 * CALLS

    # The damaged file is kept byte for byte, moved aside, and the problem says what happened.
    aside = kept_aside(tmp_path)
    assert [p.read_bytes() for p in aside] == [damaged_bytes]
    problems = [p for p in history.problems if p.kind == "corrupt"]
    assert len(problems) == 1 and problems[0].salvage is not None
    report = problems[0].salvage
    assert report.original == aside[0] and report.path == path
    assert report.kept == len(rows)
    # Rows lost are counted exactly: every row written is either kept or counted lost.
    assert report.kept + report.lost == CALLS
    assert report.damaged == len(rows) - len(clean)
    assert f"kept as {aside[0].name}" in problems[0].message
    assert f"{report.lost} row(s) could not be read" in problems[0].message
    assert any(issubclass(w.category, HistoryWarning) for w in caught)
    for row in rows:
        assert any(SALVAGED in w for w in row["warnings"])

    # The new file is a plain, healthy history that takes new calls.
    history.close()
    with contextlib.closing(sqlite3.connect(path)) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        assert conn.execute("SELECT COUNT(*) FROM calls").fetchone() == (len(rows),)


def row_document(pristine_path: Path, call_id: str) -> bytes:
    with contextlib.closing(sqlite3.connect(pristine_path)) as conn:
        found = conn.execute("SELECT record FROM calls WHERE call_id = ?", (call_id,)).fetchone()
    return str(found[0]).encode()


def change_receipt_byte(pristine: Pristine, directory: Path, new: int) -> tuple[Path, str]:
    """A copy of the history with one byte of one row's receipt replaced: the file stays a
    sound SQLite file, only that value changed."""
    source = directory / "source.sqlite"
    source.write_bytes(pristine.data)
    call_id = sorted(c for c, row in pristine.rows.items() if row["tool"] == "add")[CALLS // 3]
    document = row_document(source, call_id)
    data = bytearray(pristine.data)
    start = data.find(document)
    assert start > 0 and data.find(document, start + 1) == -1
    key = re.search(rb'"receipt": ?"', document)  # compact or spaced, as it was written
    assert key is not None
    spot = start + key.end()
    data[spot] = new
    path = directory / "history.sqlite"
    path.write_bytes(data)
    return path, call_id


def test_a_value_that_is_not_utf8_is_read_with_replacement_and_a_warning(pristine, tmp_path):
    path, call_id = change_receipt_byte(pristine, tmp_path, 0xFF)
    before = path.read_bytes()
    history = wb.History(path)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        rows = history.rows()
        frame = history.to_dataframe()
        one = history.get(call_id)
    assert len(rows) == CALLS and len(frame) == CALLS
    by_id = {row["call_id"]: row for row in rows}
    # Every other row is read exactly as written.
    assert [c for c in pristine.rows if c != call_id and by_id[c] != pristine.rows[c]] == []
    bad = by_id[call_id]
    original = pristine.rows[call_id]["receipt"]
    assert bad["receipt"] == "\ufffd" + original[1:]
    assert any("not valid UTF-8" in w and "replacement" in w for w in bad["warnings"])
    assert any("changed on disk" in w for w in bad["warnings"])
    assert one is not None and one["receipt"] == bad["receipt"]
    assert any(call_id in str(w.message) for w in caught)
    history.close()
    assert kept_aside(tmp_path) == [] and path.read_bytes() == before


def test_a_value_changed_on_disk_in_a_sound_file_is_named_when_read(pristine, tmp_path):
    path, call_id = change_receipt_byte(pristine, tmp_path, ord("#"))
    history = wb.History(path)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", HistoryWarning)
        rows = {row["call_id"]: row for row in history.rows()}
    assert rows[call_id]["receipt"].startswith("#")
    assert any("changed on disk" in w for w in rows[call_id]["warnings"])
    assert [c for c in pristine.rows if c != call_id and rows[c] != pristine.rows[c]] == []
    assert [p.call_ids for p in history.problems] == [(call_id,)]
    history.close()


def test_salvage_on_demand_rebuilds_any_file_and_says_what_it_kept(pristine, tmp_path):
    path, damaged_bytes, damaged_pages = damaged_copy(pristine, tmp_path, "a middle page zeroed")
    intact = {c for c, pages in pristine.pages_of.items() if not pages & damaged_pages}

    report = wb.History.salvage(path)

    assert (report.kept, report.lost, report.damaged) == (len(intact), CALLS - len(intact), 0)
    assert report.path == path and report.original.read_bytes() == damaged_bytes
    assert kept_aside(tmp_path) == [report.original]
    assert f"{report.kept} row(s) were copied" in str(report)
    assert f"kept as {report.original.name}" in str(report)
    reopened = wb.History(path)
    rows = reopened.rows()
    assert {row["call_id"] for row in rows} == intact and reopened.problems == []
    for row in rows:
        original = pristine.rows[row["call_id"]]
        assert unchanged(row, original)
        assert row["warnings"][len(original["warnings"]) :] == [
            f"salvaged from the damaged history {report.original.name}"
        ]
    reopened.close()

    # A sound file gives back every row; a missing one is a clear error.
    sound = tmp_path / "sound" / "history.sqlite"
    sound.parent.mkdir()
    sound.write_bytes(pristine.data)
    again = wb.History.salvage(sound)
    assert (again.kept, again.lost, again.damaged, again.unchecked) == (CALLS, 0, 0, 0)
    with pytest.raises(FileNotFoundError, match="no history file"):
        wb.History.salvage(tmp_path / "nowhere.sqlite")


def test_rows_written_before_rows_had_a_check_are_salvaged_and_say_so(tmp_path):
    path = tmp_path / "history.sqlite"
    history = wb.History(path)
    for index in range(30):
        history.record({"call_id": f"old{index}", "tool": "add", "receipt": str(index)})
    history.close()
    with contextlib.closing(sqlite3.connect(path)) as conn, conn:
        # The documents as an older workbench wrote them: no check at their end.
        conn.execute(
            "UPDATE calls SET record = substr(record, 1, instr(record, ', \"check\": ') - 1) || '}'"
        )
    report = wb.History.salvage(path)
    assert (report.kept, report.damaged, report.unchecked, report.lost) == (30, 0, 30, 0)
    rows = wb.History(path).rows()
    assert [row["receipt"] for row in rows] == [str(index) for index in range(30)]
    assert all(any(UNVERIFIED in w for w in row["warnings"]) for row in rows)


def test_rows_only_in_the_write_ahead_log_are_salvaged_too(tmp_path):
    # A copy taken while the history is open: its newest rows are only in the -wal file.
    copy, ids = live_copy_with_log(tmp_path, 300)
    assert copy.with_name(copy.name + "-wal").stat().st_size > 100 * 4096
    data = bytearray(copy.read_bytes())
    data[0:16] = b"not a database!\0"
    copy.write_bytes(data)

    report = wb.History.salvage(copy)

    assert (report.kept, report.lost, report.damaged) == (300, 0, 0)
    assert report.original.read_bytes() == data
    rows = wb.History(copy).rows()
    assert [row["call_id"] for row in rows] == ids
    assert [row["receipt"] for row in rows] == [str(i) for i in range(300)]


ODD_SCALARS = [
    {"call_id": "a", "retryable": "1", "elapsed_ms": "2.5", "receipt_chars": "3.0", "tool": 5},
    {"call_id": "b", "retryable": " 7 ", "receipt_chars": 2.0**70, "kind": 1e20, "status": 0.1},
    {"call_id": "c", "receipt_chars": " 1e3", "kind": 1e-7, "summary_text": -0.0, "tool": True},
    {"call_id": "d", "queued_at": 7, "started_at": 1e20, "state": float(2**60), "family": 2.5},
]


@pytest.mark.parametrize("typed", [False, True], ids=["current columns", "migrated columns"])
def test_odd_values_pass_their_own_check_whatever_the_columns_types(tmp_path, typed):
    """A row is never called changed on disk because SQLite converted a value on the way in
    (older files have typed columns, added by migration, which convert values)."""
    path = tmp_path / "history.sqlite"
    if typed:
        with contextlib.closing(sqlite3.connect(path)) as conn:
            conn.execute("CREATE TABLE calls (seq INTEGER PRIMARY KEY AUTOINCREMENT, call_id TEXT)")
    history = wb.History(path)
    for scalars in ODD_SCALARS:
        history.record(scalars)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", HistoryWarning)
        rows = history.rows()
    assert len(rows) == len(ODD_SCALARS)
    assert [w for row in rows for w in row["warnings"] if "check" in w] == []
    history.close()
    report = wb.History.salvage(path)
    assert (report.kept, report.damaged) == (len(ODD_SCALARS), 0)


def live_copy_with_log(directory: Path, calls: int) -> tuple[Path, list[str]]:
    """A copy of a history taken while it is open: every row is in its -wal file only."""
    live = directory / "live" / "history.sqlite"
    tools = wb.Registry(history=live, artifacts=directory / "artifacts")

    @tools.tool
    def add(a: int, b: int = 0) -> int:
        """Add two numbers."""
        return a + b

    ids = []
    for i in range(calls):
        ids.append(tools.invoke("add", {"a": i}).wait(30).call_id)
        # One transaction per row, as SQLite is filled when calls end one at a time: every
        # frame of the table's leaf holds the rows before it again.
        tools.history.flush()
    copy = directory / "copy" / "history.sqlite"
    copy.parent.mkdir()
    copy.with_name(copy.name + "-wal").write_bytes(live.with_name(live.name + "-wal").read_bytes())
    copy.write_bytes(live.read_bytes())
    tools.history.close()
    return copy, ids


def overwrite_log_header(wal: bytearray, page_size: int) -> None:
    wal[0:32] = b"not a write-ahead log header!!!\0"


def overwrite_a_middle_frame(wal: bytearray, page_size: int) -> None:
    frames = (len(wal) - 32) // (24 + page_size)
    at = 32 + frames // 2 * (24 + page_size)
    wal[at : at + 24 + page_size] = bytes(24 + page_size)


def damaged_log_copy(
    directory: Path, calls: int, damage: Callable[[bytearray, int], None]
) -> tuple[Path, list[str], bytearray]:
    """A live copy whose log is then damaged by ``damage``; its ids and the damaged log."""
    copy, ids = live_copy_with_log(directory, calls)
    wal_path = copy.with_name(copy.name + "-wal")
    wal = bytearray(wal_path.read_bytes())
    damage(wal, int.from_bytes(copy.read_bytes()[16:18], "big"))
    wal_path.write_bytes(wal)
    return copy, ids, wal


def rows_reading_a_damaged_log(path: Path) -> tuple[list[dict[str, Any]], wb.History]:
    history = wb.History(path)
    with pytest.warns(HistoryWarning, match="write-ahead log"):
        rows = history.rows()
    history.close()
    return rows, history


@pytest.mark.parametrize("damage", [overwrite_log_header, overwrite_a_middle_frame])
def test_rows_in_a_damaged_write_ahead_log_are_read_counted_and_the_log_kept(tmp_path, damage):
    calls = 150
    copy, ids, wal = damaged_log_copy(tmp_path, calls, damage)
    original = copy.read_bytes()

    rows, history = rows_reading_a_damaged_log(copy)

    # Every row is back, as written (each passes its own check), and the count is exact.
    assert [row["call_id"] for row in rows] == ids
    assert [row["receipt"] for row in rows] == [str(i) for i in range(calls)]
    assert all(damage_warnings(row, {"warnings": []}) == [] for row in rows)
    (problem,) = [p for p in history.problems if p.kind == "corrupt"]
    report = problem.salvage
    assert report is not None
    assert (report.kept, report.lost, report.damaged) == (calls, 0, 0)
    # The file and its damaged log are kept beside the new history, byte for byte.
    assert report.original.read_bytes() == original
    assert report.original.with_name(report.original.name + "-wal").read_bytes() == wal
    assert f"{report.original.name}-wal" in problem.message


def overwrite_header_and_the_newest_leaf(wal: bytearray, page_size: int) -> None:
    """The log's header, and the newest frame of the table's leaf: rows written after the
    frame before it were on that frame alone, and are lost."""
    overwrite_log_header(wal, page_size)
    step = 24 + page_size
    frames = range(32, len(wal) - step + 1, step)
    last = [at for at in frames if wal[at + 24] == 13 and b"call_" in wal[at : at + step]][-1]
    wal[last : last + step] = bytes(step)


def test_rows_lost_with_a_damaged_log_are_counted(tmp_path):
    calls = 150
    copy, ids, _ = damaged_log_copy(tmp_path, calls, overwrite_header_and_the_newest_leaf)

    rows, history = rows_reading_a_damaged_log(copy)

    report = next(p.salvage for p in history.problems if p.salvage is not None)
    assert report.kept == len(rows) and report.kept + report.lost == calls
    assert report.lost > 0
    assert [row["call_id"] for row in rows] == ids[: len(rows)]  # the oldest, in order


@pytest.mark.slow
def test_the_matrix_holds_on_fresh_layouts(tmp_path):
    """The whole matrix on ``WORKBENCH_SALVAGE_LAYOUTS`` more histories built afresh (2 here,
    200 under ``make soak``): each has new call ids, so its batches fall in the file
    differently. A layout that breaks a promise is kept in ``test-output/`` to be made a fixed
    case, as ``layout_52`` was."""
    layouts = int(os.environ.get("WORKBENCH_SALVAGE_LAYOUTS") or 2)
    kept = Path(__file__).resolve().parents[2] / "test-output" / "salvage-layouts"
    failures = []
    for layout in range(layouts):
        directory = tmp_path / f"layout-{layout}"
        directory.mkdir()
        pristine = account_of(build_history(directory))
        for number, damage in enumerate(DAMAGE):
            where = directory / f"damage-{number}"
            where.mkdir()
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", HistoryWarning)
                    salvaged_as_promised(pristine, where, damage)
            except AssertionError as exc:
                kept.mkdir(parents=True, exist_ok=True)
                (kept / f"layout-{os.getpid()}-{layout}.sqlite").write_bytes(pristine.data)
                failures.append(f"layout {layout}, {damage}: {str(exc).splitlines()[0]}")
        shutil.rmtree(directory)
    assert failures == [], "\n".join(failures)
