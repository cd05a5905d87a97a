"""The teaching notebooks read in both JupyterLab themes: every text run workbench draws in
notebooks 03, 05 and 07 (cards, failure cards, inspectors, history views, receipt diffs and
replays included) has the contrast WCAG AA asks (4.5:1, 3:1 for large text) against the
background it is drawn on, at 1024x768, in JupyterLab Light and JupyterLab Dark. Screenshots of
the views are saved as evidence."""

from __future__ import annotations

import json
import shutil

import pytest

from .harness import REPO, Lab
from .looks import set_theme, summary, text_runs, unreadable

NOTEBOOKS = ("03-receipts.ipynb", "05-failure-gallery.ipynb", "07-real-transcripts.ipynb")
THEMES = ("JupyterLab Light", "JupyterLab Dark")
SHOTS_PER_THEME = 12  # enough to see every kind of view; each one costs a moment


@pytest.mark.browser
@pytest.mark.parametrize("name", NOTEBOOKS)
def test_every_coloured_text_of_the_notebook_reads_in_light_and_dark(lab: Lab, name: str) -> None:
    page = lab.page
    page.set_viewport_size({"width": 1024, "height": 768})
    shutil.copy(REPO / "notebooks" / name, lab.workdir / name)
    lab.notebooks.append((lab.workdir / name).relative_to(lab.server.root).as_posix())
    lab.open(name.removesuffix(".ipynb"), timeout=120)
    lab.run_all(timeout=180)
    lab.wait_for_idle(timeout=120)
    outputs = page.locator(".jp-OutputArea-output:has([class*='wb-'])")
    count = outputs.count()
    assert count >= 5, f"only {count} workbench outputs in {name}"
    problems: dict[str, list[str]] = {}
    try:
        for theme in THEMES:
            set_theme(page, theme)
            runs = [run for index in range(count) for run in text_runs(outputs.nth(index))]
            assert len(runs) > 50, f"{len(runs)} text runs measured in {name}"
            if bad := unreadable(runs):
                problems[theme] = summary(bad)
            for index in range(min(count, SHOTS_PER_THEME)):
                output = outputs.nth(index)
                output.scroll_into_view_if_needed()
                lab.screenshot(output, f"{theme.split()[-1].lower()}-{index:02d}")
    finally:
        set_theme(page, "JupyterLab Light")  # the server's settings are shared by later tests
    assert problems == {}, "text below WCAG AA contrast:\n" + json.dumps(problems, indent=1)
    lab.assert_no_page_errors()
