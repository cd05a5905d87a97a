"""How cards and views look in a real JupyterLab: a card keeps its look when its call ends (its
live widget and its saved static form are drawn alike), a file card's code is left-aligned in a
bounded box, and a long diff opens at its first difference in a bounded box.

The readability of every coloured text in the teaching notebooks, light and dark, is checked in
``test_contrast_browser.py``."""

from __future__ import annotations

import json
import re

import pytest
from playwright.sync_api import Locator, expect

from .harness import Lab

# The box and the computed styles that make a card look the way it does, for each part a
# running card and a finished one both have; positions are relative to the card's top left.
LOOK_JS = """(card) => {
  const origin = card.getBoundingClientRect();
  const styles = ["font-family", "font-size", "font-weight", "line-height", "color",
    "padding-top", "padding-left", "border-top-width", "border-left-width", "text-align"];
  const look = (el) => {
    if (!el) return null;
    const box = el.getBoundingClientRect(), style = getComputedStyle(el);
    const out = {top: Math.round(box.top - origin.top), left: Math.round(box.left - origin.left),
      width: Math.round(box.width), height: Math.round(box.height)};
    for (const name of styles) out[name] = style.getPropertyValue(name);
    return out;
  };
  const parts = {card: card, header: card.querySelector(".wb-card-header"),
    tool: card.querySelector(".wb-tool-name"), id: card.querySelector(".wb-call-id"),
    args: card.querySelector("details.wb-args > summary"),
    line: card.querySelector(".wb-args-line")};
  const out = {};
  for (const [name, el] of Object.entries(parts)) out[name] = look(el);
  out.card.top = 0;
  // Where the card sits in its cell: a card that moves when its form changes is a jump too.
  const cell = card.closest(".jp-Cell").getBoundingClientRect();
  out.placed = {top: Math.round(origin.top - cell.top), left: Math.round(origin.left - cell.left)};
  return out;
}"""

HOLD = """\
import threading
import ipywidgets
import workbench as wb
tools = wb.Registry(history=":memory:", artifacts="artifacts")
builtins = wb.builtins.register(tools, root=".")
release = threading.Event()

@tools.tool(timeout=None)
def hold(label: str, count: int = 1) -> str:
    "Wait for the test, then greet."
    release.wait()
    return f"**Hello, {label}!**\\nYou are number {count}."
"""


def look(card: Locator) -> dict[str, dict[str, object]]:
    return dict(card.evaluate(LOOK_JS))


def differences(before: dict, after: dict, *, tolerance: float = 1.0) -> list[str]:
    """Every measured value that changed (sizes by more than ``tolerance`` px)."""
    changed = []
    for part, values in before.items():
        other = after.get(part)
        if values is None or other is None:
            changed.append(f"{part}: {values!r} -> {other!r}")
            continue
        for name, value in values.items():
            new = other.get(name)
            if isinstance(value, int | float) and isinstance(new, int | float):
                if name == "height" and part == "card":
                    continue  # the result and receipt arrive: the card grows, by design
                if abs(value - new) > tolerance:
                    changed.append(f"{part}.{name}: {value} -> {new}")
            elif value != new:
                changed.append(f"{part}.{name}: {value!r} -> {new!r}")
    return changed


@pytest.mark.browser
def test_a_card_keeps_its_look_when_its_call_ends(lab: Lab) -> None:
    page = lab.page
    page.set_viewport_size({"width": 1024, "height": 768})
    lab.write_notebook(
        [
            HOLD,
            "call = tools.invoke('hold', {'label': 'Ada', 'count': '2'})\ncall",
            "release.set()\ncall.wait(timeout=30)",
            # The same finished card as a live widget view, beside its static form above.
            "ipywidgets.VBox([wb.widgets.card(call)])",
        ]
    )
    lab.open()
    lab.run_cell(0)
    lab.run_cell(1)
    outputs = page.locator(".jp-Cell").nth(1).locator(".jp-OutputArea-output")
    card = outputs.locator(".wb-card").first
    expect(card.locator(".wb-state")).to_have_text("running", timeout=20_000)
    expect(card).not_to_have_class(re.compile("wb-static"))
    running = look(card)
    lab.screenshot(card, "running")

    lab.run_cell(2)
    static = outputs.locator(".wb-card.wb-static")
    expect(static.locator(".wb-state")).to_have_text("succeeded", timeout=20_000)
    ended = look(static)
    lab.screenshot(static, "ended-static")
    changed = differences(running, ended)
    assert changed == [], "the card jumps when its call ends:\n" + json.dumps(changed, indent=1)

    lab.run_cell(3)
    live = page.locator(".jp-Cell").nth(3).locator(".wb-card").first
    expect(live.locator(".wb-state")).to_have_text("succeeded", timeout=20_000)
    expect(live.locator(".wb-receipt")).to_have_count(1)
    lab.screenshot(live, "ended-live")
    # Another cell, wrapped in a box: only the cards themselves are compared.
    live_look, static_look = look(live), look(static)
    del live_look["placed"], static_look["placed"]
    changed = differences(live_look, static_look)
    heights = (live_look["card"]["height"], static_look["card"]["height"])
    assert changed == [], "live and static cards differ:\n" + json.dumps(changed, indent=1)
    assert abs(heights[0] - heights[1]) <= 2, f"live and static card heights differ: {heights}"
    lab.assert_no_page_errors()


LONG = """\
import workbench as wb
tools = wb.Registry(history=":memory:", artifacts="artifacts")
builtins = wb.builtins.register(tools, root=".")
with open("long.py", "w") as f:
    for n in range(3000):
        f.write(f"    value_{n} = compute({n})\\n")
"""

DIFF = """\
left = "".join(f"line {n}: the same\\n" for n in range(3000))
right = left.replace("line 1500: the same", "line 1500: different")
wb.transcripts.diff_texts(left, right)
"""

INSPECTOR = """\
sentence = "the arguments are not valid JSON, so nothing was read from the notes folder. "
wb.widgets.EnvelopeInspector(wb.failure("invalid_args", sentence * 6, tool="read_file"))
"""

# The words of a pane's text that a line break cuts in two (a word drawn as two boxes).
SPLIT_WORDS_JS = """(pre) => {
  const split = [];
  const walker = document.createTreeWalker(pre, NodeFilter.SHOW_TEXT);
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    for (const match of node.textContent.matchAll(/[A-Za-z]{3,}/g)) {
      const range = document.createRange();
      range.setStart(node, match.index);
      range.setEnd(node, match.index + match[0].length);
      const tops = new Set([...range.getClientRects()].map((r) => Math.round(r.top)));
      if (tops.size > 1) split.push(match[0]);
    }
  }
  return split;
}"""

# Where the first changed run sits inside its scrolled box, and how tall that box is.
FIRST_CHANGE_JS = """(diff) => {
  const mark = diff.querySelector(".wb-diff-removed");
  const box = mark.closest(".wb-diff-text");
  const offset = mark.getBoundingClientRect().top - box.getBoundingClientRect().top;
  return {offset: offset, box: box.clientHeight, scroll: box.scrollTop};
}"""


@pytest.mark.browser
def test_file_cards_and_diffs_are_left_aligned_and_bounded(lab: Lab) -> None:
    page = lab.page
    page.set_viewport_size({"width": 1024, "height": 768})
    lab.write_notebook([LONG, "tools.invoke('file_read', {'path': 'long.py'})", DIFF, INSPECTOR])
    lab.open()
    lab.run_all()
    card = lab.output(".wb-card.wb-static")
    expect(card.locator(".wb-state")).to_have_text("succeeded", timeout=20_000)
    text = card.locator("table.wb-lines td:not(.wb-lineno)").first
    expect(text).to_contain_text("value_0 = compute(0)")
    assert text.evaluate("e => getComputedStyle(e).textAlign") in ("left", "start")
    # The leading spaces of the line are kept where the code put them: next to the number.
    number = card.locator("table.wb-lines td.wb-lineno").first
    gap = text.evaluate(
        "(e) => { const r = document.createRange(); r.setStart(e.firstChild, 0);"
        " r.setEnd(e.firstChild, 1); return r.getBoundingClientRect().left"
        " - e.getBoundingClientRect().left; }"
    )
    assert gap < 20, f"the file text starts {gap}px into its cell: it is not left-aligned"
    assert number.is_visible()
    box = card.bounding_box()
    assert box is not None and box["height"] < 900, f"a 3,000-line file card is {box} tall"
    lab.screenshot(card, "file-card-1024x768")

    diff = lab.output(".wb-receipt-diff")
    diff_box = diff.bounding_box()
    assert diff_box is not None and diff_box["height"] < 900, diff_box
    first = diff.evaluate(FIRST_CHANGE_JS)
    assert 0 <= first["offset"] < first["box"], f"the first difference is out of view: {first}"
    expect(diff.locator("details.wb-diff-fold summary").first).to_contain_text("unchanged lines")
    lab.screenshot(diff, "diff-1024x768")

    # The inspector wraps its panes' text between words, never inside one.
    inspector = lab.output(".wb-inspector")
    panes = inspector.locator("pre.wb-pane-text")
    expect(panes.first).to_contain_text("not valid JSON", timeout=15_000)
    split = [
        word for index in range(panes.count()) for word in panes.nth(index).evaluate(SPLIT_WORDS_JS)
    ]
    lab.screenshot(inspector, "inspector-1024x768")
    assert split == [], f"the inspector breaks words mid-word: {split[:10]}"
    lab.assert_no_page_errors()
