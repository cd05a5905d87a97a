"""An imported transcript in the history view of a real JupyterLab: pages, the receipt the
model saw beside workbench's rendering, Pin, and Replay with its diff and its linked row."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from playwright.sync_api import expect

from .harness import Lab

DATA = Path(__file__).resolve().parents[1] / "data" / "transcripts"
XSS = "<img src=x onerror=window.__wb_xss=1>"

VIEW = f'''\
from pathlib import Path

import workbench as wb
from workbench.widgets import HistoryView

history = wb.transcripts.load("run.json")
tools = wb.Registry(history=":memory:")
Path("build").mkdir(exist_ok=True)
Path("build/config.json").write_text('{{"target": "app", "note": "{XSS}"}}', encoding="utf-8")


@tools.tool(read_only=True)
def read_file(path: str, limit: int = 100) -> str:
    """Read a text file."""
    return Path(path).read_text(encoding="utf-8")


view = HistoryView(history, replay_with=tools, max_rows=4)
view
'''

LINKED = """\
row = tools.history.rows()[-1]
Path("linked.txt").write_text(f"{row['parent_call_id']} {row['tool']} {row['status']}")
"""


@pytest.mark.browser
def test_imported_history_pages_pins_and_replays_in_the_browser(lab: Lab) -> None:
    shutil.copy(DATA / "openai_chat.json", lab.workdir / "run.json")
    lab.write_notebook([VIEW, LINKED])
    lab.open()
    lab.run_cell(0, timeout=90)

    view = lab.output(".wb-history")
    rows = view.locator("tr.wb-history-row")
    expect(rows).to_have_count(4)
    expect(view.locator(".wb-history-note")).to_have_text(
        "the newest 4 calls drawn; Older for more"
    )
    view.locator("button.wb-history-older").click()
    expect(rows).to_have_count(2)
    expect(rows.first).to_contain_text("chatcmpl-AZ9kq3Lr7bXw2:0")
    view.locator("button.wb-history-newer").click()
    expect(rows).to_have_count(4)

    # call_3cH: the model's arguments were cut off and it was told "[REJECTED] ..."
    rows.first.click()
    diff = view.locator(".wb-receipt-diff-view .wb-receipt-diff")
    expect(diff).to_be_visible()
    expect(diff.locator(".wb-diff-left")).to_contain_text("[REJECTED] arguments are not valid")
    expect(diff.locator(".wb-diff-right")).to_contain_text("Error (rejected)")
    expect(diff.locator(".wb-diff-added").first).to_be_visible()
    expect(view.locator(".wb-receipt-compare-title")).to_contain_text("different")
    lab.screenshot(view, "imported-row-receipt-diff")

    view.locator("button.wb-history-pin").click()
    pinned = view.locator("tr.wb-history-pinned")
    expect(pinned).to_have_count(1)
    view.locator("button.wb-history-older").click()
    expect(rows).to_have_count(3)
    expect(rows.first).to_have_attribute("data-call-id", "chatcmpl-AZ9kq3Lr7bXw2:2")
    expect(pinned).to_have_count(1)
    view.locator("button.wb-history-newer").click()
    expect(rows).to_have_count(4)  # the pinned row is drawn once, at the top, not again below
    expect(view.locator("button.wb-history-pin")).to_have_text("Unpin")

    # call_6Rf: read_file of build/config.json, replayed against the tool registered now
    rows.last.click()
    expect(view.locator(".wb-receipt-compare-title")).to_contain_text("the same")
    view.locator("button.wb-history-replay").click()
    replayed = view.locator(".wb-replay")
    expect(replayed).to_be_visible(timeout=20_000)
    expect(replayed.locator(".wb-replay-title")).to_contain_text("succeeded")
    expect(replayed.locator(".wb-diff-right").first).to_contain_text(XSS)  # shown as text
    lab.screenshot(view, "replayed")

    lab.run_cell(1)
    linked = lab.wait_for_file("linked.txt")
    assert linked == "chatcmpl-AZ9kq3Lr7bXw2:5 read_file success"
    assert lab.page.evaluate("() => window.__wb_xss === undefined"), "tool text ran as markup"
    lab.assert_no_page_errors()
