"""Fixtures for real-browser tests: one JupyterLab for the whole run, one chromium per process
that runs browser tests, a page per test.

Use the ``lab`` fixture in a test marked ``@pytest.mark.browser``::

    @pytest.mark.browser
    def test_card(lab):
        lab.write_notebook(["import workbench as wb", "..."])
        lab.open()
        lab.run_all()
        card = lab.output(".wb-card")
        lab.screenshot(card, "card")
        lab.assert_no_page_errors()
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import BrowserContext, sync_playwright

from . import journeys as journey_steps
from .harness import OUTPUT, Lab, LabServer, launch_chromium, new_lab, safe_name
from .shared_lab import shared_lab


@pytest.fixture(scope="package")
def lab_server() -> LabServer:
    """The run's one JupyterLab on 127.0.0.1 (``shared_lab.py``), answering ``/api/status``,
    with the settings `make lab` and Binder install, shared by every process that runs browser
    tests and stopped once the run ends. Its root holds a copy of ``docs/`` (the Help menu's
    workbench entries open pages there, as from the repository's root) and each test's own
    folder; its log is kept at ``test-output/browser/jupyterlab.log`` for a person to read
    after a failure."""
    return shared_lab()


# Package scope, not session: Playwright's sync API leaves its event loop marked as running in
# the main thread while it is open, which would send every later test's calls to a loop that
# never turns. Closing it with this package keeps the rest of the suite on plain threads.
@pytest.fixture(scope="package")
def browser_context(tmp_path_factory: pytest.TempPathFactory) -> Iterator[BrowserContext]:
    """Debian's headless chromium with a fresh profile, driven by Playwright's sync API."""
    with sync_playwright() as playwright:
        context = launch_chromium(playwright, tmp_path_factory.mktemp("chromium-profile"))
        try:
            yield context
        finally:
            context.close()


def _folder_name(request: pytest.FixtureRequest) -> str:
    """``<module stem>.<test name>``, unique across the test suite, safe as a file name."""
    return safe_name(f"{Path(request.node.path).stem}.{request.node.name}")


@pytest.fixture
def screenshot_dir(request: pytest.FixtureRequest) -> Path:
    """``test-output/screenshots/<module>.<test name>/`` at the repo root, emptied for this test.

    Created only when a screenshot is saved.
    """
    directory = OUTPUT / "screenshots" / _folder_name(request)
    if directory.exists():
        shutil.rmtree(directory)
    return directory


@pytest.fixture
def lab(
    request: pytest.FixtureRequest,
    lab_server: LabServer,
    browser_context: BrowserContext,
    screenshot_dir: Path,
) -> Iterator[Lab]:
    """A fresh page on the shared server and this test's own folder under the server root.

    After the test the page is closed and the kernels of the notebooks it wrote are shut down.
    """
    session = new_lab(browser_context, lab_server, _folder_name(request), screenshot_dir)
    try:
        yield session
    finally:
        session.close()


@pytest.fixture(scope="package")
def journeys(
    lab_server: LabServer, browser_context: BrowserContext, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[dict[str, journey_steps.Journey]]:
    """Every notebook run, used, saved, reopened and exported once in a browser, by notebook
    file name (``journeys.py``): ``test_reopen_browser``, ``test_views_browser`` and
    ``test_contrast_browser`` all judge this one record, so no notebook runs in a browser
    twice."""
    yield from journey_steps.walk(
        lab_server, browser_context, tmp_path_factory.mktemp("journeys-exported")
    )
