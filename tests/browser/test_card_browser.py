"""The call card in a real JupyterLab: it streams, Terminate stops the process, Allow and Deny
decide, a listing tree opens the next entry, a failure card explains and retries, tool text
never runs as markup, and a saved notebook keeps the final card."""

from __future__ import annotations

import json
import os
import re
import time

import pytest
from playwright.sync_api import Locator, expect

from ..conftest import pid_alive, pids_in_group
from .harness import REPO, Lab, probe_source, saved_html

DOCS_CARD = REPO / "docs" / "card.png"

SETUP = """\
import os
import workbench as wb
tools = wb.Registry(history=":memory:", artifacts="artifacts")
builtins = wb.builtins.register(tools, root=".")
"""

# Each of these runs only if tool text reached the page as live markup.
XSS = (
    "<img src=x onerror=\"window.__xss=1;document.title='pwned'\">"
    '<script>window.__xss=2</script><svg onload="window.__xss=3"></svg>'
)


@pytest.fixture
def lab(lab: Lab) -> Lab:
    """The shared ``lab`` with a tall window, so a whole card fits in one screenshot."""
    lab.page.set_viewport_size({"width": 1400, "height": 2400})
    return lab


def cards(lab: Lab) -> Locator:
    return lab.page.locator(".jp-OutputArea-output .wb-card")


def state(card: Locator) -> Locator:
    """The state badge of ``card`` itself (not of a card nested in it)."""
    return card.locator(".wb-card-header .wb-state").first


def output_text(card: Locator) -> str:
    return card.locator("pre.wb-output").first.inner_text()


def states_in(output: dict) -> list[str]:
    """The card states a saved output's ``text/html`` shows, with its other mime types."""
    data = output.get("data", {})
    html = data.get("text/html", "")
    html = "".join(html) if isinstance(html, list) else html
    states = re.findall(r"wb-state-(\w+)'", html)
    return [*states, *sorted(key for key in data if key != "text/html")]


def save_until_saved(lab: Lab, cell: int, card_state: str, timeout: float = 15) -> str:
    """Save the notebook until cell ``cell``'s saved HTML shows a card in ``card_state``.

    A card shown with ``card(call)`` republishes its bundle when it ends; once the saved
    notebook holds the final card, the page has replaced the card's view with the final one,
    so locators found after this point stay attached. The page can show the final state (from
    the widget's own state) a moment before that republished bundle reaches the notebook, so
    only the card's class attribute counts (``wb-state-succeeded'``), never the stylesheet
    every saved card carries, which names every state.
    """
    needle = f"wb-state-{card_state}'"
    path = lab.workdir / "test.ipynb"
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        lab.page.keyboard.press("Control+s")
        for _ in range(20):
            if needle in saved_html(path, cell):
                return saved_html(path, cell)
            time.sleep(0.1)
    raise AssertionError(
        f"cell {cell} was not saved with {needle!r}: {saved_html(path, cell)[:300]}"
    )


def last_line_number(card: Locator) -> int:
    numbers = re.findall(r"line (\d+)", output_text(card))
    return int(numbers[-1]) if numbers else 0


@pytest.mark.browser
def test_a_card_streams_and_terminate_kills_the_process(lab: Lab) -> None:
    command = "echo $$ > pid.txt; i=0; while true; do i=$((i+1)); echo line $i; sleep 0.05; done"
    lab.write_notebook(
        [SETUP, f"call = tools.invoke('shell_exec', {{'command': {command!r}}})\ncall"]
    )
    lab.open()
    lab.run_all()

    card = lab.output(".wb-card")
    expect(state(card)).to_have_text("running", timeout=15_000)
    expect(card.locator("pre.wb-output")).to_contain_text("line 5", timeout=10_000)
    button = card.locator("button.wb-terminate")
    before = button.bounding_box()
    first = last_line_number(card)
    expect(card.locator("pre.wb-output")).to_contain_text(f"line {first + 10}", timeout=10_000)
    # the output grew by ten lines; Terminate stayed where a person's pointer is
    after = button.bounding_box()
    assert before is not None and after is not None
    assert (after["x"], after["y"]) == (before["x"], before["y"])
    lab.screenshot(card, "streaming")
    # The README's picture: written when missing, or refreshed with WB_UPDATE_DOCS=1, so a test
    # run leaves tracked files alone.
    if os.environ.get("WB_UPDATE_DOCS") or not DOCS_CARD.exists():
        DOCS_CARD.parent.mkdir(exist_ok=True)
        card.screenshot(path=str(DOCS_CARD))
    pid = int(lab.wait_for_file("pid.txt"))
    assert pid_alive(pid)

    started = time.monotonic()
    card.locator("button.wb-terminate").click()
    expect(state(card)).to_have_text("terminated", timeout=5_000)
    fields = card.locator(".wb-failure .wb-fields")
    expect(fields).to_contain_text("killed_by", timeout=5_000)
    expect(fields).to_contain_text('"user"')
    shown = time.monotonic() - started
    assert shown < 5, f"terminated showed {shown:.2f}s after the click"
    expect(card.locator("button.wb-terminate")).to_have_count(0)  # a finished card has none

    deadline = time.monotonic() + 5
    while (pid_alive(pid) or pids_in_group(pid)) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not pid_alive(pid), "the shell survived Terminate"
    assert pids_in_group(pid) == [], "a child of the shell survived Terminate"
    card.locator(".wb-receipt summary").click()
    lab.screenshot(card, "terminated")
    lab.assert_no_page_errors()


@pytest.mark.browser
def test_allow_runs_and_deny_gives_the_user_denied_failure_card(lab: Lab) -> None:
    setup = SETUP.replace('root=".")', 'root=".", shell_permission="always_ask")')
    lab.write_notebook(
        [
            setup,
            "tools.invoke('shell_exec', {'command': 'echo allowed'})",
            "tools.invoke('shell_exec', {'command': 'echo denied > denied.txt'})",
        ]
    )
    lab.open()
    lab.run_all()

    allow_card, deny_card = cards(lab).nth(0), cards(lab).nth(1)
    for card in (allow_card, deny_card):
        expect(state(card)).to_have_text("awaiting approval", timeout=15_000)
    prompt = allow_card.locator(".wb-approval")
    expect(prompt).to_contain_text("destructive")
    # the arguments show once, on the card, not again in the prompt
    expect(allow_card.locator(".wb-args-line")).to_have_text('{"command": "echo allowed"}')
    expect(prompt).not_to_contain_text("echo allowed")
    lab.screenshot(allow_card, "awaiting-approval")

    prompt.locator("button", has_text=re.compile("^Allow$")).click()
    expect(state(allow_card)).to_have_text("succeeded", timeout=10_000)
    expect(allow_card.locator(".wb-result")).to_contain_text("exit code 0")
    expect(allow_card.locator("pre.wb-output")).to_have_text("allowed\n")
    expect(allow_card.locator(".wb-approval")).to_have_count(0)
    lab.screenshot(allow_card, "allowed")

    deny_card.locator(".wb-approval button", has_text=re.compile("^Deny$")).click()
    expect(state(deny_card)).to_have_text("failed", timeout=10_000)
    failure = deny_card.locator(".wb-failure").first
    expect(failure.locator(".wb-kind")).to_have_text("user_denied")
    expect(failure).to_contain_text("not retryable")
    assert not (lab.workdir / "denied.txt").exists()
    lab.screenshot(deny_card, "denied")
    lab.assert_no_page_errors()


LISTING_CELL = """\
os.makedirs("tree/sub/deeper", exist_ok=True)
with open("tree/sub/notes.txt", "w") as f:
    f.write("first\\nsecond\\nthird\\n")
with open("tree/top.txt", "w") as f:
    f.write("top\\n")
tools.invoke("file_read", {"path": "tree"})
"""


@pytest.mark.browser
def test_clicking_a_directory_in_a_listing_opens_the_next_card(lab: Lab) -> None:
    lab.write_notebook([SETUP, LISTING_CELL])
    lab.open()
    lab.run_all()

    card = lab.output(".wb-card")
    tree = card.locator(".wb-listing").first
    expect(tree).to_be_visible(timeout=15_000)
    expect(tree.locator("button.wb-tree-name")).to_have_text(["sub/", "top.txt"])
    tree.locator("button.wb-tree-name", has_text="sub/").click()

    opened = card.locator(".wb-follow-ups .wb-follow-up").first
    expect(opened.locator(".wb-compact")).to_contain_text("file_read", timeout=10_000)
    expect(opened.locator(".wb-compact")).to_contain_text("tree/sub")
    # the directory's entries now show in the first tree, under it, and open in turn
    nested = tree.locator(".wb-tree ul ul button.wb-tree-name")
    expect(nested).to_have_text(["deeper/", "notes.txt"], timeout=10_000)
    nested.filter(has_text="notes.txt").click()
    file_card = card.locator(".wb-follow-ups .wb-follow-up").nth(1)
    expect(file_card.locator("table.wb-lines")).to_contain_text("second", timeout=10_000)
    expect(file_card.locator("td.wb-lineno")).to_have_text(["1", "2", "3"])
    lab.screenshot(card, "listing-opened")
    lab.assert_no_page_errors()


FAILURE_CELL = """\
@tools.tool
def scale(factor: int) -> int:
    '''Multiply by two.'''
    return factor * 2

tools.invoke("scale", {"factor": "lots"})
"""


@pytest.mark.browser
def test_a_failure_card_shows_kind_and_field_and_retries_edited_arguments(lab: Lab) -> None:
    lab.write_notebook([SETUP, FAILURE_CELL])
    lab.open()
    lab.run_all()

    card = lab.output(".wb-card")
    failure = card.locator(".wb-failure").first
    expect(failure.locator(".wb-kind")).to_have_text("invalid_args", timeout=15_000)
    fields = failure.locator(".wb-fields")
    expect(fields).to_contain_text("field")
    expect(fields.locator("dd").first).to_have_text("factor")
    expect(fields).to_contain_text("expected")
    expect(failure.locator(".wb-failure-head")).to_contain_text("retryable")
    lab.screenshot(card, "failure")

    failure.locator("button.wb-edit-retry").click()
    editor = failure.locator(".wb-retry-args textarea")
    expect(editor).to_have_value('{\n  "factor": "lots"\n}')
    editor.fill('{"factor": 21}')
    failure.locator("button.wb-retry").click()
    retried = failure.locator(".wb-follow-ups .wb-card").first
    expect(state(retried)).to_have_text("succeeded", timeout=10_000)
    expect(retried.locator(".wb-result")).to_contain_text("42")
    lab.screenshot(card, "retried")
    lab.assert_no_page_errors()


XSS_CELLS = [
    f"XSS = {XSS!r}\n"
    "os.makedirs('xss', exist_ok=True)\n"
    "open(os.path.join('xss', XSS.replace('/', '')), 'w').close()",
    """\
@tools.tool(family="text")
def say(text: str) -> str:
    '''Say it.'''
    return text + "\\n\\n[click me](javascript:window.__xss=4)"

@tools.tool
def shout(text: str, ctx: wb.ToolContext) -> dict:
    '''Print it, then fail with it.'''
    ctx.emit(text)
    ctx.emit(text, "stderr")
    raise wb.ToolFailure("execution_error", text, field=text)
""",
    "tools.invoke('shell_exec', {'command': 'cat xss.txt; cat xss.txt >&2'})",
    "tools.invoke('say', {'text': XSS})",
    "tools.invoke('shout', {'text': XSS})",
    "tools.invoke('file_read', {'path': 'xss'})",
    "tools.invoke('file_read', {'path': 'xss.txt'})",
]


@pytest.mark.browser
def test_tool_text_never_runs_as_markup(lab: Lab) -> None:
    (lab.workdir / "xss.txt").write_text(XSS + "\n")
    lab.write_notebook([SETUP, *XSS_CELLS])
    lab.open()
    title = lab.page.title()
    lab.run_all()

    all_cards = cards(lab)
    expect(all_cards).to_have_count(5, timeout=15_000)
    for index in range(5):
        expect(state(all_cards.nth(index))).to_have_text(
            re.compile("succeeded|failed"), timeout=15_000
        )
    panel = lab.page.locator(".jp-NotebookPanel:visible").first
    # the payload is on the page as text: in the output pane, the markdown, the failure
    # card, the listing tree and the numbered file lines
    payload = "<img src=x onerror="
    expect(all_cards.nth(0).locator("pre.wb-output")).to_contain_text(payload)
    expect(all_cards.nth(1).locator(".wb-markdown")).to_contain_text(payload)
    expect(all_cards.nth(2).locator(".wb-failure .wb-message")).to_contain_text(payload)
    expect(all_cards.nth(3).locator(".wb-tree")).to_contain_text("<img src=x onerror=")
    expect(all_cards.nth(4).locator("table.wb-lines")).to_contain_text(payload)
    # An image of our own that fails to load proves error handlers have had their chance.
    lab.page.evaluate(
        "() => { const d = document.createElement('div');"
        " d.innerHTML = '<img src=x onerror=\"window.__control=1\">';"
        " document.body.append(d); }"
    )
    lab.page.wait_for_function("() => window.__control === 1")
    assert lab.page.evaluate("() => window.__xss") is None
    assert "pwned" not in lab.page.title() and lab.page.title() == title
    assert panel.locator(".jp-OutputArea-output script").count() == 0
    assert panel.locator(".jp-OutputArea-output img").count() == 0
    assert panel.locator(".jp-OutputArea-output svg[onload]").count() == 0
    assert panel.locator(".jp-OutputArea-output a[href^='javascript']").count() == 0
    for index in range(5):
        lab.screenshot(all_cards.nth(index), f"xss-{index}")
    lab.assert_no_page_errors()


# About 30 MB/s, in 2 MB bursts, until Terminate: 100 MB takes about 3 s.
FLOOD = 'yes "flood line of output" | while true; do head -c 2000000; sleep 0.05; done'


@pytest.mark.browser
def test_a_flood_stays_bounded_and_terminate_still_answers(lab: Lab) -> None:
    lab.write_notebook(
        [
            SETUP,
            "import time\nfrom workbench.widgets import card\ncpu = time.process_time()\n"
            f"call = tools.invoke('shell_exec', {{'command': {FLOOD!r}}})\n"
            "view = card(call)\nview",
            probe_source(
                "flood.json",
                "{'updates': view.updates_sent, 'events': view.events_seen,"
                " 'bytes': call.output_size(), 'elapsed': call.elapsed, 'state': call.state,"
                " 'kernel_cpu_s': time.process_time() - cpu}",
            ),
        ]
    )
    lab.open()
    lab.run_cell(0)
    lab.run_cell(1)
    card = lab.output(".wb-card")
    note = card.locator(".wb-output-note")

    def printed() -> int:
        match = re.search(r"\(([\d,]+) bytes of output so far\)", note.inner_text())
        return int(match.group(1).replace(",", "")) if match else 0

    expect(note).to_contain_text("bytes of output so far", timeout=15_000)
    # A sustained flood: past 100 MB and at least 3 s long, so the rate limit shows.
    expect(card.locator(".wb-elapsed").first).to_have_text(re.compile(r"^([3-9]|\d\d+) s$"))
    deadline = time.monotonic() + 60
    while printed() < 100_000_000 and time.monotonic() < deadline:
        time.sleep(0.2)
    assert printed() >= 100_000_000, "the flood should pass 100 MB"
    shown = output_text(card)
    assert shown.count("\n") <= 200 and len(shown) <= 20_000
    started = time.monotonic()
    card.locator("button.wb-terminate").click()
    expect(state(card)).to_have_text("terminated", timeout=5_000)
    answered = time.monotonic() - started
    save_until_saved(lab, 1, "terminated")
    expect(state(card)).to_have_text("terminated")
    lab.screenshot(card, "flood-terminated")
    lab.run_cell(2)
    seen = json.loads(lab.wait_for_file("flood.json"))
    rate = seen["updates"] / seen["elapsed"]
    print(f"flood: {seen}, {rate:.1f} updates/s, terminate answered in {answered:.2f}s")
    # one redraw per 0.1 s flush at most, plus the first and the final one
    assert seen["updates"] <= seen["elapsed"] / 0.1 + 2, seen
    lab.assert_no_page_errors()


@pytest.mark.browser
def test_a_saved_notebook_keeps_the_final_card(lab: Lab) -> None:
    lab.write_notebook(
        [
            SETUP,
            "from workbench.widgets import card\n"
            "call = tools.invoke('shell_exec', {'command': 'echo saved; sleep 1'})\ncard(call)",
        ]
    )
    lab.open()
    lab.run_all()
    card = lab.output(".wb-card")
    expect(state(card)).to_have_text("succeeded", timeout=15_000)
    html = save_until_saved(lab, 1, "succeeded")
    notebook = json.loads((lab.workdir / "test.ipynb").read_text())
    outputs = notebook["cells"][1]["outputs"]
    shown = [(out.get("output_type"), states_in(out)) for out in outputs]
    assert len(outputs) == 1, shown
    assert "wb-state-queued'" not in html and "wb-state-running'" not in html, shown
    assert "saved" in html and "receipt" in html
    expect(state(card)).to_have_text("succeeded")
    lab.screenshot(card, "saved")
    lab.assert_no_page_errors()
