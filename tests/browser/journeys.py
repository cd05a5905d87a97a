"""Every notebook's one journey through JupyterLab, recorded for the tests that judge it.

A journey is what a person does with a notebook: open it in JupyterLab in a 1024 x 768 window,
run it, use it (a compaction row picked, a failure retried, a registry tab opened), save it,
reopen it without the kernel that made its cards, and export it with ``nbconvert --to html``
to read offline. At each step (live, reopened, exported) the page is read once into a
:class:`Seen`: the cards and their states, the views, broken widgets, controls that still act
and page errors (what ``test_reopen_browser`` judges) and, measured with bounding boxes, each
view's height and overflow, the tables' layout and the run cards' pieces (what
``test_views_browser`` judges). Running a notebook in a browser is the slowest thing the suite
does, so each runs once and every test module that judges a notebook's page reads the same
record.

How each notebook runs serves both modules. Notebook 09 runs cell by cell (its run card is read
while the run is paused after step 3); every other notebook runs with Run → Run All Cells. A
notebook run cell by cell in JupyterLab is still run in JupyterLab top to bottom, with the
same page recording its errors, so "runs with no page error" holds of it as it did of Run All.
The "live" reading is taken after the person's clicks, just before saving: so a reopened or
exported notebook is compared with exactly the page that was saved, clicks included.

The live pages of notebooks 03, 05 and 07 are also measured for text contrast in the light and
the dark theme (what ``test_contrast_browser`` judges), after the person's clicks, before saving.

Screenshots go to ``test-output/screenshots/notebook-journeys``: each reopened notebook whole,
every view of the notebooks ``VIEWED`` names (live and exported) and the first views of notebooks
03, 05 and 07 in the dark theme. Nothing reads them: they are evidence for a person.
The saved and exported files are kept in ``test-output/documents`` for a person to read, and
where the walk's minutes went in ``test-output/journey-timeline.md``.
"""

from __future__ import annotations

import json
import re
import shutil
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from playwright.sync_api import BrowserContext, Page, expect

from .harness import (
    OUTPUT,
    REPO,
    UPSTREAM_WIDGET_MANAGER_RACE,
    Lab,
    LabServer,
    code_prompts,
    export_notebooks,
    load_offline,
    new_lab,
    notebook_panel,
    ours,
    run_all_cells,
    save_notebook,
    shutdown_sessions,
)
from .looks import Contrast, contrast_in_both_themes

NOTEBOOKS = sorted((REPO / "notebooks").glob("*.ipynb"))
# The notebooks that show each view (01 the registry browser, 03 and 07 the history, 04 and 07
# the compaction view, 05 the failure cards, 07 Replay, 09 the run cards): every view of theirs
# is photographed at each step.
VIEWED = ("01-author-a-tool", "03-receipts", "04-compaction", "05-failure-gallery")
VIEWED += ("07-real-transcripts", "09-meet-a-model")
# The notebooks whose live page is measured for text contrast in the light and dark themes
# (``test_contrast_browser``): between them they show every kind of view workbench draws.
CONTRASTED = ("03-receipts", "05-failure-gallery", "07-real-transcripts")
DARK_SHOTS = 12  # views of each photographed in the dark theme: enough to see every kind
STEP_BY_STEP = "09-meet-a-model"
# Notebook 09's step-by-step run is paused, every call ended, after this code cell (step 3).
RUN_PAUSED_AFTER = 6
PICKED_ROW = 5  # the compaction row picked in notebook 04
# Notebooks running together, each in its own page: their kernels mostly wait (streams, sleeps),
# so running them side by side takes a little more than the slowest alone. All of them at once:
# a second batch would wait for the slowest of the first.
AT_ONCE = 10
VIEWPORT = {"width": 1024, "height": 768}
SCREENSHOTS = OUTPUT / "screenshots" / "notebook-journeys"
KEPT = OUTPUT / "documents"
TIMELINE = OUTPUT / "journey-timeline.md"

# The classes a workbench view carries at its root (shared/DESIGN.md names them).
VIEWS = ("wb-card", "wb-failure", "wb-listing", "wb-history", "wb-registry", "wb-compaction")
BROKEN = (
    ".jupyter-widgets-error-widget",  # a widget whose view failed: ipywidgets' broken icon
    ".jp-OutputArea-output:has-text('Error displaying widget')",
    ".jp-OutputArea-output:has-text('model not found')",
)
OUTPUTS = ".jp-OutputArea-output"
UNSETTLED = (
    ".jp-OutputArea-output .wb-card-header .wb-state:not(.wb-state-succeeded)"
    ":not(.wb-state-failed):not(.wb-state-terminated)"
)
CONTROLS = "button, input, select, textarea"
# What the widget manager writes to the console when a widget cannot be drawn.
WIDGET_TROUBLE = re.compile(r"widget|model", re.I)

# Every view's output: its height, and what in it runs past the output's right edge (with no
# scrolling box inside the view to reach it) or is cut short inside a box that hides overflow.
# A deliberate "…" (text-overflow: ellipsis) is not a cut.
MEASURE_JS = """(outputs) => outputs.filter((o) => o.querySelector("[class*='wb-']")).map((o) => {
  const box = o.getBoundingClientRect();
  const shown = (el) => {
    if (!el.getClientRects().length) return false;
    for (let n = el; n && n !== o; n = n.parentElement) {
      const s = getComputedStyle(n);
      if (s.display === "none" || s.visibility === "hidden") return false;
      const d = n.parentElement;
      if (d && d.tagName === "DETAILS" && !d.open && n.tagName !== "SUMMARY") return false;
    }
    return true;
  };
  const scrolledInside = (el) => {
    for (let n = el.parentElement; n && n !== o; n = n.parentElement) {
      const x = getComputedStyle(n).overflowX;
      if ((x === "auto" || x === "scroll") && n.scrollWidth > n.clientWidth) return true;
    }
    return false;
  };
  const name = (el) => `${el.tagName.toLowerCase()}.${[...el.classList].join(".")}`;
  const text = (el) => (el.textContent || "").trim().replace(/\\s+/g, " ").slice(0, 50);
  const past = [], cut = [];
  for (const el of o.querySelectorAll("*")) {
    if (el.closest("style, script") || !shown(el)) continue;
    const r = el.getBoundingClientRect();
    if (r.width > 0 && r.right > box.right + 1 && !scrolledInside(el))
      past.push(`${name(el)} ${Math.round(r.right - box.right)}px past: ${text(el)}`);
    const s = getComputedStyle(el);
    const hides = ["hidden", "clip"].includes(s.overflowX);
    if (hides && s.textOverflow !== "ellipsis" && el.scrollWidth > el.clientWidth + 1 && text(el))
      cut.push(`${name(el)} cut ${el.scrollWidth - el.clientWidth}px: ${text(el)}`);
  }
  const root = o.querySelector("[class*='wb-']");
  const opened = !!o.querySelector(".wb-history tr.wb-selected");
  return {view: name(root), height: Math.round(box.height), past, cut, opened};
})"""

# Each history or compaction table: per column its width, whether its heading is cut or
# wrapped, whether a row key (first column) wraps; and each cell's alignment and row cursor.
TABLES_JS = """(tables) => tables.map((t) => {
  const lines = (el) => {
    const range = document.createRange();
    range.selectNodeContents(el);
    return new Set([...range.getClientRects()].map((r) => Math.round(r.top))).size;
  };
  const heads = [...t.tHead.rows[0].cells];
  const rows = [...t.tBodies[0].rows];
  return {
    kind: t.classList.contains("wb-history-table") ? "history" : "compaction",
    widths: heads.map((th) => Math.round(th.getBoundingClientRect().width)),
    heads: heads.map((th) => (th.textContent || "").trim()),
    // How far into the table each heading starts.
    lefts: heads.map((th) => Math.round(th.getBoundingClientRect().left
      - t.getBoundingClientRect().left)),
    headsCut: heads.filter((th) => th.scrollWidth > th.clientWidth + 1).map((th) => th.textContent),
    headsWrapped: heads.filter((th) => lines(th) > 1).map((th) => th.textContent),
    keysWrapped: rows.filter((r) => lines(r.cells[0]) > 1).map((r) => r.cells[0].textContent),
    alignments: [...new Set(rows.flatMap((r) => [...r.cells].map(
      (c) => getComputedStyle(c).textAlign)))],
    cursors: [...new Set(rows.map((r) => getComputedStyle(r).cursor))],
    selected: rows.filter((r) => r.classList.contains("wb-selected"))
      .map((r) => r.cells[0].textContent),
  };
})"""

# For each call card inside a run card: the pieces its header, arguments and receipt show.
CARD_PIECES_JS = """(cards) => cards.map((card) => {
  const all = (selector) => [...card.querySelectorAll(`:scope > * ${selector}, :scope ${selector}`)]
    .filter((el) => el.closest(".wb-card") === card)
    .map((el) => (el.textContent || "").trim().replace(/\\s+/g, " ")).filter(Boolean);
  const id = card.querySelector(".wb-call-id");
  return {id: id ? id.title : "", pieces: [...new Set([
    ...all(".wb-tool-name"), ...all(".wb-call-id"), ...all(".wb-state"), ...all(".wb-approved"),
    ...all(".wb-args-line"), ...all(".wb-coerced-note"), ...all(".wb-receipt > summary")])],
    text: (card.textContent || "").replace(/\\s+/g, " ")};
})"""


@dataclass
class Seen:
    """What one page showed of a notebook at one step, read once for both test modules.

    ``cards`` maps each card's full call id to its state; ``views`` counts each view class;
    ``broken`` counts each broken-widget selector; ``live_controls`` are the controls that
    would still act (a control disabled because no kernel is behind it, and saying so, does
    not); ``errors`` are the page's uncaught errors and ``widget_messages`` its console errors
    about widgets. The rest is measured: ``outputs`` (each view's height, overflow and cuts),
    ``tables``, ``run_cards`` (each call card of a run card: its pieces and text), the page's
    ``text``, the run cards' ``run_text``, Replay titles, the call ids of the retries shown in
    standalone failure cards, and the heights of the registry's tool summaries.
    """

    cards: dict[str, str]
    views: dict[str, int]
    broken: dict[str, int]
    live_controls: list[str]
    errors: list[str]
    widget_messages: list[str]
    outputs: list[dict[str, Any]]
    tables: list[dict[str, Any]]
    run_cards: list[dict[str, Any]]
    text: str
    run_text: str
    replay_titles: list[str]
    failure_follow_up_ids: list[str]
    tool_summaries: list[dict[str, int]]


@dataclass
class Journey:
    """One notebook's journey: run and used live, saved, reopened, exported.

    ``paused_run`` is notebook 09's run card read while the run was paused; ``retried_id`` the
    call id of notebook 05's retry; ``registry_text`` the registry browsers' text after the run;
    ``contrast`` the live page's text contrast in both themes (the notebooks ``CONTRASTED`` names).
    """

    name: str
    path: Path
    live: Seen | None = None
    reopened: Seen | None = None
    exported: Seen | None = None
    saved: dict[str, Any] = field(default_factory=dict)
    saved_text: str = ""
    saved_bytes: int = 0
    registry_text: list[str] = field(default_factory=list)
    paused_run: list[dict[str, Any]] = field(default_factory=list)
    retried_id: str = ""
    console: list[str] = field(default_factory=list)
    contrast: Contrast | None = None

    @property
    def stem(self) -> str:
        return self.path.stem


def read_page(page: Page, errors: list[str], console: list[str] | None = None) -> Seen:
    """Everything both test modules judge of the notebook ``page`` shows now."""
    cards = page.eval_on_selector_all(
        f"{OUTPUTS} .wb-card .wb-card-header",
        """headers => headers.map(h => [
            (h.querySelector('.wb-call-id') || {}).title || '',
            ((h.querySelector('.wb-state') || {}).textContent || '').trim()])""",
    )
    live_controls = page.eval_on_selector_all(
        f"{OUTPUTS} :is({CONTROLS})",
        """els => els.filter(e => !(e.disabled && /kernel/.test(e.title || '')))
                     .map(e => e.outerHTML.slice(0, 160))""",
    )
    follow_ups = page.eval_on_selector_all(
        f"{OUTPUTS} .wb-failure .wb-card .wb-call-id",
        # A card inside a failure card that no call card holds: a standalone card's retry.
        "ids => ids.filter(i => !i.closest('.wb-failure').closest('.wb-card')).map(i => i.title)",
    )
    summaries = page.eval_on_selector_all(
        f"{OUTPUTS} .wb-registry details.wb-tool > summary",
        """els => els.map(s => ({summary: Math.round(s.getBoundingClientRect().height),
            header: Math.round(
              s.querySelector('.wb-tool-header').getBoundingClientRect().height)}))""",
    )
    return Seen(
        cards={call_id: state for call_id, state in cards if call_id},
        views={view: page.locator(f"{OUTPUTS} .{view}").count() for view in VIEWS},
        broken={selector: page.locator(selector).count() for selector in BROKEN},
        live_controls=live_controls,
        errors=[e for e in errors if e != UPSTREAM_WIDGET_MANAGER_RACE],
        widget_messages=[m for m in ours(console or []) if WIDGET_TROUBLE.search(m)],
        outputs=page.eval_on_selector_all(OUTPUTS, MEASURE_JS),
        tables=page.eval_on_selector_all(
            f"{OUTPUTS} table.wb-history-table, {OUTPUTS} table.wb-compaction-table", TABLES_JS
        ),
        run_cards=page.eval_on_selector_all(f"{OUTPUTS} .wb-run .wb-card", CARD_PIECES_JS),
        text=page.locator("body").inner_text(),
        run_text=" ".join(page.locator(f"{OUTPUTS} .wb-run").all_inner_texts()),
        replay_titles=page.locator(f"{OUTPUTS} .wb-replay-title").all_inner_texts(),
        failure_follow_up_ids=follow_ups,
        tool_summaries=summaries,
    )


def listen_to_console(lab: Lab) -> list[str]:
    """The page's console errors, from now on."""
    messages: list[str] = []
    lab.page.on("console", lambda m: messages.append(m.text) if m.type == "error" else None)
    return messages


def shoot(lab: Lab, journey: Journey, step: str, most: int | None = None) -> None:
    """A screenshot of every view's output in ``step`` (a notebook ``VIEWED`` names), or of the
    first ``most`` views, in the theme the page has."""
    if journey.stem not in VIEWED:
        return
    views = notebook_panel(lab.page).locator(f"{OUTPUTS}:has([class*='wb-']):visible")
    count = views.count() if most is None else min(views.count(), most)
    for index in range(count):
        view = views.nth(index)
        view.scroll_into_view_if_needed()
        lab.screenshot(view, f"{journey.stem}-{step}-{index:02}")


def start(lab: Lab, journey: Journey) -> None:
    """Open a fresh copy of the notebook and, unless it runs step by step, Run All Cells."""
    shutil.copy(REPO / "notebooks" / journey.name, journey.path)
    lab.notebooks.append(journey.path.relative_to(lab.server.root).as_posix())
    lab.open(journey.stem)
    if journey.stem != STEP_BY_STEP:
        run_all_cells(lab.page, wait=False)


def run_step_by_step(lab: Lab, journey: Journey) -> None:
    """Notebook 09 cell by cell: its run card's calls are read while the run is paused."""
    count = code_prompts(lab.page).count()
    for index in range(count):
        lab.run_cell(index, timeout=120)
        if index == RUN_PAUSED_AFTER:
            expect(lab.page.locator(UNSETTLED)).to_have_count(0, timeout=60_000)
            time.sleep(1)
            cards = f"{OUTPUTS} .wb-run .wb-card"
            journey.paused_run = lab.page.eval_on_selector_all(cards, CARD_PIECES_JS)


def settle(page: Page) -> None:
    """Wait until every code cell has run and every card shown has ended."""
    prompts = code_prompts(page)
    for index in range(prompts.count()):
        expect(prompts.nth(index)).to_have_text(re.compile(r"\[\d+\]"), timeout=240_000)
    expect(page.locator(UNSETTLED)).to_have_count(0, timeout=60_000)
    time.sleep(1)  # the last redraws and republished outputs reach the page


def use_live(lab: Lab, journey: Journey) -> None:
    """What a person does in the live notebook before saving it."""
    panel = notebook_panel(lab.page)
    if journey.stem == "04-compaction":
        board = panel.locator(f"{OUTPUTS} .wb-compaction").last
        board.locator(f"tr.wb-compaction-row[data-index='{PICKED_ROW}']").click()
        expect(board.locator(".wb-compaction-detail-title")).to_contain_text(f"#{PICKED_ROW} ")
    elif journey.stem == "05-failure-gallery":
        standalone = panel.locator(
            f"{OUTPUTS} .wb-failure:not(.wb-card .wb-failure):has(button.wb-edit-retry)"
        ).first
        standalone.locator("button.wb-edit-retry").click()
        standalone.locator("button.wb-retry").click()
        retried = standalone.locator(".wb-card .wb-call-id").first
        expect(standalone.locator(".wb-card .wb-card-header .wb-state")).to_have_text(
            re.compile("succeeded|failed"), timeout=30_000
        )
        journey.retried_id = retried.get_attribute("title") or ""
    elif journey.stem == "01-author-a-tool":
        registry = panel.locator(f"{OUTPUTS} .wb-registry").first
        registry.locator(".lm-TabBar-tab", has_text="Resilience").click()
        expect(registry.locator(".wb-resilience")).to_be_visible()
    else:
        return
    time.sleep(1)  # the republished outputs reach the page


def finish_live(lab: Lab, journey: Journey) -> None:
    """Let the run end, use the notebook, read the page, save the notebook, stop its kernel."""
    page = lab.page
    if journey.stem == STEP_BY_STEP:
        run_step_by_step(lab, journey)
    settle(page)
    use_live(lab, journey)
    journey.live = read_page(page, lab.errors, journey.console)
    journey.registry_text = page.locator(f"{OUTPUTS} .wb-registry").all_inner_texts()
    shoot(lab, journey, "live")
    if journey.stem in CONTRASTED:
        journey.contrast = measure_contrast(lab, journey)
    save_notebook(page, journey.path)
    shutdown_sessions(lab.server, journey.path.relative_to(lab.server.root).as_posix())
    journey.saved_text = journey.path.read_text()
    journey.saved = json.loads(journey.saved_text)
    journey.saved_bytes = journey.path.stat().st_size


def measure_contrast(lab: Lab, journey: Journey) -> Contrast:
    """The live page's text contrast in the light and the dark theme (its light views were just
    photographed; its first ``DARK_SHOTS`` views are photographed dark), the page left light."""

    def photograph(theme: str) -> None:
        if "Dark" in theme:
            shoot(lab, journey, "live-dark", DARK_SHOTS)

    def errors() -> list[str]:
        return [e for e in lab.errors if e != UPSTREAM_WIDGET_MANAGER_RACE]

    return contrast_in_both_themes(lab.page, errors, photograph)


def reopen(lab: Lab, journey: Journey) -> None:
    """Open the saved notebook again, its errors counted afresh: its cards come from the file
    alone (the kernel that starts with the page never ran a cell)."""
    lab.errors.clear()
    journey.console.clear()
    url = f"{lab.server.url}/lab/tree/{journey.path.relative_to(lab.server.root).as_posix()}"
    lab.page.goto(f"{url}?reset")
    expect(notebook_panel(lab.page).locator(OUTPUTS).first).to_be_visible(timeout=60_000)


def read_reopened(lab: Lab, journey: Journey) -> None:
    """Read the reopened page, then photograph it whole (its views were photographed live, in
    the light theme and, for the notebooks ``CONTRASTED`` names, the dark one)."""
    journey.reopened = read_page(lab.page, lab.errors, journey.console)
    lab.screenshot(notebook_panel(lab.page), f"{journey.stem}-reopened")


def read_offline(context: BrowserContext, html: Path) -> Seen:
    """The exported page at 1024 x 768 with every non-file request refused
    (``harness.load_offline``), with its page errors; its views photographed."""
    page = context.new_page()
    page.set_viewport_size(VIEWPORT)
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(f"{error.name}: {error.message}"))
    try:
        load_offline(page, html)
        seen = read_page(page, errors)
        if html.stem in VIEWED:
            for index, view in enumerate(
                page.locator(f"{OUTPUTS}:has([class*='wb-']):visible").all()
            ):
                view.scroll_into_view_if_needed()
                view.screenshot(path=str(SCREENSHOTS / f"{html.stem}-exported-{index:02}.png"))
        return seen
    finally:
        page.close()


def walk(
    server: LabServer, context: BrowserContext, exported_dir: Path
) -> Iterator[dict[str, Journey]]:
    """Every notebook's journey, ``AT_ONCE`` notebooks at a time, each in its own page; the
    record by notebook file name. A generator so a fixture can close every page it opened."""
    shutil.rmtree(SCREENSHOTS, ignore_errors=True)
    SCREENSHOTS.mkdir(parents=True)
    found: dict[str, Journey] = {}
    labs: list[Lab] = []
    began = time.monotonic()
    timeline: list[str] = ["| s | step |", "|---:|---|"]

    def mark(step: str) -> None:  # where a journey's minutes go, for a person to read
        timeline.append(f"| {time.monotonic() - began:.0f} | {step} |")
        TIMELINE.write_text("# The journeys' timeline\n\n" + "\n".join(timeline) + "\n")

    try:
        for first in range(0, len(NOTEBOOKS), AT_ONCE):
            batch: list[tuple[Lab, Journey]] = []
            for source in NOTEBOOKS[first : first + AT_ONCE]:
                lab = new_lab(context, server, f"journey.{source.stem}", SCREENSHOTS)
                labs.append(lab)
                lab.page.set_viewport_size(VIEWPORT)
                journey = found[source.name] = Journey(source.name, lab.workdir / source.name)
                journey.console = listen_to_console(lab)
                start(lab, journey)
                batch.append((lab, journey))
            mark(f"{len(batch)} notebooks opened and started")
            # The step-by-step notebook is walked first, cell by cell, while the others run all
            # their cells in their own pages.
            for lab, journey in sorted(batch, key=lambda pair: pair[1].stem != STEP_BY_STEP):
                finish_live(lab, journey)
                mark(f"{journey.stem}: ran, used, read, photographed, saved")
            for lab, journey in batch:
                reopen(lab, journey)
            mark("every notebook reopened")
            time.sleep(1.5)  # a widget renderer that fails says so a moment after the page settles
            for lab, journey in batch:
                read_reopened(lab, journey)
                lab.close()
            mark("every reopened page read and photographed")
        export_notebooks([journey.path for journey in found.values()], exported_dir)
        mark("every notebook exported with nbconvert")
        shutil.rmtree(KEPT, ignore_errors=True)
        KEPT.mkdir(parents=True)
        for journey in found.values():
            html = exported_dir / f"{journey.stem}.html"
            journey.exported = read_offline(context, html)
            shutil.copy(journey.path, KEPT)
            shutil.copy(html, KEPT)
        mark("every exported page read offline")
        yield found
    finally:
        for lab in labs:
            lab.close()


def step_of(journey: Journey, step: str) -> Seen:
    """What ``journey`` showed at ``step`` ("live", "reopened" or "exported")."""
    seen = getattr(journey, step)
    assert seen is not None, f"{journey.name} was not {step}"
    assert isinstance(seen, Seen)
    return seen
