"""The history view reads only the rows it draws: its SQLite work is the same for a history of
2,000 rows and of 40,000 (counted in SQLite virtual-machine steps, not in seconds)."""

from __future__ import annotations

import sqlite3

import pytest

import workbench as wb
from workbench.history import NULL, CallRecord, FramePages, HistoryPages
from workbench.widgets.history import NO_KIND, HistoryView

STEP = 100  # SQLite calls the progress handler every STEP virtual-machine instructions


def filled(path, rows: int, **options: float) -> wb.History:
    history = wb.History(path, **options)  # type: ignore[arg-type]
    for index in range(rows):
        error = index % 7 == 0
        history.append(
            CallRecord(
                call_id=f"c{index}",
                tool=("read", "write", "search")[index % 3],
                status="error" if error else "success",
                kind="not_found" if error else None,
                summary_text=f"call {index}",
                receipt=f"receipt {index}",
                receipt_chars=10,
            )
        )
    history.flush()
    return history


class Work:
    """SQLite work on the history's own connection while the block runs."""

    def __init__(self, history: wb.History) -> None:
        self.conn = history._database.connection()  # the history's own, as its pages use
        self.steps = 0

    def _tick(self) -> int:
        self.steps += 1
        return 0

    def __enter__(self) -> Work:
        self.conn.set_progress_handler(self._tick, STEP)
        return self

    def __exit__(self, *exc: object) -> None:
        self.conn.set_progress_handler(None, STEP)


def paint_and_page(history: wb.History) -> tuple[Work, HistoryView]:
    with Work(history) as work:
        view = HistoryView(history, max_rows=50)
        view.older()
        view.kind_filter.value = "not_found"
        view.older()
        view.kind_filter.value = NO_KIND
        view.tool_filter.value = "search"
    return work, view


@pytest.fixture(scope="module")
def histories(tmp_path_factory):
    directory = tmp_path_factory.mktemp("pages")
    small = filled(directory / "small.sqlite", 2_000)
    large = filled(directory / "large.sqlite", 40_000)
    yield small, large
    small.close()
    large.close()


def test_painting_and_paging_do_the_same_work_for_twenty_times_the_rows(histories):
    small, large = histories
    small_work, _ = paint_and_page(small)
    large_work, large_view = paint_and_page(large)
    # The whole history read once would be thousands of steps per thousand rows.
    assert large_work.steps <= small_work.steps * 1.5 + 20, (small_work.steps, large_work.steps)
    assert len(large_view.table.rows) == 50
    assert isinstance(large_view.source, HistoryPages)
    # rows read: a page (plus the one that says older rows remain) per draw, one per filter value
    assert large_view.source.rows_read <= 6 * 51 + 20


def test_keyset_pages_hold_the_right_rows(histories):
    _, large = histories
    pages = HistoryPages(large)
    newest = pages.page(10)
    assert [row["call_id"] for row in newest.rows] == [f"c{n}" for n in range(39_990, 40_000)]
    older = pages.page(10, before=newest.oldest_key)
    assert [row["call_id"] for row in older.rows] == [f"c{n}" for n in range(39_980, 39_990)]
    failing = pages.page(3, filters={"kind": "not_found"})
    assert [row["call_id"] for row in failing.rows] == ["c39984", "c39991", "c39998"]
    assert all(row["kind"] is None for row in pages.page(5, filters={"kind": NULL}).rows)
    assert pages.values("tool") == (["read", "search", "write"], False)
    assert pages.values("kind") == (["not_found"], True)
    first = pages.page(10, before=11)
    assert [row["call_id"] for row in first.rows] == [f"c{n}" for n in range(10)]
    assert not first.has_older


def test_the_view_pages_back_to_the_oldest_row_and_forward_again(histories):
    small, _ = histories
    view = HistoryView(small, max_rows=700)
    seen = [row["call_id"] for row in view.table.rows]
    while not view.older_button.disabled:
        view.older()
        seen = [row["call_id"] for row in view.table.rows] + seen
    assert seen == [f"c{n}" for n in range(2_000)]
    assert view.table.note == "page 3: 600 calls drawn"
    view.newer()
    view.newer()
    assert view.table.rows[-1]["call_id"] == "c1999" and view.newer_button.disabled


def test_rows_held_outside_sqlite_are_paged_from_the_history_read_whole(tmp_path):
    path = tmp_path / "history.sqlite"
    history = filled(path, 5, busy_timeout=0.05)
    holder = sqlite3.connect(path, isolation_level=None)  # SQLite's write lock, held elsewhere
    holder.execute("BEGIN IMMEDIATE")
    late = CallRecord(call_id="late", tool="read", status="error", kind="timeout", receipt="x")
    with pytest.warns(wb.history.HistoryWarning, match="locked"):
        assert "held in" in (history.write([late]) or "")
    assert history.health().held_rows == 1

    view = HistoryView(history, max_rows=4)
    assert isinstance(view.source, FramePages)
    assert [row["call_id"] for row in view.table.rows] == ["c2", "c3", "c4", "late"]
    view.older()
    assert [row["call_id"] for row in view.table.rows] == ["c0", "c1"]
    view.kind_filter.value = "timeout"
    assert [row["call_id"] for row in view.table.rows] == ["late"]
    view.kind_filter.value = NO_KIND
    assert [row["call_id"] for row in view.table.rows] == ["c1", "c2", "c3", "c4"]
    holder.execute("ROLLBACK")
    holder.close()
    history.close()
