"""Every view bounded, readable at 1024 x 768, and the same saved as live.

The notebooks that show each view (01 the registry browser, 03 and 07 the history, 04 and 07
the compaction view, 05 the failure cards, 07 Replay, 09 the run cards) run in JupyterLab in a
1024 x 768 window, are used as a person would (a compaction row picked, a failure retried), saved,
reopened without their kernel, and exported by nbconvert and read offline. At each step the
page is measured with bounding boxes: how tall each view's output is, what runs past an
output's edge or is cut inside it, and how the saved tables lay out against the live ones.
Screenshots of every view, light and dark, go to ``test-output/screenshots/test_views_browser``.
"""

from __future__ import annotations

import re
import shutil
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import BrowserContext, Page, expect

from .harness import (
    OUTPUT,
    REPO,
    Lab,
    LabServer,
    code_prompts,
    export_notebooks,
    load_offline,
    new_lab,
    notebook_panel,
    run_all_cells,
    save_notebook,
    shutdown_sessions,
)
from .looks import set_theme

pytestmark = pytest.mark.timeout(900)

VIEWPORT = {"width": 1024, "height": 768}
# "About one screen": the window is 768 px tall; a view's output may not be taller unless the
# person opens something in it.
SCREEN_PX = 768
OUTPUTS = ".jp-OutputArea-output"
UNSETTLED = (
    ".jp-OutputArea-output .wb-card-header .wb-state:not(.wb-state-succeeded)"
    ":not(.wb-state-failed):not(.wb-state-terminated)"
)
NOTEBOOKS = ("01-author-a-tool", "03-receipts", "04-compaction", "05-failure-gallery")
NOTEBOOKS += ("07-real-transcripts", "09-meet-a-model")
# Notebook 09's step-by-step run is paused, every call ended, after this code cell (step 3).
RUN_PAUSED_AFTER = 6
PICKED_ROW = 5  # the compaction row picked in notebook 04
SCREENSHOTS = OUTPUT / "screenshots" / "test_views_browser"

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
    """What one page showed of a notebook, measured."""

    outputs: list[dict[str, Any]]
    tables: list[dict[str, Any]]
    run_cards: list[dict[str, Any]]
    text: str
    run_text: str
    replay_titles: list[str]
    failure_follow_up_ids: list[str]
    tool_summaries: list[dict[str, int]] = field(default_factory=list)
    extra: list[dict[str, Any]] = field(default_factory=list)


@dataclass
class Journey:
    """One notebook: run, used, saved, reopened, exported."""

    name: str
    path: Path
    live: Seen | None = None
    paused_run: list[dict[str, Any]] = field(default_factory=list)
    retried_id: str = ""
    reopened: Seen | None = None
    exported: Seen | None = None
    saved_text: str = ""


def measure(page: Page) -> Seen:
    outputs = page.eval_on_selector_all(OUTPUTS, MEASURE_JS)
    tables = page.eval_on_selector_all(
        f"{OUTPUTS} table.wb-history-table, {OUTPUTS} table.wb-compaction-table", TABLES_JS
    )
    run_cards = page.eval_on_selector_all(f"{OUTPUTS} .wb-run .wb-card", CARD_PIECES_JS)
    runs = " ".join(page.locator(f"{OUTPUTS} .wb-run").all_inner_texts())
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
        outputs=outputs,
        tables=tables,
        run_cards=run_cards,
        text=page.locator("body").inner_text(),
        run_text=runs,
        replay_titles=page.locator(f"{OUTPUTS} .wb-replay-title").all_inner_texts(),
        failure_follow_up_ids=follow_ups,
        tool_summaries=summaries,
    )


def settle(page: Page) -> None:
    prompts = code_prompts(page)
    for index in range(prompts.count()):
        expect(prompts.nth(index)).to_have_text(re.compile(r"\[\d+\]"), timeout=240_000)
    expect(page.locator(UNSETTLED)).to_have_count(0, timeout=60_000)
    time.sleep(1)  # the last republished outputs reach the page


def shoot(lab: Lab, journey: Journey, step: str) -> None:
    """A screenshot of every view's output in ``step``, in the theme the page has."""
    views = notebook_panel(lab.page).locator(f"{OUTPUTS}:has([class*='wb-']):visible")
    for index in range(views.count()):
        view = views.nth(index)
        view.scroll_into_view_if_needed()
        lab.screenshot(view, f"{journey.path.stem}-{step}-{index:02}")


def use_live(lab: Lab, journey: Journey) -> None:
    """What a person does in the live notebook before saving it."""
    page = lab.page
    panel = notebook_panel(page)
    if journey.name.startswith("04"):
        board = panel.locator(f"{OUTPUTS} .wb-compaction").last
        board.locator(f"tr.wb-compaction-row[data-index='{PICKED_ROW}']").click()
        expect(board.locator(".wb-compaction-detail-title")).to_contain_text(f"#{PICKED_ROW} ")
    if journey.name.startswith("05"):
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
    if journey.name.startswith("01"):
        registry = panel.locator(f"{OUTPUTS} .wb-registry").first
        registry.locator(".lm-TabBar-tab", has_text="Resilience").click()
        expect(registry.locator(".wb-resilience")).to_be_visible()
    time.sleep(1)  # the republished outputs reach the page


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


def reopen(lab: Lab, journey: Journey) -> None:
    """Open the saved notebook again: its views come from the file alone."""
    url = f"{lab.server.url}/lab/tree/{journey.path.relative_to(lab.server.root).as_posix()}"
    lab.page.goto(f"{url}?reset")
    expect(notebook_panel(lab.page).locator(OUTPUTS).first).to_be_visible(timeout=60_000)
    time.sleep(1.5)


def read_offline(context: BrowserContext, html: Path) -> Seen:
    """The exported page at 1024 x 768 with every non-file request refused."""
    page = context.new_page()
    page.set_viewport_size(VIEWPORT)
    try:
        load_offline(page, html)
        seen = measure(page)
        for index, view in enumerate(page.locator(f"{OUTPUTS}:has([class*='wb-']):visible").all()):
            view.scroll_into_view_if_needed()
            view.screenshot(path=str(SCREENSHOTS / f"{html.stem}-exported-{index:02}.png"))
        return seen
    finally:
        page.close()


@pytest.fixture(scope="module")
def journeys(
    lab_server: LabServer, browser_context: BrowserContext, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[dict[str, Journey]]:
    shutil.rmtree(SCREENSHOTS, ignore_errors=True)
    SCREENSHOTS.mkdir(parents=True)
    found: dict[str, Journey] = {}
    labs: list[tuple[Lab, Journey]] = []
    try:
        for name in NOTEBOOKS:
            lab = new_lab(browser_context, lab_server, f"views.{name}", SCREENSHOTS)
            lab.page.set_viewport_size(VIEWPORT)
            journey = found[name] = Journey(name, lab.workdir / f"{name}.ipynb")
            shutil.copy(REPO / "notebooks" / f"{name}.ipynb", journey.path)
            lab.notebooks.append(journey.path.relative_to(lab_server.root).as_posix())
            lab.open(name)
            if name != "09-meet-a-model":
                run_all_cells(lab.page, wait=False)
            labs.append((lab, journey))
        for lab, journey in labs:
            if journey.name == "09-meet-a-model":
                run_step_by_step(lab, journey)
            settle(lab.page)
            use_live(lab, journey)
            journey.live = measure(lab.page)
            shoot(lab, journey, "live")
            save_notebook(lab.page, journey.path)
            shutdown_sessions(lab_server, journey.path.relative_to(lab_server.root).as_posix())
            journey.saved_text = journey.path.read_text()
        for lab, journey in labs:
            reopen(lab, journey)
            journey.reopened = measure(lab.page)
            shoot(lab, journey, "reopened-light")
            set_theme(lab.page, "JupyterLab Dark")
            shoot(lab, journey, "reopened-dark")
            set_theme(lab.page, "JupyterLab Light")
            lab.close()
        html_dir = tmp_path_factory.mktemp("views-exported")
        export_notebooks([journey.path for journey in found.values()], html_dir)
        for journey in found.values():
            journey.exported = read_offline(browser_context, html_dir / f"{journey.name}.html")
        yield found
    finally:
        for lab, _ in labs:
            lab.close()


STEPS = ("live", "reopened", "exported")


def step_of(journey: Journey, step: str) -> Seen:
    seen = getattr(journey, step)
    assert seen is not None, f"{journey.name} was not {step}"
    return seen


def _views(name: str, step: str, journeys: dict[str, Journey]) -> list[dict[str, Any]]:
    return step_of(journeys[name], step).outputs


@pytest.mark.browser
@pytest.mark.parametrize("step", STEPS)
@pytest.mark.parametrize("name", NOTEBOOKS)
def test_every_view_output_is_at_most_a_screen_tall(
    journeys: dict[str, Journey], name: str, step: str
) -> None:
    outputs = _views(name, step, journeys)
    assert outputs, f"{name} showed no workbench view {step}"
    # A history view with a call selected shows what the person opened (that call's inspector
    # and receipts): only the views nobody opened are held to one screen.
    tall = [
        (o["view"], o["height"]) for o in outputs if o["height"] > SCREEN_PX and not o["opened"]
    ]
    assert tall == []


@pytest.mark.browser
@pytest.mark.parametrize("step", STEPS)
@pytest.mark.parametrize("name", NOTEBOOKS)
def test_nothing_in_a_view_runs_past_its_output_or_is_cut_at_1024_px(
    journeys: dict[str, Journey], name: str, step: str
) -> None:
    outputs = _views(name, step, journeys)
    past = [line for o in outputs for line in o["past"]]
    cut = [line for o in outputs for line in o["cut"]]
    assert (past, cut) == ([], [])


@pytest.mark.browser
@pytest.mark.parametrize("step", ("reopened", "exported"))
@pytest.mark.parametrize("name", ("03-receipts", "04-compaction", "07-real-transcripts"))
def test_a_saved_table_is_laid_out_like_the_live_one(
    journeys: dict[str, Journey], name: str, step: str
) -> None:
    live = step_of(journeys[name], "live").tables
    saved = step_of(journeys[name], step).tables
    assert [t["kind"] for t in saved] == [t["kind"] for t in live] and saved
    for before, after in zip(live, saved, strict=True):
        assert after["headsCut"] == [] and after["headsWrapped"] == []
        assert after["keysWrapped"] == []
        assert set(after["alignments"]) <= {"left", "start"}
        assert "pointer" not in after["cursors"]  # a click on a saved row does nothing
        # No column squeezed: each is at least 80 % as wide as it was live.
        squeezed = [
            (index, was, now)
            for index, (was, now) in enumerate(zip(before["widths"], after["widths"], strict=True))
            if now < 0.8 * was
        ]
        assert squeezed == []
        assert after["selected"] == before["selected"]


@pytest.mark.browser
@pytest.mark.parametrize("step", ("live", "reopened", "exported"))
def test_the_compaction_view_keeps_the_row_picked(journeys: dict[str, Journey], step: str) -> None:
    seen = step_of(journeys["04-compaction"], step)
    (board,) = [t for t in seen.tables if t["kind"] == "compaction"]
    assert board["selected"] == [str(PICKED_ROW)]
    assert f"#{PICKED_ROW} " in seen.text


@pytest.mark.browser
@pytest.mark.parametrize("step", ("live", "reopened", "exported"))
def test_a_finished_run_card_shows_all_its_live_card_showed(
    journeys: dict[str, Journey], step: str
) -> None:
    journey = journeys["09-meet-a-model"]
    paused = journey.paused_run
    assert len(paused) >= 5 and all(card["id"] for card in paused)
    assert any("approved by you" in " ".join(card["pieces"]) for card in paused)
    assert any(re.search(r"receipt · [\d,]+ chars", " ".join(c["pieces"])) for c in paused)
    finished = {card["id"]: card for card in step_of(journey, step).run_cards}
    missing = {
        card["id"]: [piece for piece in card["pieces"] if piece not in finished[card["id"]]["text"]]
        for card in paused
        if card["id"] in finished
    }
    assert [card["id"] for card in paused if card["id"] not in finished] == []
    assert {call_id: lost for call_id, lost in missing.items() if lost} == {}
    # Arguments that came as a JSON string (every OpenAI call's) are not a coercion to note.
    assert "JSON string parsed" not in step_of(journey, step).run_text


@pytest.mark.browser
@pytest.mark.parametrize("step", ("reopened", "exported"))
def test_a_retry_from_a_standalone_failure_card_is_saved(
    journeys: dict[str, Journey], step: str
) -> None:
    journey = journeys["05-failure-gallery"]
    assert journey.retried_id
    assert journey.retried_id in journey.saved_text
    assert journey.retried_id in step_of(journey, step).failure_follow_up_ids


@pytest.mark.browser
@pytest.mark.parametrize("step", ("reopened", "exported"))
def test_a_saved_registry_shows_each_triangle_beside_its_tool(
    journeys: dict[str, Journey], step: str
) -> None:
    summaries = step_of(journeys["01-author-a-tool"], step).tool_summaries
    assert summaries
    alone = [s for s in summaries if s["summary"] > s["header"] + 4]
    assert alone == []


@pytest.mark.browser
@pytest.mark.parametrize("step", STEPS)
def test_a_replay_says_what_happened_in_a_sentence(journeys: dict[str, Journey], step: str) -> None:
    seen = step_of(journeys["07-real-transcripts"], step)
    assert seen.replay_titles
    for title in seen.replay_titles:
        assert re.fullmatch(r"Replayed \S+ \S+ with .+ as \S+: it .+\.", title), title
    assert "<Replay of" not in seen.text
    saved = journeys["07-real-transcripts"].saved_text
    assert "<Replay of" not in saved and "&lt;Replay of" not in saved
