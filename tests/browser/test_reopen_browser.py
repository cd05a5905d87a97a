"""A notebook is a document: every notebook, run in JupyterLab, saved, reopened without the
kernel that made its cards, and exported by ``nbconvert --to html`` and read offline, shows
every card as it was, with no broken widget, no page error and no control that silently does
nothing.

The notebooks are ``notebooks/*.ipynb`` (a new one is checked without an edit here). Each runs
once in the browser for this module and ``test_views_browser`` together (the ``journeys``
fixture, ``journeys.py``): a few at a time, each in its own page of the one JupyterLab, and
exported by one nbconvert. The live page a saved notebook is compared with is the one read just
before saving, after the clicks a person made in it (a retry in notebook 05 adds its card).
"""

from __future__ import annotations

import pytest

from .journeys import BROKEN, NOTEBOOKS, Journey

# The fixture runs every notebook before the first test: its time counts against that test.
pytestmark = pytest.mark.timeout(1500)
# What a saved notebook may weigh: its text, plots and static cards, no widget state. Each card
# carries its stylesheet (about 10 KB since status colours are mixed with the theme's text
# colour): notebook 05, 22 cards, weighs about 290 KB. (Notebook 02 weighed 361 KB when every
# widget's state was saved with it; about 90 KB now.)
MAX_SAVED_BYTES = 320_000


NAMES = [path.name for path in NOTEBOOKS]


@pytest.mark.browser
@pytest.mark.parametrize("name", NAMES)
def test_a_notebook_runs_with_no_page_error_and_no_broken_widget(
    journeys: dict[str, Journey], name: str
) -> None:
    live = journeys[name].live
    assert live is not None
    assert live.errors == []
    assert live.widget_messages == []
    assert live.broken == dict.fromkeys(BROKEN, 0)


@pytest.mark.browser
@pytest.mark.parametrize("name", NAMES)
def test_a_saved_notebook_reopens_with_every_card_and_no_silent_control(
    journeys: dict[str, Journey], name: str
) -> None:
    journey = journeys[name]
    live, reopened = journey.live, journey.reopened
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
    journeys: dict[str, Journey], name: str
) -> None:
    journey = journeys[name]
    live, exported = journey.live, journey.exported
    assert live is not None and exported is not None
    assert exported.cards == live.cards
    assert exported.views == live.views
    assert exported.errors == []
    assert exported.live_controls == []


@pytest.mark.browser
@pytest.mark.parametrize("name", NAMES)
def test_a_saved_notebook_keeps_no_widget_state_and_stays_small(
    journeys: dict[str, Journey], name: str
) -> None:
    journey = journeys[name]
    assert "widgets" not in journey.saved["metadata"]
    assert journey.saved_bytes <= MAX_SAVED_BYTES


@pytest.mark.browser
def test_the_registry_browser_follows_its_registry_after_run_all(
    journeys: dict[str, Journey],
) -> None:
    # Notebook 06 keeps open the connection whose tools its browser lists: at the end of Run
    # All the browser still lists them (it once read "No tools registered").
    (text,) = journeys["06-mcp.ipynb"].registry_text
    assert "No tools registered." not in text
    assert "read_text_file" in text or "file_read" in text, text[:500]
