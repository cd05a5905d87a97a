"""The registry browser, history view and envelope inspector in a real JupyterLab."""

from __future__ import annotations

import pytest
from playwright.sync_api import Locator, expect

from .harness import Lab

# Runs only if tool text reached the page as markup.
XSS = '<img src=x onerror="window.__wb_xss=1"><script>window.__wb_xss=2</script>'

REGISTRY = f'''\
import workbench as wb
from workbench.widgets import RegistryBrowser

tools = wb.Registry(history=":memory:")

@tools.tool(read_only=True)
def greet(name: str, times: int = 1, loud: bool = False) -> str:
    """Greet someone {XSS}.

    Args:
        name: Who to greet.
        times: How many greetings.
        loud: Shout it.
    """
    text = ", ".join([f"hello {{name}}"] * times)
    return text.upper() if loud else text

browser = RegistryBrowser(tools)
browser
'''

HISTORY = f"""\
import workbench as wb
from workbench.widgets import HistoryView

tools = wb.Registry(history=":memory:")

@tools.tool
def add(a: int, b: int = 0) -> int:
    '''Add two numbers.'''
    return a + b

@tools.tool
def echo(text: str) -> str:
    '''Say it back.'''
    return text

for name, args in [("add", {{"a": 1}}), ("add", {{"a": "x"}}), ("echo", {{"text": {XSS!r}}}),
                   ("add", {{"a": "2", "b": 3}})]:
    tools.invoke(name, args).wait(30)
view = HistoryView(tools)
view
"""

INSPECTOR = f"""\
import workbench as wb
from workbench.widgets import EnvelopeInspector

tools = wb.Registry(history=":memory:")
PAYLOAD = {XSS!r}

@tools.tool(family="command")
def chatty(n: int) -> dict:
    '''Print n lines.'''
    return {{"exit_code": 0, "stdout": "".join(f"line {{i}} {{PAYLOAD}}\\n" for i in range(n))}}

call = tools.invoke("chatty", {{"n": 3000}})
call.wait(30)
EnvelopeInspector(call, count=len)
"""


def assert_no_xss(lab: Lab) -> None:
    assert lab.page.evaluate("() => window.__wb_xss === undefined"), "tool text ran as markup"
    lab.assert_no_page_errors()


@pytest.mark.browser
def test_registry_browser_fills_the_form_invokes_and_shows_a_card(lab: Lab) -> None:
    lab.write_notebook([REGISTRY])
    lab.open()
    lab.run_all()

    registry = lab.output(".wb-registry")
    expect(registry.locator(".wb-tool-header")).to_contain_text("read-only")
    expect(registry.locator(".wb-tool-description")).to_contain_text("<img src=x")
    registry.locator(".wb-form-text .wb-form-input input").fill("Ada")
    times = registry.locator(".wb-form-integer .wb-form-input input")
    times.fill("2")
    times.press("Enter")  # a number box sends its value on Enter or blur
    expect(registry.locator(".wb-form-integer .wb-form-set input")).to_be_checked()
    lab.screenshot(registry, "registry-form")

    registry.locator("button.wb-invoke").click()
    card = registry.locator(".wb-card").first
    expect(card).to_be_visible(timeout=15_000)
    expect(card).to_contain_text("hello Ada, hello Ada", timeout=15_000)
    lab.screenshot(registry, "registry-invoked")

    registry.locator(".widget-toggle-button", has_text="Raw JSON").click()
    raw = registry.locator(".wb-raw-args textarea")
    expect(raw).to_have_value('{\n  "name": "Ada",\n  "times": 2\n}')
    raw.fill('{"name": Ada}')
    registry.locator("button.wb-invoke").click()
    refused = registry.locator(".wb-card").nth(1)
    expect(refused).to_contain_text("invalid_args", timeout=15_000)
    lab.screenshot(registry, "registry-raw-json-refused")

    registry.locator(".lm-TabBar-tab", has_text="Resilience").click()
    expect(registry.locator(".wb-resilience-summary")).to_contain_text("cases sent through")
    lab.screenshot(registry, "registry-resilience")
    assert_no_xss(lab)


@pytest.mark.browser
def test_history_filter_changes_rows_and_a_row_opens_its_inspector(lab: Lab) -> None:
    lab.write_notebook([HISTORY])
    lab.open()
    lab.run_all()

    history = lab.output(".wb-history")
    rows = history.locator("tr.wb-history-row")
    expect(rows).to_have_count(4)
    expect(history.locator(".wb-history-note")).to_have_text("4 calls")

    history.locator(".wb-history-filter select").first.select_option("add")
    expect(rows).to_have_count(3)
    history.locator(".wb-history-filter select").nth(1).select_option("error")
    expect(rows).to_have_count(1)
    expect(rows.first).to_contain_text("invalid_args")
    lab.screenshot(history, "history-filtered")

    history.locator(".wb-history-filter select").first.select_option("echo")
    history.locator(".wb-history-filter select").nth(1).select_option("all")
    expect(rows).to_have_count(1)
    expect(rows.first).to_contain_text("<img src=x")
    rows.first.click()
    expect(rows.first).to_have_class("wb-history-row wb-status-success wb-selected")
    panes = history.locator(".wb-inspector .wb-inspector-pane")
    expect(panes).to_have_count(3)
    expect(panes.nth(2)).to_contain_text("<script>window.__wb_xss=2</script>")
    lab.screenshot(history, "history-inspector")
    assert_no_xss(lab)


@pytest.mark.browser
def test_inspector_shows_three_panes_with_counts_and_marks(lab: Lab) -> None:
    lab.write_notebook([INSPECTOR])
    lab.open()
    lab.run_all()

    inspector = lab.output(".wb-inspector")
    panes = inspector.locator(".wb-inspector-pane")
    expect(panes).to_have_count(3)
    for index, title in enumerate(("Canonical record", "Wire JSON", "Receipt")):
        expect(panes.nth(index).locator(".wb-pane-name")).to_have_text(title)
        expect(panes.nth(index).locator(".wb-pane-count")).to_contain_text(" tokens")
    receipt = panes.nth(2)
    expect(receipt.locator(".wb-pane-count")).to_contain_text("1 cut marker · 1 artifact ref")
    expect(receipt.locator("mark.wb-mark-truncation")).to_contain_text("[output truncated:")
    expect(receipt.locator("mark.wb-mark-artifact")).to_contain_text("stdout.log")
    expect(panes.nth(0).locator("mark.wb-mark-artifact").first).to_be_visible()
    lab.screenshot(inspector, "inspector")
    assert_no_xss(lab)


COMPACTION = f"""\
import workbench as wb
from workbench.widgets import CompactionView

tools = wb.Registry(history=":memory:")
PAYLOAD = {XSS!r}

@tools.tool(family="command")
def chatty(n: int) -> dict:
    '''Print n lines.'''
    return {{"exit_code": 0, "stdout": "".join(f"line {{i}} {{PAYLOAD}}\\n" for i in range(n))}}

for n in (400, 30, 2000, 5, 3):
    tools.invoke("chatty", {{"n": n}}).wait(30)
view = CompactionView(tools)
view
"""


@pytest.mark.browser
def test_compaction_view_updates_as_the_budget_moves(lab: Lab) -> None:
    lab.write_notebook([COMPACTION])
    lab.open()
    lab.run_all()

    view = lab.output(".wb-compaction")
    rows = view.locator("tr.wb-compaction-row")
    expect(rows).to_have_count(5)
    totals = view.locator(".wb-compaction-line")
    expect(totals).to_contain_text("within budget")
    expect(view.locator("tr.wb-compaction-row.wb-changed")).to_have_count(0)
    lab.screenshot(view, "compaction-full")

    readout = view.locator(".wb-compaction-budget .widget-readout")
    readout.click()
    lab.page.keyboard.press("Control+A")
    lab.page.keyboard.type("1500")
    lab.page.keyboard.press("Enter")
    expect(totals).to_contain_text("budget 1,500")
    expect(view.locator("tr.wb-compaction-row.wb-changed")).not_to_have_count(0)
    rows.nth(2).click()
    after = view.locator(".wb-compaction-detail .wb-pane-after")
    expect(after.locator("mark.wb-mark-truncation")).to_contain_text("[output truncated:")
    lab.screenshot(view, "compaction-1500")

    readout.click()
    lab.page.keyboard.press("Control+A")
    lab.page.keyboard.type("0")
    lab.page.keyboard.press("Enter")
    expect(totals).to_contain_text("over budget")
    lab.screenshot(view, "compaction-over-budget")
    assert_no_xss(lab)


CLIENTS = f"""\
from typing_extensions import TypedDict

import workbench as wb
from workbench.widgets import EnvelopeInspector

tools = wb.Registry(history=":memory:")
PAYLOAD = {XSS!r}

class Stock(TypedDict):
    names: list[str]

@tools.tool
def stock(n: int) -> Stock:
    '''The names of n items.'''
    return {{"names": [f"item {{i}} {{PAYLOAD}}" for i in range(n)]}}

call = tools.invoke("stock", {{"n": 2000}})
call.wait(30)
EnvelopeInspector(call, count=len)
"""


def output_of_run(lab: Lab, source: str, selector: str) -> Locator:
    """The output matching ``selector`` once a notebook of the one cell ``source`` ran."""
    lab.write_notebook([source])
    lab.open()
    lab.run_all()
    return lab.output(selector)


@pytest.mark.browser
def test_inspector_shows_the_call_as_each_client_sees_it(lab: Lab) -> None:
    clients = output_of_run(lab, CLIENTS, ".wb-inspector-clients")
    expect(clients.locator("h4")).to_have_text("As each client sees it")
    expect(clients.locator(".wb-inspector-clients-note")).to_contain_text("more chars")
    sides = clients.locator(".wb-inspector-pane")
    expect(sides).to_have_count(2)
    expect(sides.nth(0).locator(".wb-pane-name")).to_have_text("A client that reads the text")
    expect(sides.nth(1).locator(".wb-pane-name")).to_have_text(
        "A client that prefers structured content"
    )
    expect(sides.nth(0).locator("mark.wb-mark-truncation")).to_contain_text("[output truncated:")
    expect(sides.nth(1).locator(".wb-pane-text")).to_contain_text("item 1999")
    lab.screenshot(clients, "inspector-clients")
    assert_no_xss(lab)
