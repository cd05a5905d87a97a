"""Helpers for tests of how things look: switch JupyterLab's theme, and measure the contrast of
every text run that workbench draws against the background it is drawn on (WCAG 2 contrast)."""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from playwright.sync_api import Locator, Page

THEMES = ("JupyterLab Light", "JupyterLab Dark")
# Every cell output that holds something workbench drew.
WORKBENCH_OUTPUTS = ".jp-OutputArea-output:has([class*='wb-'])"

# For every visible text node inside a workbench element (a class starting "wb-") of ``root``:
# its colour composited over the backgrounds below it (translucent layers and opacity
# included), and the WCAG contrast ratio with the effective background. Controls that are
# disabled are left out, as WCAG leaves out inactive controls.
TEXT_RUNS_JS = """(root) => {
  const parse = (s) => {
    const m = s.match(/(rgba?|color)\\(([^)]+)\\)/);
    if (!m) return [0, 0, 0, 0];
    const p = m[2].replace("srgb", "").split(/[ ,\\/]+/).filter(Boolean).map(parseFloat);
    const scale = m[1] === "color" ? 255 : 1;
    return [p[0] * scale, p[1] * scale, p[2] * scale, p.length > 3 ? p[3] : 1];
  };
  const over = (top, under) => under.map((v, i) => top[i] * top[3] + v * (1 - top[3]));
  const background = (el) => {
    const layers = [];
    for (let n = el; n; n = n.parentElement) {
      const c = parse(getComputedStyle(n).backgroundColor);
      if (c[3] > 0) { layers.push(c); if (c[3] >= 1) break; }
    }
    let bg = [255, 255, 255];
    for (const c of layers.reverse()) bg = over(c, bg);
    return bg;
  };
  const opacity = (el) => {
    let value = 1;
    for (let n = el; n; n = n.parentElement) value *= parseFloat(getComputedStyle(n).opacity);
    return value;
  };
  const weights = [0.2126, 0.7152, 0.0722];
  const lum = (c) => c.map((v) => { v /= 255; return v <= 0.03928 ? v / 12.92
    : Math.pow((v + 0.055) / 1.055, 2.4); }).reduce((s, v, i) => s + v * weights[i], 0);
  const hidden = (el) => {
    if (!el.getClientRects().length) return true;
    const style = getComputedStyle(el);
    if (style.visibility === "hidden") return true;
    // Text in a closed <details> (other than its summary) is not drawn.
    for (let n = el; n && n !== root; n = n.parentElement) {
      const details = n.parentElement;
      const closed = details && details.tagName === "DETAILS" && !details.open;
      if (closed && n.tagName !== "SUMMARY") return true;
    }
    return false;
  };
  const runs = [];
  const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    const el = node.parentElement;
    if (!node.textContent.trim() || !el || !el.closest("[class*='wb-']")) continue;
    if (el.closest("style, script, :disabled, .mod-disabled")) continue;
    if (hidden(el)) continue;
    const style = getComputedStyle(el);
    const bg = background(el);
    const fg = parse(style.color);
    fg[3] *= opacity(el);
    const [a, b] = [lum(over(fg, bg)), lum(bg)];
    const ratio = (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05);
    const size = parseFloat(style.fontSize), bold = parseInt(style.fontWeight) >= 700;
    const large = size >= 24 || (bold && size >= 18.66);
    runs.push({text: node.textContent.trim().slice(0, 40), ratio: Math.round(ratio * 100) / 100,
      needed: large ? 3 : 4.5, color: style.color,
      where: [...el.classList].join(".") || el.tagName.toLowerCase(),
      widget: (el.closest("[class*='wb-']").className || "").toString().slice(0, 60)});
  }
  return runs;
}"""


def text_runs(root: Locator) -> list[dict[str, Any]]:
    """Every visible text run inside workbench elements of ``root``, with its contrast ratio
    (``ratio``) and the ratio WCAG AA asks of it (``needed``: 4.5, or 3 for large text)."""
    return list(root.evaluate(TEXT_RUNS_JS))


def unreadable(runs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The runs below the contrast WCAG AA asks of them."""
    return [run for run in runs if run["ratio"] < run["needed"]]


def set_theme(page: Page, name: str) -> None:
    """Pick ``name`` ("JupyterLab Light" or "JupyterLab Dark") under Settings → Theme and wait
    for the page to take it."""
    page.locator(".lm-MenuBar-itemLabel", has_text=re.compile("^Settings$")).click()
    page.locator(".lm-Menu-itemLabel", has_text=re.compile("^Theme$")).hover()
    page.locator(".lm-Menu-itemLabel", has_text=re.compile(f"^{name}$")).click()
    light = "false" if "Dark" in name else "true"
    page.wait_for_selector(f"body[data-jp-theme-light='{light}']", state="attached", timeout=15_000)
    time.sleep(1)  # the theme's stylesheet applies after the attribute changes


def summary(runs: list[dict[str, Any]]) -> list[str]:
    """One line per kind of run (where, colour, ratio): what a failure message shows."""
    kinds: dict[tuple[str, str, str], list[dict[str, Any]]] = {}
    for run in runs:
        kinds.setdefault((run["widget"], run["where"], run["color"]), []).append(run)
    return [
        f"{len(group)}x {where} in {widget} ({color}): {min(r['ratio'] for r in group)}"
        f" < {group[0]['needed']}, e.g. {group[0]['text']!r}"
        for (widget, where, color), group in sorted(kinds.items())
    ]


@dataclass
class Contrast:
    """The contrast of a page's workbench text in each theme of ``THEMES``: how many workbench
    outputs it showed (``outputs``), how many text runs were measured in each theme (``runs``),
    one :func:`summary` per theme with runs below WCAG AA (``problems``, empty when all read)
    and the page's uncaught errors up to the end of the measurement (``errors``)."""

    outputs: int
    runs: dict[str, int]
    problems: dict[str, list[str]]
    errors: list[str]


def contrast_in_both_themes(
    page: Page, errors: Callable[[], list[str]], photograph: Callable[[str], None]
) -> Contrast:
    """Measure every text run of the page's workbench outputs in each theme of ``THEMES``,
    calling ``photograph(theme)`` after each measurement; the page is left in JupyterLab Light
    (the theme is a server setting that later pages load). ``errors()`` gives the page's
    uncaught errors once the measurement is done."""
    outputs = page.locator(WORKBENCH_OUTPUTS)
    count = outputs.count()
    runs: dict[str, int] = {}
    problems: dict[str, list[str]] = {}
    try:
        for theme in THEMES:
            if page.evaluate("document.body.dataset.jpThemeName") != theme:
                set_theme(page, theme)
            measured = [run for index in range(count) for run in text_runs(outputs.nth(index))]
            runs[theme] = len(measured)
            if bad := unreadable(measured):
                problems[theme] = summary(bad)
            photograph(theme)
    finally:
        set_theme(page, "JupyterLab Light")
    return Contrast(outputs=count, runs=runs, problems=problems, errors=errors())
