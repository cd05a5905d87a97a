"""Notebook 09 in a real JupyterLab: a person steps a (scripted) model's run from the run card,
Allows one call, Denies another, Terminates a third while it streams, and edits a receipt in
its box before Step sends it; the kernel then confirms what the model was sent."""

from __future__ import annotations

import json
import time
from pathlib import Path

import nbformat
import pytest
from playwright.sync_api import Locator, expect

from .harness import Lab, probe_source, saved_html

NOTEBOOK = Path(__file__).parents[2] / "notebooks" / "09-meet-a-model.ipynb"
EDITED = "buy milk (edited in the browser)"

PROBE = probe_source(
    "probe.json",
    "{'states': [c.state for c in run.calls], "
    "'kinds': [c.envelope.error.kind.value if c.envelope.error else None for c in run.calls], "
    "'sent': [m['content'] for m in server.requests[-1].body['messages'] "
    "if m.get('role') == 'tool'], "
    "'edits': [e.after for e in run.edits], 'end': run.end_reason, "
    "'warnings': [list(w) for w in run.history['warnings']]}",
)


def cells_until_the_run() -> list[str]:
    """The notebook's code cells up to the one that starts the run and shows its card."""
    notebook = nbformat.read(NOTEBOOK, as_version=4)
    code = [cell.source for cell in notebook.cells if cell.cell_type == "code"]
    last = next(i for i, source in enumerate(code) if source.startswith("run = wb.run("))
    return code[: last + 1]


def the_paused_run(lab: Lab, cells: list[str], *after: str) -> Locator:
    """Notebook 09's cells up to its run (then ``after``, not run) in a new notebook, run in
    JupyterLab: the run's card, paused before its first step."""
    lab.write_notebook([*cells, *after])
    lab.open()
    for index in range(len(cells)):
        lab.run_cell(index)
    card = lab.output(".wb-run")
    expect(card.locator(".wb-run-state")).to_have_text("paused", timeout=20_000)
    return card


def step(card: Locator) -> None:
    button = card.locator("button.wb-run-step")
    expect(button).to_be_enabled(timeout=30_000)
    button.click()


@pytest.mark.browser
def test_a_person_steps_a_model_run_allows_denies_terminates_and_edits(lab: Lab) -> None:
    cells = cells_until_the_run()
    card = the_paused_run(lab, cells, PROBE)

    step(card)  # turn 1: list_notes and delete_note("draft.txt"), which asks
    card.locator(".wb-approval button.wb-allow").click(timeout=30_000)
    expect(card.locator(".wb-run-receipt textarea")).to_have_count(2, timeout=30_000)

    step(card)  # turn 2: delete_note("todo.txt") asks, count_words streams
    card.locator(".wb-approval button.wb-deny").click(timeout=30_000)
    counting = card.locator(".wb-card", has_text="count_words")
    expect(counting.locator("pre.wb-output").first).to_contain_text("page 2", timeout=30_000)
    counting.locator("button.wb-terminate").click()
    expect(card.locator(".wb-run-receipt textarea")).to_have_count(2, timeout=30_000)
    lab.screenshot(card, "denied-and-terminated")

    step(card)  # turn 3: read_note; its receipt waits in a box
    box = card.locator(".wb-run-receipt textarea")
    expect(box).to_have_count(1, timeout=30_000)
    expect(box).to_have_value("buy milk\ncall the bank\n", timeout=10_000)
    box.fill(EDITED)
    step(card)

    ended = lab.output(".wb-run-end")
    expect(ended).to_have_text("ended: answered", timeout=30_000)
    lab.run_cell(len(cells))
    probe = json.loads(lab.wait_for_file("probe.json"))
    assert probe["states"] == ["succeeded", "succeeded", "failed", "terminated", "succeeded"]
    assert probe["kinds"] == [None, None, "user_denied", "terminated", None]
    assert probe["sent"][-1] == EDITED  # what the model read is the edit, byte for byte
    assert probe["edits"] == [EDITED] and probe["end"] == "answered"
    assert any("receipt edited" in warning for row in probe["warnings"] for warning in row)
    lab.screenshot(lab.output(".wb-run"), "run-ended")
    lab.assert_no_page_errors()


@pytest.mark.browser
def test_a_run_saved_while_it_is_paused_keeps_what_its_card_shows(lab: Lab) -> None:
    # Notebook 09 tells you to leave the run paused between steps: saved then, its card was
    # saved as the one line it showed when its cell ran ("… paused"), with no turn and no call.
    cells = cells_until_the_run()
    card = the_paused_run(lab, cells)
    step(card)  # turn 1: list_notes, and delete_note("draft.txt"), which asks
    card.locator(".wb-approval button.wb-allow").click(timeout=30_000)
    expect(card.locator(".wb-run-receipt textarea")).to_have_count(2, timeout=30_000)
    expect(card.locator(".wb-run-state")).to_have_text("paused", timeout=20_000)

    run_cell = len(cells) - 1
    saved = ""
    for _ in range(30):  # the card sends its saved form at most once a second
        lab.page.keyboard.press("Control+s")
        time.sleep(0.5)
        saved = saved_html(lab.workdir / "test.ipynb", run_cell)
        if saved.count("class='wb-card") >= 2:
            break
    assert "list_notes" in saved and "delete_note" in saved, saved[-1500:]
    assert saved.count("wb-run-turn") >= 1 and "paused" in saved
    notebook = json.loads((lab.workdir / "test.ipynb").read_text())
    views = [
        out
        for out in notebook["cells"][run_cell]["outputs"]
        if "application/vnd.jupyter.widget-view+json" in out.get("data", {})
    ]
    assert views == []  # saved as its static HTML, as a finished card is
    lab.assert_no_page_errors()
