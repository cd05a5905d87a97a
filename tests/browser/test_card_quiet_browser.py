"""The card as a person meets it, in a real JupyterLab: finished cards show no controls, output
appears once, arguments sit on one line until clicked, ANSI colours are colours, an approval
leaves its mark, Terminate keeps the pane on its last line, a listing click adds a row rather
than a card, the cards read in the dark theme at 1024x768, and a saved notebook reopened
without its kernel shows every card with no widget error.

Each test drives one notebook through many checks, since a JupyterLab round is slow here."""

from __future__ import annotations

import re
import time
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Error as PlaywrightError
from playwright.sync_api import Locator, Page, expect

from .harness import Lab, saved_html, shutdown_sessions

SETUP = """\
import os
import workbench as wb
tools = wb.Registry(history=":memory:", artifacts="artifacts")
builtins = wb.builtins.register(tools, root=".")

@tools.tool(permission="always_ask")
def greet(name: str) -> str:
    "Greet someone."
    return f"hello {name}"

@tools.tool
def add(a: int, b: int = 0) -> int:
    "Add two numbers."
    return a + b

@tools.tool
def locked() -> dict:
    "Open the locked room."
    return wb.failure("not_found", "no such room", retryable=False)
"""

# printf turns \033 into ESC: red text, then a reset.
COLOURS = (
    "tools.invoke('shell_exec', {'command': \"printf '\\\\033[31mred\\\\033[0m plain\\\\n'\"})"
)
QUIET_CELLS = [
    SETUP,
    COLOURS,
    "tools.invoke('add', {'a': '15', 'b': 2})",
    "tools.invoke('greet', {'name': 'Ada'})",
    "tools.invoke('shell_exec', {'command': 'for i in $(seq 1 3000); do echo line $i; "
    "sleep 0.02; done'})",
    "tools.invoke('locked')",
]

# WCAG contrast of an element's text against the background it is drawn on (translucent
# backgrounds composited over the opaque one below them).
CONTRAST_JS = """(el) => {
  if (!el.isConnected) return null;  // replaced while we looked: the caller asks again
  // Computed colours come as rgb(a)(...) or, from color-mix(), as color(srgb r g b / a).
  const rgba = (s) => {
    const m = s.match(/(rgba?|color)\\(([^)]+)\\)/);
    if (!m) return [0, 0, 0, 0];
    const p = m[2].replace("srgb", "").split(/[ ,\\/]+/).filter(Boolean).map(parseFloat);
    const scale = m[1] === "color" ? 255 : 1;
    return [p[0] * scale, p[1] * scale, p[2] * scale, p.length > 3 ? p[3] : 1];
  };
  const layers = [];
  for (let n = el; n; n = n.parentElement) {
    const c = rgba(getComputedStyle(n).backgroundColor);
    if (c[3] > 0) { layers.push(c); if (c[3] >= 1) break; }
  }
  let bg = [255, 255, 255];
  for (const c of layers.reverse()) bg = bg.map((v, i) => c[i] * c[3] + v * (1 - c[3]));
  const f = rgba(getComputedStyle(el).color);
  const fg = bg.map((v, i) => f[i] * f[3] + v * (1 - f[3]));
  const weights = [0.2126, 0.7152, 0.0722];
  const lum = (c) => c.map((v) => { v /= 255; return v <= 0.03928 ? v / 12.92
    : Math.pow((v + 0.055) / 1.055, 2.4); }).reduce((s, v, i) => s + v * weights[i], 0);
  const [a, b] = [lum(fg), lum(bg)];
  return (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05);
}"""

# True when a scrolled pane shows its last line (the live pane scrolls itself; the static one
# is a reversed flex column that starts at its end).
AT_BOTTOM_JS = """(pre) => {
  const box = pre.closest('.wb-output-scroll') || pre;
  if (!pre.isConnected || box.getClientRects().length === 0) return null;  // being drawn anew
  const shown = box.getBoundingClientRect(), text = pre.getBoundingClientRect();
  const ok = box.scrollHeight > box.clientHeight + 20 && Math.abs(text.bottom - shown.bottom) < 24;
  return ok || JSON.stringify({cls: box.className, sh: box.scrollHeight, ch: box.clientHeight,
    st: box.scrollTop, tb: text.bottom, sb: shown.bottom, disp: getComputedStyle(box).display,
    fd: getComputedStyle(box).flexDirection, ov: getComputedStyle(box).overflowY,
    pmh: getComputedStyle(pre).maxHeight, pov: getComputedStyle(pre).overflowY,
    psh: pre.scrollHeight, pch: pre.clientHeight, pst: pre.scrollTop,
    rules: [...document.styleSheets].flatMap(sh => { try { return [...sh.cssRules]; } catch (e) {
      return []; } }).filter(r => r.selectorText && r.selectorText.includes('wb-output-scroll'))
      .map(r => r.cssText).slice(0, 3)});
}"""


def cards(lab: Lab) -> Locator:
    return lab.page.locator(".jp-OutputArea-output .wb-card")


def state(card: Locator) -> Locator:
    return card.locator(".wb-card-header .wb-state").first


def measured_in_page(locator: Locator, script: str) -> Any:
    """``script``'s answer on ``locator``'s element, asked again while the script answers null
    (the element is not in the page: a view republished after a click, or as its call ends,
    is drawn anew and the one it replaces measures nothing for a moment)."""
    for _ in range(20):
        try:
            found = locator.evaluate(script)
        except PlaywrightError as exc:
            if "not attached" not in str(exc):
                raise
            found = None
        if found is not None:
            return found
        time.sleep(0.25)
    raise AssertionError(f"{locator} kept being replaced")


def contrast(locator: Locator) -> float:
    """The contrast of ``locator``'s text, measured on an element that stays in the page."""
    return float(measured_in_page(locator, CONTRAST_JS))


def pane_at_bottom(locator: Locator) -> bool | str:
    """True when the output pane shows its last line, else what the pane measured; read on a
    pane laid out in the page."""
    found = measured_in_page(locator, AT_BOTTOM_JS)
    return True if found is True else str(found)


def save_until(lab: Lab, path: Path, wanted: dict[int, str], timeout: float = 20) -> None:
    """Save until each cell's saved HTML holds its text."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        lab.page.keyboard.press("Control+s")
        time.sleep(0.5)
        if all(text in saved_html(path, cell) for cell, text in wanted.items()):
            return
    missing = {c: t for c, t in wanted.items() if t not in saved_html(path, c)}
    raise AssertionError(f"not saved: {missing}")


def set_theme(page: Page, name: str) -> None:
    """Pick ``name`` under Settings → Theme, and wait for the page to take it."""
    page.locator(".lm-MenuBar-itemLabel", has_text=re.compile("^Settings$")).click()
    page.locator(".lm-Menu-itemLabel", has_text=re.compile("^Theme$")).hover()
    page.locator(".lm-Menu-itemLabel", has_text=re.compile(f"^{name}$")).click()
    light = "false" if "Dark" in name else "true"
    page.wait_for_selector(f"body[data-jp-theme-light='{light}']", state="attached", timeout=15_000)
    time.sleep(1)  # the theme's stylesheet applies after the attribute changes


@pytest.mark.browser
def test_finished_cards_are_quiet_read_in_the_dark_and_reopen_without_a_kernel(lab: Lab) -> None:
    page = lab.page
    page.set_viewport_size({"width": 1400, "height": 2400})
    path = lab.write_notebook(QUIET_CELLS)
    lab.open()
    lab.run_all()
    expect(cards(lab)).to_have_count(5, timeout=20_000)
    colours, added, greeting, ticker, locked = (cards(lab).nth(i) for i in range(5))

    # Allow from the card; the approval leaves a mark once the call has ended.
    expect(state(greeting)).to_have_text("awaiting approval", timeout=15_000)
    expect(greeting.locator("button.wb-terminate")).to_be_visible()
    greeting.locator(".wb-approval button", has_text=re.compile("^Allow$")).click()
    expect(state(greeting)).to_have_text("succeeded", timeout=10_000)
    expect(greeting.locator(".wb-approved")).to_have_text("✓ approved by you")

    # Terminate mid-stream: the pane keeps its last line in view, and the output shows once.
    expect(ticker.locator("pre.wb-output")).to_contain_text("line 60", timeout=15_000)
    ticker.locator("button.wb-terminate").click()
    expect(state(ticker)).to_have_text("terminated", timeout=10_000)
    expect(ticker.locator(".wb-output-scroll pre.wb-output")).to_have_count(1, timeout=10_000)
    at_bottom = pane_at_bottom(ticker.locator("pre.wb-output"))
    assert at_bottom is True, f"the pane is not at its last line: {at_bottom}"
    # The pane shows a bounded tail, so which lines it holds depends on when the click landed:
    # a line from the middle of what it shows must appear once in the whole card.
    shown = re.findall(r"^line \d+$", ticker.locator("pre.wb-output").inner_text(), re.M)
    assert len(shown) >= 10, shown
    text = ticker.inner_text()  # the collapsed receipt is not rendered, so not counted
    middle = shown[len(shown) // 2]
    assert text.count(f"{middle}\n") == 1, (middle, text[:500])
    assert "before it stopped" not in text
    expect(ticker.locator(".wb-failure .wb-kind")).to_have_text("terminated")

    # No finished card offers Terminate; a failure marked not retryable offers no retry.
    for card in (colours, added, greeting, ticker, locked):
        expect(state(card)).to_have_text(re.compile("succeeded|failed|terminated"))
        expect(card.locator("button.wb-terminate")).to_have_count(0)
    expect(locked.locator(".wb-failure-head")).to_contain_text("not retryable")
    expect(locked.locator("button.wb-edit-retry")).to_have_count(0)

    # ANSI colours are coloured spans; the output appears once (not again in the result).
    red = colours.locator("pre.wb-output .wb-ansi-fg-1")
    expect(red).to_have_text("red")
    assert "\x1b" not in colours.locator("pre.wb-output").inner_text()
    plain = colours.locator("pre.wb-output .wb-stdout").first
    assert red.evaluate("e => getComputedStyle(e).color") != plain.evaluate(
        "e => getComputedStyle(e).color"
    )
    expect(colours.locator("pre.wb-output")).to_have_count(1)
    expect(colours.locator(".wb-result pre.wb-stdout")).to_have_count(0)

    # Arguments: one line with the coercion note; a click shows as sent beside as coerced.
    summary = added.locator("details.wb-args > summary")
    expect(summary).to_contain_text('{"a": 15, "b": 2}')
    expect(summary).to_contain_text('coerced: a: "15" → 15')
    expect(added.locator(".wb-args-grid")).to_be_hidden()
    summary.click()
    expect(added.locator(".wb-args-grid")).to_be_visible()
    expect(added.locator(".wb-raw-args")).to_contain_text('"a": "15"')

    # The saved notebook holds every card as it ended.
    # A state counts by the card's class attribute: the stylesheet each card carries names all.
    save_until(lab, path, {3: "approved by you", 4: "wb-state-terminated'", 5: "no such room"})

    # Dark theme at 1024x768: every card is on screen, its text readable on its background.
    set_theme(page, "JupyterLab Dark")
    try:
        page.set_viewport_size({"width": 1024, "height": 768})
        time.sleep(0.5)
        for name, card in zip(
            ("colours", "added", "greeting", "ticker", "locked"),
            (colours, added, greeting, ticker, locked),
            strict=True,
        ):
            card.scroll_into_view_if_needed()
            box = card.bounding_box()
            assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= 1024, box
            shot = lab.screenshot(card, f"dark-1024x768-{name}")
            assert shot.stat().st_size > 2_000
            for part in (".wb-tool-name", ".wb-card-header .wb-state"):
                ratio = contrast(card.locator(part).first)
                assert ratio >= 4.5 if part == ".wb-tool-name" else ratio >= 3, (name, part, ratio)
        assert contrast(ticker.locator("pre.wb-output .wb-stdout").first) >= 4.5
        assert contrast(locked.locator(".wb-failure .wb-message")) >= 4.5
        assert contrast(added.locator(".wb-args-line")) >= 4.5
        assert contrast(red) >= 3
        body_bg = page.evaluate("getComputedStyle(document.body).backgroundColor")
        assert body_bg != "rgb(255, 255, 255)"

        # Reopened with the kernel shut down: each card's static form, no widget error.
        shutdown_sessions(lab.server, path.relative_to(lab.server.root).as_posix())
        lab.open()
        outputs = page.locator(".jp-OutputArea-output")
        expect(cards(lab)).to_have_count(5, timeout=30_000)
        expect(outputs.filter(has_text="Error displaying widget")).to_have_count(0)
        for index, wanted in enumerate(("succeeded", "succeeded", "succeeded", "terminated")):
            expect(state(cards(lab).nth(index))).to_have_text(wanted)
        expect(cards(lab).nth(2)).to_contain_text("approved by you")
        expect(cards(lab).nth(4).locator(".wb-failure .wb-message")).to_have_text("no such room")
        lab.screenshot(cards(lab).nth(3), "reopened-without-kernel-terminated")
        time.sleep(1)  # a widget renderer that fails says so a moment after the page settles
        expect(outputs.filter(has_text="model not found")).to_have_count(0)
    finally:
        set_theme(page, "JupyterLab Light")  # the server's settings are shared by later tests
    lab.assert_no_page_errors()


CLICK_CELLS = [
    SETUP,
    """\
os.makedirs("tree/sub/deeper", exist_ok=True)
with open("tree/sub/notes.txt", "w") as f:
    f.write("first\\nsecond\\nthird\\n")
with open("tree/top.txt", "w") as f:
    f.write("top\\n")
tools.invoke("file_read", {"path": "tree"})
""",
    "tools.history",
]


def settled_widths(elements: Locator, count: int, timeout_s: float = 10.0) -> list[float]:
    """The widths of ``elements``, measured together in one pass of the page once there are
    ``count`` of them, all drawn: a view republished after a click is drawn anew, and measured
    one element at a time a fresh run once found the middle pane 0 wide, mid-way."""
    deadline = time.monotonic() + timeout_s
    while True:
        widths: list[float] = elements.evaluate_all(
            "els => els.map(e => e.getBoundingClientRect().width)"
        )
        if (len(widths) == count and min(widths) > 0) or time.monotonic() > deadline:
            return widths
        time.sleep(0.1)


@pytest.mark.browser
def test_a_listing_click_adds_a_row_and_selected_history_rows_read_in_the_dark(lab: Lab) -> None:
    page = lab.page
    page.set_viewport_size({"width": 1024, "height": 768})
    lab.write_notebook(CLICK_CELLS)
    lab.open()
    lab.run_all()
    card = lab.output(".wb-card")
    tree = card.locator(".wb-listing").first
    expect(tree.locator("button.wb-tree-name")).to_have_text(["sub/", "top.txt"], timeout=15_000)
    tree.locator("button.wb-tree-name", has_text="sub/").click()
    nested = tree.locator(".wb-tree ul ul button.wb-tree-name")
    expect(nested).to_have_text(["deeper/", "notes.txt"], timeout=10_000)
    nested.filter(has_text="notes.txt").click()
    rows = card.locator(".wb-follow-ups .wb-follow-up")
    expect(rows).to_have_count(2, timeout=10_000)
    expect(rows.nth(1).locator("table.wb-lines")).to_contain_text("second", timeout=10_000)
    expect(rows.nth(1).locator(".wb-compact")).to_contain_text("file_read")
    # Rows, not whole cards: no card, Terminate or receipt nested inside the listing's card.
    expect(card.locator(".wb-card")).to_have_count(0)
    expect(card.locator(".wb-follow-ups .wb-receipt, .wb-follow-ups .wb-terminate")).to_have_count(
        0
    )
    lab.screenshot(card, "listing-rows-1024x768")

    lab.run_cell(2)  # the history now holds the three calls
    history = lab.output(".wb-history")
    set_theme(page, "JupyterLab Dark")
    try:
        row = history.locator(".wb-history-row").first
        row.click()
        expect(row).to_have_class(re.compile("wb-selected"))
        selected = history.locator(".wb-history-row.wb-selected td").nth(1)
        ratio = contrast(selected)
        assert ratio >= 4.5, f"a selected history row's text has contrast {ratio:.2f}"
        # The row's inspector at 1024 wide: panes wide enough to wrap at words (stacked when
        # three would not fit), never three slivers breaking words mid-word.
        panes = history.locator(".wb-inspector-pane")
        expect(panes).to_have_count(3, timeout=10_000)
        widths = settled_widths(panes, 3)
        assert min(widths) >= 280, widths
        text = panes.first.locator(".wb-pane-text")
        # Asked until it holds: the view may redraw the pane between the look-up and the look.
        expect(text).to_have_css("overflow-wrap", "break-word")
        table = history.locator(".wb-history-table-root").first
        box = table.bounding_box()
        assert box is not None and box["x"] + box["width"] <= 1024, box
        lab.screenshot(history, "history-selected-dark-1024x768")
    finally:
        set_theme(page, "JupyterLab Light")
    lab.assert_no_page_errors()
