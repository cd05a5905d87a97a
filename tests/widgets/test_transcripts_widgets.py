"""The history view pages, pins and replays, and shows the receipt the model saw beside
workbench's rendering; every button's action is a method tested here without a browser."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import workbench as wb
from workbench.history import CallRecord
from workbench.widgets._html import esc
from workbench.widgets.history import HistoryView, index_frame

DATA = Path(__file__).parents[1] / "data" / "transcripts"


def wait_for(condition, timeout: float = 30.0) -> None:
    import time

    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "condition not met in time"
        time.sleep(0.02)


@pytest.fixture
def many(tmp_path):
    history = wb.History(tmp_path / "history.sqlite")
    for index in range(25):
        history.append(
            CallRecord(call_id=f"c{index:02d}", tool="t", status="success", receipt=f"r{index}")
        )
    history.flush()
    yield history
    history.close()


def ids(view: HistoryView) -> list[str]:
    return [row["call_id"] for row in view.table.rows]


def test_the_view_pages_instead_of_drawing_every_row(many):
    view = HistoryView(many, max_rows=10)
    assert view.page == 0 and view.has_older
    assert ids(view) == [f"c{n:02d}" for n in range(15, 25)]
    assert view.table.note == "the newest 10 calls drawn; Older for more"
    assert view.newer_button.disabled and not view.older_button.disabled
    view.older()
    assert ids(view) == [f"c{n:02d}" for n in range(5, 15)]
    assert view.table.note == "page 2: 10 calls drawn; Older for more"
    view.older()
    assert ids(view) == [f"c{n:02d}" for n in range(5)]
    assert view.table.note == "page 3: 5 calls drawn"
    assert view.older_button.disabled and not view.has_older
    view.older()  # past the last page: stays
    assert ids(view) == [f"c{n:02d}" for n in range(5)]
    view.newer()
    view.newer()
    assert ids(view)[0] == "c15"


def test_the_index_reads_the_scalar_columns_only(many):
    index = index_frame(many)
    assert len(index) == 25 and "receipt" not in index.columns
    assert list(index["call_id"][:2]) == ["c00", "c01"]


def test_pin_keeps_a_call_at_the_top_of_every_page(many):
    view = HistoryView(many, max_rows=10)
    view.select("c03")
    view.pin()
    assert view.pin_button.description == "Unpin"  # the button now undoes the pin
    assert ids(view)[0] == "c03" and view.table.rows[0]["pinned"] is True
    view.older()
    assert ids(view)[0] == "c03"
    assert "1 pinned" in view.table.note
    assert "wb-history-pinned" in view.to_html()
    view.older()  # the page that holds c03 itself: drawn once, pinned at the top
    assert ids(view).count("c03") == 1 and view.table.rows[0]["pinned"] is True
    view.newer()
    view.pin()  # again: unpinned
    assert view.pin_button.description == "Pin"
    assert "c03" not in ids(view)


def test_selecting_an_imported_row_shows_the_receipt_beside_the_rendering():
    history = wb.transcripts.load(DATA / "openai_chat.json")
    view = HistoryView(history)
    row = history.get("call_1aF")
    view.select(row["call_id"])
    html = view.receipt_diff.value
    assert "wb-receipt-diff" in html and "different" in html
    assert "wb-diff-removed" in html and "wb-diff-added" in html
    assert "wb-receipt-diff" in view.to_html()


def test_the_replay_button_replays_the_selected_call_and_shows_the_diff(tools, tmp_path):
    wb.builtins.register(tools, root=tmp_path)
    tools.invoke("shell_exec", {"command": "echo <b>eins</b>"}).wait(timeout=30)
    view = HistoryView(tools)
    view.select(view.table.rows[0]["call_id"])
    replay = view.replay(args={"command": "echo <b>zwei</b>"})
    wait_for(lambda: "wb-replay" in view.receipt_diff.value)
    assert view.last_replay is replay
    html = view.receipt_diff.value
    assert "&lt;b&gt;" in html and "<b>zwei" not in html
    # the replay is in the same history, so the view refreshed and shows it
    wait_for(lambda: len(view.table.rows) == 2)
    assert tools.history.get(replay.call.id)["parent_call_id"] == view.table.rows[0]["call_id"]


def test_replay_needs_a_registry_and_a_selection():
    history = wb.transcripts.load(DATA / "anthropic.json")
    view = HistoryView(history)
    with pytest.raises(RuntimeError, match="replay_with=tools"):
        view.replay()
    view._replay_clicked()  # the button shows the reason instead of raising
    assert "replay_with=tools" in view.receipt_diff.value
    other = HistoryView(history, replay_with=wb.Registry(history=":memory:"))
    with pytest.raises(ValueError, match="select a recorded call"):
        other.replay()


def test_the_diff_title_names_the_rule_for_an_imported_row(tools):
    history = wb.transcripts.load(DATA / "anthropic.json")
    view = HistoryView(history)
    view.select(history.get("toolu_05")["call_id"])
    assert "receipt the model saw (read by the rule legacy_prefix)" in view.receipt_diff.value
    # the count of what differs is in the title, not on a line of its own below it
    assert re.search(r"rendering: different, \d+ character\(s\)</div>", view.receipt_diff.value)
    assert "wb-diff-verdict'>" not in view.receipt_diff.value
    tools.invoke("nope", {}).wait(timeout=30)
    own = HistoryView(tools)
    own.select(own.table.rows[0]["call_id"])
    assert "receipt recorded vs workbench" in own.receipt_diff.value


def test_a_large_identical_receipt_is_shown_once_in_the_history_view(tools, tmp_path):
    wb.builtins.register(tools, root=tmp_path)
    lines = "".join(f"row {n}\n" for n in range(3000))
    (tmp_path / "big.txt").write_text(lines)
    call = tools.invoke("file_read", {"path": "big.txt"})
    call.wait(timeout=30)
    view = HistoryView(tools)
    view.select(call.id)
    html = view.receipt_diff.value
    assert "the same (the Receipt pane above)" in html and "wb-diff-text" not in html
    # the whole view holds the receipt's text once: in the inspector's Receipt pane
    receipt_line = "\n" + esc(call.receipt.splitlines()[3]) + "\n"
    assert view.static_html().count(receipt_line) == 1, receipt_line
