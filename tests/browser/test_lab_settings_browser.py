"""`make lab` and Binder show the same JupyterLab: workbench's docs in the Help menu, no news toast,
and nothing warned of on load.

Both install ``binder/overrides.json`` as the environment's JupyterLab settings (the Makefile's
``LAB_SETTINGS`` rule and ``binder/postBuild`` copy that one file), both start the lab with the
user settings of ``binder/user-settings`` (the Help menu's entries: given as the environment's
defaults instead, JupyterLab merges them twice and warns of each one as duplicated on every
load), and both serve the repository's root. The suite's one JupyterLab reads copies of those
files, over a root that holds a copy of ``docs/``: a page opened fresh asks nothing about news,
warns of nothing in its console, and each Help menu entry opens its docs page.
"""

from __future__ import annotations

import json
import re
import time

import pytest
from playwright.sync_api import BrowserContext, expect

from .harness import REPO, LabServer, api

OVERRIDES = REPO / "binder" / "overrides.json"
HELP_MENU = "@jupyterlab/mainmenu-extension/plugin.jupyterlab-settings"
NEWS = re.compile(r"Jupyter news", re.I)


def help_entries() -> list[dict]:
    """The Help menu entries ``binder/user-settings`` adds: each opens a page of ``docs/``."""
    menus = json.loads((REPO / "binder" / "user-settings" / HELP_MENU).read_text())["menus"]
    (help_menu,) = [menu for menu in menus if menu["id"] == "jp-mainmenu-help"]
    return [item for item in help_menu["items"] if item.get("command") == "docmanager:open"]


def test_make_lab_and_binder_install_the_same_settings_file():
    makefile = (REPO / "Makefile").read_text()
    post_build = (REPO / "binder" / "postBuild").read_text()
    assert re.search(
        r"LAB_SETTINGS := \$\(VENV\)/share/jupyter/lab/settings/overrides.json", makefile
    )
    assert re.search(r"\$\(LAB_SETTINGS\): binder/overrides.json", makefile)
    assert 'cp binder/overrides.json "$settings/overrides.json"' in post_build
    assert "share/jupyter/lab/settings" in post_build
    # The Help menu is a user setting in both, never an override (which warns on every load).
    assert "@jupyterlab/mainmenu-extension:plugin" not in json.loads(OVERRIDES.read_text())
    assert 'cp -R binder/user-settings/. "$user_settings/"' in post_build
    assert re.search(r"HELP_MENU := \$\(LAB_USER_SETTINGS\)/" + re.escape(HELP_MENU), makefile)
    assert "JUPYTERLAB_SETTINGS_DIR=$(LAB_USER_SETTINGS)" in makefile
    # Both serve the repository's root, so the entries' paths mean the same file.
    assert "--ServerApp.root_dir=." in (REPO / "scripts" / "serve_lab.py").read_text()
    assert "scripts/serve_lab.py" in makefile
    settings = json.loads(OVERRIDES.read_text())
    assert settings["@jupyterlab/apputils-extension:notification"] == {
        "fetchNews": "false",
        "checkForUpdates": False,
    }
    entries = help_entries()
    assert len(entries) >= 3
    for entry in entries:
        assert (REPO / entry["args"]["path"]).is_file(), entry


@pytest.mark.browser
@pytest.mark.timeout(300)
def test_the_first_screen_asks_nothing_and_help_opens_the_docs(
    lab_server: LabServer, browser_context: BrowserContext
) -> None:
    page = browser_context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(error.message))
    warned: list[str] = []
    page.on("console", lambda message: warned.append(message.text))
    try:
        news = api(
            lab_server, "GET", "/lab/api/settings/@jupyterlab/apputils-extension:notification"
        )
        # The environment's overrides become the settings' defaults.
        assert news["schema"]["properties"]["fetchNews"]["default"] == "false"
        page.goto(f"{lab_server.url}/lab/tree/docs?reset")
        expect(page.locator(".jp-DirListing-content")).to_be_visible(timeout=60_000)
        time.sleep(5)  # JupyterLab asks about news a few seconds after it starts
        assert page.get_by_text(NEWS).count() == 0
        page.locator(".lm-MenuBar-itemLabel", has_text="Help").click()
        labels = page.locator(".lm-Menu-itemLabel").all_inner_texts()
        for entry in help_entries():
            assert entry["args"]["label"] in labels, labels
        page.locator(".lm-Menu-itemLabel", has_text=help_entries()[0]["args"]["label"]).click()
        expect(page.locator(".jp-RenderedMarkdown").first).to_contain_text(
            "See exactly what a language model sees", timeout=30_000
        )
        assert errors == []
        assert [text for text in warned if "is duplicated" in text] == []
    finally:
        page.close()
