"""The compaction view, kernel-free: a budget slider over a real history, driven through compact."""

from __future__ import annotations

import pytest

import workbench as wb
from workbench.envelope._truncate import MARKER_RE
from workbench.families._compaction import compact
from workbench.widgets import CompactionView
from workbench.widgets.compaction import COLUMNS

XSS = "<img src=x onerror=alert(1)><script>alert(2)</script>"


@pytest.fixture
def calls(tools: wb.Registry) -> list[wb.Call]:
    @tools.tool(family="command")
    def chatty(n: int, text: str = "line") -> dict:
        """Print ``n`` numbered lines."""
        return {"exit_code": 0, "stdout": "".join(f"{text} {i}\n" for i in range(n))}

    @tools.tool
    def files(n: int) -> dict:
        """List ``n`` files."""
        return wb.listing("src", [{"name": f"f{i}.py", "type": "file"} for i in range(n)])

    made = []
    for name, args in (
        ("chatty", {"n": 300}),
        ("files", {"n": 40}),
        ("chatty", {"n": 2000, "text": XSS}),
        ("chatty", {"n": 3}),
        ("files", {"n": 2}),
    ):
        call = tools.invoke(name, args)
        call.wait(10)
        made.append(call)
    return made


def column(view: CompactionView, name: str) -> list[str]:
    index = COLUMNS.index(name)
    return [row["cells"][index] for row in view.board.rows]


def test_by_default_nothing_is_cut_and_the_slider_spans_the_history(tools, calls):
    view = CompactionView(tools)
    total = sum(len(call.receipt) for call in calls)

    assert "wb-compaction" in view._dom_classes
    assert (view.slider.min, view.slider.max, view.slider.value) == (0, total, total)
    totals = view.board.totals
    assert (totals["before"], totals["after"], totals["items"]) == (total, total, 5)
    assert totals["over_budget"] is False and totals["rules"] == []
    assert column(view, "before") == column(view, "after")
    assert column(view, "rules")[-2:] == ["kept (recent)"] * 2


def test_moving_the_slider_shows_what_compact_makes_of_the_history(tools, calls):
    view = CompactionView(tools)
    view.slider.value = 2_000

    expected = compact(tools.history, 2_000, keep_recent=2)
    assert view.compaction.receipts == expected.receipts
    assert view.compaction.to_dataframe().equals(expected.to_dataframe())
    totals = view.board.totals
    assert (totals["before"], totals["after"]) == (expected.before_chars, expected.after_chars)
    assert totals["summary"] == expected.summary()
    applied = {rule: count for rule, count, _saved in totals["rules"]}
    assert sum(applied.values()) == len(expected.steps)
    assert column(view, "after") == [f"{n:,}" for n in expected.item_after_chars]
    frame = expected.to_dataframe()
    assert column(view, "family") == [
        family if family == after else f"{family} → {after}"
        for family, after in zip(frame["family"], frame["family_after"], strict=True)
    ]
    assert column(view, "family")[1].startswith("listing → ")  # collapsed to one line
    assert any(row["changed"] for row in view.board.rows)

    view.slider.value = 0
    assert view.board.totals["over_budget"] is True
    assert "over budget" in view.to_html()


def test_keep_recent_and_a_token_counter_are_passed_to_compact(tools, calls):
    def words(text: str) -> int:
        return len(text.split())

    view = CompactionView(tools, budget=0, keep_recent=5, count=words)
    assert view.unit == "tokens" and view.slider.description == "budget (tokens)"
    assert view.board.totals["before"] == sum(words(call.receipt) for call in calls)
    assert column(view, "rules") == ["kept (recent)"] * 5
    assert not any(row["changed"] for row in view.board.rows)

    view.keep.value = 1
    expected = compact(tools.history, 0, keep_recent=1, count=words)
    assert view.compaction.receipts == expected.receipts
    assert view.board.detail["panes"][0]["tokens"] == words(expected.before_receipts[0])


def test_the_selected_call_shows_its_receipt_before_and_after(tools, calls):
    view = CompactionView(tools, budget=1_500)
    assert view.board.selected == 0

    view.board.selected = 2  # what a click on the third row sets
    detail = view.board.detail
    before, after = detail["panes"]
    assert (before["key"], after["key"]) == ("before", "after")
    assert "".join(t for t, _ in before["segments"]) == calls[2].receipt
    assert "".join(t for t, _ in after["segments"]) == view.compaction.receipts[2]
    assert detail["rules"] == [s.rule for s in view.compaction.steps if s.index == 2]
    assert detail["title"] == f"#2 chatty {calls[2].id}"
    cut = [t for t, kind in after["segments"] if kind == "truncation"]
    assert cut and MARKER_RE.fullmatch(cut[0])


def test_calls_and_envelopes_are_sources_too_and_refresh_reads_a_history(tools, calls):
    from_calls = CompactionView(calls, budget=1_000)
    from_envelopes = CompactionView([c.envelope for c in calls], budget=1_000)
    assert from_calls.compaction.receipts == from_envelopes.compaction.receipts
    assert from_calls.refresh_button.layout.display == "none"

    view = CompactionView(tools.history)
    assert view.refresh_button.layout.display is None
    tools.invoke("chatty", {"n": 5}).wait(10)
    view.refresh_button.click()
    assert view.board.totals["items"] == 6
    assert view.slider.max == sum(len(r["receipt"]) for r in tools.history.rows())


def test_tool_text_is_escaped_in_the_static_html(tools, calls):
    view = CompactionView(tools, budget=1_000)
    view.board.selected = 2
    data = view._repr_mimebundle_()

    assert "application/vnd.jupyter.widget-view+json" in data
    html = data["text/html"]
    assert "<img" not in html and "<script>" not in html
    assert "&lt;img src=x onerror=alert(1)&gt;" in html
    assert "class='wb-compaction wb-static'" in html
    assert html.count("<section class='wb-inspector-pane") == 2


def test_an_empty_history_gives_an_empty_view(tools):
    view = CompactionView(tools)
    assert view.board.rows == [] and view.board.detail == {}
    assert view.board.totals["items"] == 0 and view.slider.max == 0


def test_the_saved_form_shows_the_totals_as_the_live_board_draws_them(tools, calls):
    # The saved header read "45741 → 3924 (budget 0, newest 2 kept), 51 steps, over budget —
    # over budget" and lost the bar and the rule chips.
    view = CompactionView(tools)
    view.slider.value = 0
    totals = view.board.totals
    assert totals["over_budget"] and totals["rules"]
    html = view.static_html()
    assert html.count("over budget") == 1
    assert f"{totals['before']:,} → {totals['after']:,}" in html and "," in f"{totals['before']:,}"
    assert "wb-compaction-bar-after" in html and "wb-compaction-bar-budget" in html
    for rule, count, _saved in totals["rules"]:
        assert f"{rule} \u00d7{count}" in html
    steps = len(view.compaction.steps)
    assert totals["summary"].endswith(f"{steps:,} {'step' if steps == 1 else 'steps'}, over budget")


def test_a_file_of_one_line_is_said_in_the_singular():
    # The README tour's file card read "(1 lines)".
    from workbench.envelope._envelope import summarize

    one = summarize("file_read", {"kind": "file", "path": "a", "selected_lines": 1}, None)
    many = summarize("file_read", {"kind": "file", "path": "a", "selected_lines": 2}, None)
    assert (one, many) == ("read a (1 line)", "read a (2 lines)")
