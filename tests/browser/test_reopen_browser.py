"""A saved notebook reopened with its kernel shut down draws every card, the ones that stay
live too (a listing tree whose entries open on a click, a retryable failure with Edit and
retry): widget state is saved with the notebook, as `make lab` and Binder configure JupyterLab
(binder/overrides.json)."""

from __future__ import annotations

import time

import pytest
from playwright.sync_api import expect

from .harness import Lab, shutdown_sessions

SETUP = """\
import os
import workbench as wb
os.makedirs("tree/sub", exist_ok=True)
open("tree/sub/notes.txt", "w").write("notes\\n")
tools = wb.Registry(history=":memory:", artifacts="artifacts")
builtins = wb.builtins.register(tools, root=".")
"""


@pytest.mark.browser
def test_live_cards_reopen_without_a_kernel_and_without_a_widget_error(lab: Lab) -> None:
    page = lab.page
    path = lab.write_notebook(
        [
            SETUP,
            "tools.invoke('file_read', {'path': 'tree'})",
            "tools.invoke('file_read', {'path': 'tree/missing.txt', 'limit': 'many'})",
        ]
    )
    lab.open()
    lab.run_all()
    cards = page.locator(".jp-OutputArea-output .wb-card")
    expect(cards).to_have_count(2, timeout=20_000)
    tree, failed = cards.nth(0), cards.nth(1)
    expect(tree.locator(".wb-listing")).to_contain_text("sub", timeout=15_000)
    expect(failed.locator(".wb-failure .wb-kind")).to_have_text("invalid_args", timeout=15_000)
    expect(failed.locator("button", has_text="Edit and retry")).to_be_visible()
    time.sleep(1)  # let the last redraws reach the page before saving its widget state
    page.keyboard.press("Control+s")
    deadline = time.monotonic() + 15
    while "application/vnd.jupyter.widget-state+json" not in path.read_text():
        assert time.monotonic() < deadline, "the notebook was saved without its widget state"
        page.keyboard.press("Control+s")
        time.sleep(0.5)

    shutdown_sessions(lab.server, path.relative_to(lab.server.root).as_posix())
    lab.open()
    outputs = page.locator(".jp-OutputArea-output")
    expect(cards).to_have_count(2, timeout=30_000)
    expect(cards.nth(0).locator(".wb-listing")).to_contain_text("sub")
    expect(cards.nth(1).locator(".wb-failure .wb-kind")).to_have_text("invalid_args")
    time.sleep(1)  # a widget renderer that fails says so a moment after the page settles
    expect(outputs.filter(has_text="model not found")).to_have_count(0)
    expect(outputs.filter(has_text="Error displaying widget")).to_have_count(0)
    lab.screenshot(cards.nth(0), "live-card-reopened-without-kernel")
    lab.assert_no_page_errors()
