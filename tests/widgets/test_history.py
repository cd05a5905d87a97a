"""The history view, kernel-free: filters over the real history, selection opens the inspector."""

from __future__ import annotations

import re

import pytest

import workbench as wb
from tests.widgets.support import assert_escaped
from workbench.history import HistoryProblem
from workbench.widgets import HistoryView
from workbench.widgets.history import ANY, COLUMNS, NO_KIND

XSS = "<img src=x onerror=alert(1)><script>alert(2)</script>"


@pytest.fixture
def history_tools(tools: wb.Registry) -> wb.Registry:
    @tools.tool
    def add(a: int, b: int = 0) -> int:
        """Add two numbers."""
        return a + b

    @tools.tool
    def echo(text: str) -> str:
        """Say it back."""
        return text

    @tools.tool
    def boom() -> str:
        """Always fails."""
        raise RuntimeError(XSS)

    for name, args in (
        ("add", {"a": 1, "b": 2}),
        ("add", {"a": "x"}),
        ("echo", {"text": XSS}),
        ("boom", {}),
        ("add", {"a": "4"}),
    ):
        tools.invoke(name, args).wait(10)
    return tools


def shown(view: HistoryView, column: str) -> list[str]:
    index = COLUMNS.index(column)
    return [row["cells"][index] for row in view.table.rows]


def test_the_table_is_the_history_dataframe(history_tools):
    view = HistoryView(history_tools)
    frame = history_tools.history.to_dataframe()

    assert "wb-history" in view._dom_classes
    assert view.table.columns == list(COLUMNS)
    assert [row["call_id"] for row in view.table.rows] == frame["call_id"].tolist()
    assert shown(view, "tool") == ["add", "add", "echo", "boom", "add"]
    assert shown(view, "status") == frame["status"].tolist()
    assert view.table.note == "5 calls"
    assert view.frame.equals(frame)


def test_filters_change_the_rows_shown(history_tools):
    view = HistoryView(history_tools)
    assert view.tool_filter.options == (
        ("all", ANY),
        ("add", "add"),
        ("boom", "boom"),
        ("echo", "echo"),
    )
    assert [v for _, v in view.status_filter.options] == [ANY, "error", "success"]
    kinds = [v for _, v in view.kind_filter.options]
    assert kinds[0] == ANY and kinds[-1] == NO_KIND and "invalid_args" in kinds

    view.tool_filter.value = "add"
    assert shown(view, "tool") == ["add", "add", "add"]
    view.status_filter.value = "error"
    assert shown(view, "kind") == ["invalid_args"]
    assert view.table.note == "1 call matches the filters"
    view.tool_filter.index = 0  # "all", as the browser sets it
    assert view.tool_filter.label == "all"
    assert len(view.table.rows) == 2 and "invalid_args" in shown(view, "kind")
    view.status_filter.value = ANY
    view.kind_filter.value = NO_KIND
    assert shown(view, "status") == ["success"] * 3
    assert len(view.frame) == 3


def test_refresh_reads_new_calls_and_keeps_the_filters(history_tools):
    view = HistoryView(history_tools)
    view.tool_filter.value = "echo"
    history_tools.invoke("echo", {"text": "again"}).wait(10)
    assert len(view.table.rows) == 1, "nothing changes until a refresh"

    view.refresh_button.click()
    assert view.tool_filter.value == "echo"
    assert shown(view, "summary_text") == [XSS, "again"]
    assert view.table.note == "2 calls match the filters"


def test_selecting_a_row_opens_its_inspector(history_tools):
    view = HistoryView(history_tools)
    assert view.inspector.panes == [] and "Select a row" in view.inspector.note
    row = history_tools.history.rows()[1]

    view.table.selected = row["call_id"]  # what a click in the browser sets

    assert view.inspector.envelope == wb.Envelope.from_canonical(row["canonical"])
    assert view.inspector.receipt == row["receipt"]
    assert view.inspector.header["kind"] == "invalid_args"
    view.select(None)
    assert view.table.selected == "" and view.inspector.panes == []
    view.select("call_not_there")
    assert view.table.selected == "" and view.inspector.envelope is None


def test_a_history_can_be_given_directly_with_a_token_counter(history_tools):
    view = HistoryView(history_tools.history, count=len)
    view.select(view.table.rows[0]["call_id"])
    assert view.inspector.counts["receipt"] == {"chars": 1, "tokens": 1}  # "3"


def test_max_rows_bounds_what_the_browser_draws(history_tools):
    view = HistoryView(history_tools, max_rows=2)
    assert [row["call_id"] for row in view.table.rows] == view.frame["call_id"].tolist()[-2:]
    assert view.table.note == "the newest 2 calls drawn; Older for more"


def test_an_empty_history_says_so(tools):
    view = HistoryView(tools)
    assert view.table.rows == [] and view.table.note == "No calls recorded yet."
    assert "No calls recorded yet." in view.to_html()


SAVED_NOTEBOOK = [
    f"""\
import workbench as wb
from workbench.widgets import HistoryView

tools = wb.Registry(history=":memory:")

@tools.tool
def echo(text: str) -> str:
    '''Say it back.'''
    return text

calls = [tools.invoke("echo", {{"text": t}}) for t in ("first", {XSS!r})]
for call in calls:
    call.wait(30)
view = HistoryView(tools)
view
""",
    "view.select(calls[1].id)",
]


@pytest.mark.kernel
def test_a_saved_notebook_shows_the_final_state_without_a_kernel(tmp_path):
    import nbformat  # a test dependency: its absence is a failure, not a skip
    from nbclient import NotebookClient
    from nbconvert import HTMLExporter

    notebook = nbformat.v4.new_notebook(
        cells=[nbformat.v4.new_code_cell(source) for source in SAVED_NOTEBOOK]
    )
    NotebookClient(notebook, timeout=120, kernel_name="python3").execute(cwd=str(tmp_path))

    [output] = notebook.cells[0].outputs
    assert "application/vnd.jupyter.widget-view+json" in output["data"]
    saved = output["data"]["text/html"]
    assert "wb-selected" in saved, "the display follows the selection made in a later cell"
    assert "&lt;img src=x onerror=alert(1)&gt;" in saved and "<img" not in saved
    # Where no widget state is saved (or none can run, as on GitHub), nbconvert falls back to
    # the static form.
    notebook.metadata.pop("widgets", None)
    page, _ = HTMLExporter().from_notebook_node(notebook)
    assert re.search(r"class=[\"']wb-history wb-static[\"']", page)
    assert re.search(r"class=[\"']wb-inspector wb-static[\"']", page)
    assert "<img src=x onerror" not in page


def test_tool_text_is_escaped_in_the_static_html(history_tools):
    view = HistoryView(history_tools)
    echo = next(row for row in history_tools.history.rows() if row["tool"] == "echo")
    view.select(echo["call_id"])
    assert XSS in shown(view, "summary_text")  # the browser sets it as text

    data = view._repr_mimebundle_()
    html = data["text/html"]
    assert "application/vnd.jupyter.widget-view+json" in data
    assert "<img" not in html and "<script>" not in html
    assert "&lt;img src=x onerror=alert(1)&gt;" in html
    assert "wb-selected" in html and "class='wb-inspector wb-static'" in html


def test_problems_the_history_reports_are_shown_escaped(tools):
    view = HistoryView(tools.history)
    assert view.problems.value == ""  # a history with nothing to report (or no report at all)
    assert "wb-history-problems" not in view.to_html()
    # A history that reports a problem: its sentence is shown, escaped.
    tools.history.problems.append(
        HistoryProblem(at=0.0, kind="write", message=f"journal holds 2 unwritten rows {XSS}")
    )
    view.refresh()
    assert "the history reports 1 problem<" in view.problems.value
    assert_escaped(view.to_html())
