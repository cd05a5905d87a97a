"""A notebook is a document: every notebook, run in JupyterLab, saved, reopened without the
kernel that made its cards, and exported by ``nbconvert --to html`` and read offline, shows
every card as it was, with no broken widget, no page error and no control that silently does
nothing.

The notebooks are ``notebooks/*.ipynb`` (a new one is checked without an edit here). They run
a few at a time, each in its own page of the one JupyterLab, and are exported by one nbconvert.
"""

from __future__ import annotations

import json
import re
import shutil
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
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

NOTEBOOKS = sorted((REPO / "notebooks").glob("*.ipynb"))
# Notebooks running together, each in its own page: their kernels mostly wait (streams, sleeps),
# so running them side by side takes a little more than the slowest alone.
AT_ONCE = 8
# The fixture runs every notebook before the first test: its time counts against that test.
pytestmark = pytest.mark.timeout(900)
# What a saved notebook may weigh: its text, plots and static cards, no widget state. Each card
# carries its stylesheet (about 10 KB since status colours are mixed with the theme's text
# colour): notebook 05, 22 cards, weighs about 290 KB. (Notebook 02 weighed 361 KB when every
# widget's state was saved with it; about 90 KB now.)
MAX_SAVED_BYTES = 320_000
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


@dataclass
class Seen:
    """What one page showed of a notebook."""

    cards: dict[str, str]
    views: dict[str, int]
    broken: dict[str, int]
    live_controls: list[str]
    errors: list[str]
    widget_messages: list[str] = field(default_factory=list)


@dataclass
class Document:
    """One notebook's journey: run, saved, reopened, exported."""

    name: str
    path: Path
    live: Seen | None = None
    saved: dict = field(default_factory=dict)
    saved_bytes: int = 0
    reopened: Seen | None = None
    exported: Seen | None = None
    registry_text: list[str] = field(default_factory=list)
    console: list[str] = field(default_factory=list)


def seen(page: Page, errors: list[str], console: list[str] | None = None) -> Seen:
    """Cards (full call id → state), views, broken widgets and the controls that still act."""
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
    return Seen(
        cards={call_id: state for call_id, state in cards if call_id},
        views={view: page.locator(f"{OUTPUTS} .{view}").count() for view in VIEWS},
        broken={selector: page.locator(selector).count() for selector in BROKEN},
        live_controls=live_controls,
        errors=[e for e in errors if e != UPSTREAM_WIDGET_MANAGER_RACE],
        widget_messages=[m for m in ours(console or []) if WIDGET_TROUBLE.search(m)],
    )


def listen_to_console(lab: Lab) -> list[str]:
    """The page's console errors, from now on."""
    messages: list[str] = []
    lab.page.on("console", lambda m: messages.append(m.text) if m.type == "error" else None)
    return messages


def start(lab: Lab, document: Document) -> None:
    shutil.copy(REPO / "notebooks" / document.name, document.path)
    lab.notebooks.append(document.path.relative_to(lab.server.root).as_posix())
    lab.open(document.path.stem)
    run_all_cells(lab.page, wait=False)


def finish_run(lab: Lab, document: Document) -> None:
    page = lab.page
    prompts = code_prompts(page)
    for index in range(prompts.count()):
        expect(prompts.nth(index)).to_have_text(re.compile(r"\[\d+\]"), timeout=180_000)
    expect(page.locator(UNSETTLED)).to_have_count(0, timeout=60_000)
    time.sleep(1)  # the last redraws and republished outputs reach the page
    document.live = seen(page, lab.errors, document.console)
    document.registry_text = page.locator(f"{OUTPUTS} .wb-registry").all_inner_texts()
    save_notebook(page, document.path)
    shutdown_sessions(lab.server, document.path.relative_to(lab.server.root).as_posix())
    document.saved = json.loads(document.path.read_text())
    document.saved_bytes = document.path.stat().st_size


def reopen(lab: Lab, document: Document) -> None:
    """Open the saved notebook again: its cards come from the file alone (the kernel that
    starts with the page never ran a cell)."""
    page = lab.page
    lab.errors.clear()
    document.console.clear()
    url = f"{lab.server.url}/lab/tree/{document.path.relative_to(lab.server.root).as_posix()}"
    page.goto(f"{url}?reset")
    expect(notebook_panel(page).locator(OUTPUTS).first).to_be_visible(timeout=60_000)


def read_reopened(lab: Lab, document: Document) -> None:
    document.reopened = seen(lab.page, lab.errors, document.console)
    lab.screenshot(notebook_panel(lab.page), f"{document.path.stem}-reopened")


def open_offline(context: BrowserContext, html: Path) -> Seen:
    """Read an exported HTML file offline (``harness.load_offline``), with its page errors."""
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(f"{error.name}: {error.message}"))
    try:
        load_offline(page, html)
        return seen(page, errors)
    finally:
        page.close()


@pytest.fixture(scope="module")
def documents(
    lab_server: LabServer, browser_context: BrowserContext, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[dict[str, Document]]:
    """Every notebook run, saved, reopened and exported; what each step showed."""
    screenshots = OUTPUT / "screenshots" / "test_reopen_browser"
    shutil.rmtree(screenshots, ignore_errors=True)
    found: dict[str, Document] = {}
    labs: list[Lab] = []
    try:
        for first in range(0, len(NOTEBOOKS), AT_ONCE):
            batch: list[tuple[Lab, Document]] = []
            for source in NOTEBOOKS[first : first + AT_ONCE]:
                lab = new_lab(browser_context, lab_server, f"document.{source.stem}", screenshots)
                labs.append(lab)
                document = Document(source.name, lab.workdir / source.name)
                document.console = listen_to_console(lab)
                found[source.name] = document
                start(lab, document)
                batch.append((lab, document))
            for lab, document in batch:
                finish_run(lab, document)
            for lab, document in batch:
                reopen(lab, document)
            time.sleep(1.5)  # a widget renderer that fails says so a moment after the page settles
            for lab, document in batch:
                read_reopened(lab, document)
                lab.close()
        html_dir = tmp_path_factory.mktemp("exported")
        export_notebooks([d.path for d in found.values()], html_dir)
        kept = OUTPUT / "documents"  # the saved and exported files, for a person to read
        shutil.rmtree(kept, ignore_errors=True)
        kept.mkdir(parents=True)
        for document in found.values():
            html = html_dir / f"{document.path.stem}.html"
            document.exported = open_offline(browser_context, html)
            shutil.copy(document.path, kept)
            shutil.copy(html, kept)
        yield found
    finally:
        for lab in labs:
            lab.close()


NAMES = [path.name for path in NOTEBOOKS]


@pytest.mark.browser
@pytest.mark.parametrize("name", NAMES)
def test_a_notebook_runs_with_no_page_error_and_no_broken_widget(
    documents: dict[str, Document], name: str
) -> None:
    live = documents[name].live
    assert live is not None
    assert live.errors == []
    assert live.widget_messages == []
    assert live.broken == dict.fromkeys(BROKEN, 0)


@pytest.mark.browser
@pytest.mark.parametrize("name", NAMES)
def test_a_saved_notebook_reopens_with_every_card_and_no_silent_control(
    documents: dict[str, Document], name: str
) -> None:
    document = documents[name]
    live, reopened = document.live, document.reopened
    assert live is not None and reopened is not None
    assert reopened.cards == live.cards
    assert reopened.views == live.views
    assert reopened.broken == dict.fromkeys(BROKEN, 0)
    assert reopened.errors == []
    assert reopened.widget_messages == []
    # A control with no kernel behind it is disabled and says why, or is not drawn at all.
    assert reopened.live_controls == []


@pytest.mark.browser
@pytest.mark.parametrize("name", NAMES)
def test_an_exported_notebook_shows_every_card_offline(
    documents: dict[str, Document], name: str
) -> None:
    document = documents[name]
    live, exported = document.live, document.exported
    assert live is not None and exported is not None
    assert exported.cards == live.cards
    assert exported.views == live.views
    assert exported.errors == []
    assert exported.live_controls == []


@pytest.mark.browser
@pytest.mark.parametrize("name", NAMES)
def test_a_saved_notebook_keeps_no_widget_state_and_stays_small(
    documents: dict[str, Document], name: str
) -> None:
    document = documents[name]
    assert "widgets" not in document.saved["metadata"]
    assert document.saved_bytes <= MAX_SAVED_BYTES


@pytest.mark.browser
def test_the_registry_browser_follows_its_registry_after_run_all(
    documents: dict[str, Document],
) -> None:
    # Notebook 06 closes the connection whose tools its browser lists.
    (text,) = documents["06-mcp.ipynb"].registry_text
    assert "No tools registered." in text
    assert "unregistered since this browser opened" in text
