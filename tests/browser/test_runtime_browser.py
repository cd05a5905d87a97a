"""The runtime loop seen from a real JupyterLab: a card keeps streaming while a cell is blocked
in ``call.wait()``, and an approval card approves with edited arguments (checked by the
preflight again) while the call waits."""

from __future__ import annotations

import re
import time

import pytest
from playwright.sync_api import Locator, expect

from .harness import Lab

SETUP = """\
import workbench as wb
tools = wb.Registry(history="history.sqlite", artifacts="artifacts")
builtins = wb.builtins.register(tools, root=".")
tools.set_permission("file_read", "always_ask")
"""

# Streams until the test writes stop.txt (at most 120 s), however slowly the page comes up.
STREAM = "for i in $(seq 1 1200); do [ -f stop.txt ] && break; echo line $i; sleep 0.1; done"


def state(card: Locator) -> Locator:
    return card.locator(".wb-card-header .wb-state").first


def lines_shown(card: Locator) -> int:
    numbers = re.findall(r"line (\d+)", card.locator("pre.wb-output").first.inner_text())
    return max((int(n) for n in numbers), default=0)


@pytest.mark.browser
def test_a_card_streams_while_a_cell_waits_and_approves_edited_arguments(lab: Lab) -> None:
    (lab.workdir / "wanted.txt").write_text("the edited path was read\n")
    lab.write_notebook(
        [
            SETUP,
            f"call = tools.invoke('shell_exec', {{'command': {STREAM!r}}})\ncall",
            "envelope = call.wait()\nprint('waited', envelope.ok)",
            "asking = tools.invoke('file_read', {'path': 'typo.txt'})\nasking",
        ]
    )
    lab.open()
    lab.run_all(wait=False)

    streaming = lab.output(".wb-card")
    expect(state(streaming)).to_have_text("running", timeout=20_000)
    expect(streaming.locator("pre.wb-output")).to_contain_text("line 5", timeout=15_000)
    # The next cell is blocked in call.wait(): its prompt says [*] until the call ends.
    waiting_cell = lab.page.locator(".jp-InputPrompt").nth(2)
    expect(waiting_cell).to_have_text(re.compile(r"\[\*\]"), timeout=10_000)
    first = lines_shown(streaming)
    deadline = time.monotonic() + 10
    while lines_shown(streaming) < first + 10 and time.monotonic() < deadline:
        time.sleep(0.1)
    assert lines_shown(streaming) >= first + 10, "the card stopped streaming during wait()"
    assert state(streaming).inner_text() == "running"
    assert re.search(r"\[\*\]", waiting_cell.inner_text()), "wait() returned while it ran"
    lab.screenshot(streaming, "streaming-while-waiting")
    (lab.workdir / "stop.txt").write_text("")
    expect(state(streaming)).to_have_text("succeeded", timeout=20_000)
    expect(lab.page.locator(".jp-OutputArea-output", has_text="waited True")).to_have_count(
        1, timeout=10_000
    )

    asking = lab.page.locator(".jp-OutputArea-output .wb-card").nth(1)
    expect(state(asking)).to_have_text("awaiting approval", timeout=20_000)
    prompt = asking.locator(".wb-approval")
    prompt.locator("button.wb-edit-arguments").click()
    editor = prompt.locator(".wb-arguments-editor textarea")
    expect(editor).to_be_visible()
    editor.fill('{"pathh": "wanted.txt"}')  # the preflight refuses it: the call keeps waiting
    prompt.locator("button.wb-modify").click()
    expect(prompt).to_contain_text("not sent", timeout=10_000)
    assert state(asking).inner_text() == "awaiting approval"
    editor.fill('{"path": "wanted.txt"}')
    prompt.locator("button.wb-modify").click()
    expect(state(asking)).to_have_text("succeeded", timeout=15_000)
    expect(asking).to_contain_text("the edited path was read", timeout=10_000)
    expect(asking.locator(".wb-args-line")).to_contain_text("wanted.txt")
    lab.screenshot(asking, "approved-with-edited-arguments")
    lab.assert_no_page_errors()
