"""The teaching notebooks read in both JupyterLab themes: every text run workbench draws in
notebooks 03, 05 and 07 (cards, failure cards, inspectors, history views, receipt diffs and
replays included) has the contrast WCAG AA asks (4.5:1, 3:1 for large text) against the
background it is drawn on, at 1024x768, in JupyterLab Light and JupyterLab Dark.

The notebooks are not run again for this: each notebook's one journey through JupyterLab (the
``journeys`` fixture, ``journeys.py``) measures its live page, after the run and the person's
clicks, in both themes, and photographs its views in each (``test-output/screenshots/
notebook-journeys``: ``*-live-*`` light, ``*-live-dark-*`` dark)."""

from __future__ import annotations

import json

import pytest

from .journeys import CONTRASTED, Journey
from .looks import THEMES

# The fixture runs every notebook before the first test: its time counts against that test.
pytestmark = pytest.mark.timeout(1500)

NOTEBOOKS = tuple(f"{stem}.ipynb" for stem in CONTRASTED)


@pytest.mark.browser
@pytest.mark.parametrize("name", NOTEBOOKS)
def test_every_coloured_text_of_the_notebook_reads_in_light_and_dark(
    journeys: dict[str, Journey], name: str
) -> None:
    contrast = journeys[name].contrast
    assert contrast is not None, f"{name}'s live page was not measured"
    assert contrast.outputs >= 5, f"only {contrast.outputs} workbench outputs in {name}"
    for theme in THEMES:
        runs = contrast.runs.get(theme, 0)
        assert runs > 50, f"{runs} text runs measured in {name} in {theme}"
    assert contrast.problems == {}, "text below WCAG AA contrast:\n" + json.dumps(
        contrast.problems, indent=1
    )
    assert contrast.errors == [], f"uncaught JavaScript errors in the page: {contrast.errors}"
