"""Every view bounded, readable at 1024 x 768, and the same saved as live.

The notebooks that show each view (01 the registry browser, 03 and 07 the history, 04 and 07
the compaction view, 05 the failure cards, 07 Replay, 09 the run cards) run in JupyterLab in a
1024 x 768 window, are used as a person would (a compaction row picked, a failure retried, a
registry tab opened), saved, reopened without their kernel, and exported by nbconvert and read
offline. At each step the page is measured with bounding boxes: how tall each view's output is,
what runs past an output's edge or is cut inside it, and how the saved tables lay out against
the live ones. Each notebook runs once in the browser for this module and
``test_reopen_browser`` together (the ``journeys`` fixture, ``journeys.py``); screenshots of
every view, live and exported, go to ``test-output/screenshots/notebook-journeys``.
"""

from __future__ import annotations

import re
from typing import Any

import pytest

from .journeys import PICKED_ROW, VIEWED, Journey, Seen
from .journeys import step_of as journey_step

# The fixture runs every notebook before the first test: its time counts against that test.
pytestmark = pytest.mark.timeout(1500)

# "About one screen": the window is 768 px tall; a view's output may not be taller unless the
# person opens something in it.
SCREEN_PX = 768
NOTEBOOKS = VIEWED


def step_of(journeys: dict[str, Journey], name: str, step: str) -> Seen:
    """What notebook ``name`` (its file's stem) showed at ``step``."""
    return journey_step(journey_of(journeys, name), step)


def journey_of(journeys: dict[str, Journey], name: str) -> Journey:
    return journeys[f"{name}.ipynb"]


STEPS = ("live", "reopened", "exported")


def _views(name: str, step: str, journeys: dict[str, Journey]) -> list[dict[str, Any]]:
    return step_of(journeys, name, step).outputs


@pytest.mark.browser
@pytest.mark.parametrize("step", STEPS)
@pytest.mark.parametrize("name", NOTEBOOKS)
def test_every_view_output_is_at_most_a_screen_tall(
    journeys: dict[str, Journey], name: str, step: str
) -> None:
    outputs = _views(name, step, journeys)
    assert outputs, f"{name} showed no workbench view {step}"
    # A history view with a call selected (its inspector open) is held to one screen too.
    tall = [(o["view"], o["height"], o["opened"]) for o in outputs if o["height"] > SCREEN_PX]
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
    live = step_of(journeys, name, "live").tables
    saved = step_of(journeys, name, step).tables
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
    seen = step_of(journeys, "04-compaction", step)
    (board,) = [t for t in seen.tables if t["kind"] == "compaction"]
    assert board["selected"] == [str(PICKED_ROW)]
    assert f"#{PICKED_ROW} " in seen.text


@pytest.mark.browser
@pytest.mark.parametrize("step", ("live", "reopened", "exported"))
def test_a_finished_run_card_shows_all_its_live_card_showed(
    journeys: dict[str, Journey], step: str
) -> None:
    journey = journey_of(journeys, "09-meet-a-model")
    paused = journey.paused_run
    assert len(paused) >= 5 and all(card["id"] for card in paused)
    assert any("approved by you" in " ".join(card["pieces"]) for card in paused)
    assert any(re.search(r"receipt · [\d,]+ chars", " ".join(c["pieces"])) for c in paused)
    finished = {card["id"]: card for card in journey_step(journey, step).run_cards}
    missing = {
        card["id"]: [piece for piece in card["pieces"] if piece not in finished[card["id"]]["text"]]
        for card in paused
        if card["id"] in finished
    }
    assert [card["id"] for card in paused if card["id"] not in finished] == []
    assert {call_id: lost for call_id, lost in missing.items() if lost} == {}
    # Arguments that came as a JSON string (every OpenAI call's) are not a coercion to note.
    assert "JSON string parsed" not in journey_step(journey, step).run_text


@pytest.mark.browser
@pytest.mark.parametrize("step", ("reopened", "exported"))
def test_a_retry_from_a_standalone_failure_card_is_saved(
    journeys: dict[str, Journey], step: str
) -> None:
    journey = journey_of(journeys, "05-failure-gallery")
    assert journey.retried_id
    assert journey.retried_id in journey.saved_text
    assert journey.retried_id in journey_step(journey, step).failure_follow_up_ids


@pytest.mark.browser
@pytest.mark.parametrize("step", ("reopened", "exported"))
def test_a_saved_registry_shows_each_triangle_beside_its_tool(
    journeys: dict[str, Journey], step: str
) -> None:
    summaries = step_of(journeys, "01-author-a-tool", step).tool_summaries
    assert summaries
    alone = [s for s in summaries if s["summary"] > s["header"] + 4]
    assert alone == []


@pytest.mark.browser
@pytest.mark.parametrize("step", STEPS)
def test_a_replay_says_what_happened_in_a_sentence(journeys: dict[str, Journey], step: str) -> None:
    seen = step_of(journeys, "07-real-transcripts", step)
    assert seen.replay_titles
    for title in seen.replay_titles:
        assert re.fullmatch(r"Replayed \S+ \S+ with .+ as \S+: it .+\.", title), title
    assert "<Replay of" not in seen.text
    saved = journey_of(journeys, "07-real-transcripts").saved_text
    assert "<Replay of" not in saved and "&lt;Replay of" not in saved


@pytest.mark.browser
@pytest.mark.parametrize("step", STEPS)
@pytest.mark.parametrize("name", ("03-receipts", "07-real-transcripts"))
def test_a_history_tables_summary_starts_in_the_first_half_of_a_1024_px_window(
    journeys: dict[str, Journey], name: str, step: str
) -> None:
    # summary_text is what a person reads a row by: it comes right after the call and its tool.
    tables = [t for t in step_of(journeys, name, step).tables if t["kind"] == "history"]
    assert tables, f"{name} showed no history table {step}"
    for table in tables:
        at = table["lefts"][table["heads"].index("summary_text")]
        assert at <= 1024 // 2 - 100, (table["heads"], table["lefts"])
