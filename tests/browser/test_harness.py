"""The harness proven in a real JupyterLab: widgets render, stream, and take clicks mid-stream."""

from __future__ import annotations

import json
import re
import sys
import time

import pytest
from playwright.sync_api import expect

from .harness import LAB_SETTINGS, REPO, Lab, api, ours, probe_source
from .looks import THEMES, contrast_in_both_themes

BUTTON_CELL = """\
import json, os
import ipywidgets as widgets

button = widgets.Button(description="Probe")
button.add_class("wb-probe")

def on_click(b):
    # What the kernel saw at the moment of the click, written atomically for the test to read.
    state = {"task_done": task.done(), "label": label.value}
    with open("clicked.json.tmp", "w") as f:
        json.dump(state, f)
    os.replace("clicked.json.tmp", "clicked.json")
    b.description = "Clicked"

button.on_click(on_click)
button
"""

TICKER_CELL = """\
import asyncio

label = widgets.Label("tick 0")
label.add_class("wb-ticker")

async def tick():
    for i in range(1, 201):
        await asyncio.sleep(0.1)
        label.value = f"tick {i}"

task = asyncio.ensure_future(tick())
label
"""

# Three pale runs and one black run, on a white background of their own in either theme.
PALE_CELL = """\
from IPython.display import HTML
pale = " ".join(f"<span>pale {i}</span>" for i in range(3))
dark = '<b style="color:#000">dark</b>'
HTML(f'<div class="wb-probe" style="background:#fff;color:#eee">{pale} {dark}</div>')
"""

TICK = re.compile(r"^tick (\d+)$")


def tick_of(text: str) -> int:
    match = TICK.match(text.strip())
    assert match, f"unexpected label text {text!r}"
    return int(match.group(1))


@pytest.mark.browser
def test_server_uses_isolated_settings(lab: Lab) -> None:
    """The test server reads our settings (no news toast, every cell rendered)."""
    for plugin_id, values in LAB_SETTINGS.items():
        settings = api(lab.server, "GET", f"/lab/api/settings/{plugin_id}")["settings"]
        for key, value in values.items():
            assert settings.get(key) == value, (plugin_id, key, settings)


@pytest.mark.browser
def test_kernel_is_this_python_and_run_cell_runs_one_cell(lab: Lab) -> None:
    """The kernel runs ``sys.executable`` in the isolated HOME and finds the editable workbench."""
    kernel_probe = "import importlib.util, os, sys\n" + probe_source(
        "kernel.json",
        "{'executable': sys.executable, 'home': os.environ['HOME'],"
        " 'workbench': importlib.util.find_spec('workbench').origin}",
    )
    lab.write_notebook([probe_source("first.json", "1"), kernel_probe])
    lab.open()
    lab.run_cell(1)

    kernel = json.loads(lab.wait_for_file("kernel.json"))
    assert kernel["executable"] == sys.executable
    assert kernel["home"] == str(lab.server.home)
    assert kernel["workbench"] == str(REPO / "workbench" / "__init__.py")
    assert not (lab.workdir / "first.json").exists(), "only cell 1 should have run"
    lab.assert_no_page_errors()


@pytest.mark.browser
def test_button_click_is_handled_while_a_task_streams(lab: Lab) -> None:
    """A click mid-stream reaches the kernel and the page within seconds; the stream goes on."""
    probe = probe_source("probe.json", "{'cwd': os.getcwd()}")
    lab.write_notebook([BUTTON_CELL, TICKER_CELL, probe])
    lab.open()
    lab.run_all()

    seen = json.loads(lab.wait_for_file("probe.json"))
    assert seen["cwd"] == str(lab.workdir)

    label = lab.output(".wb-ticker")
    button = lab.output("button.wb-probe")
    expect(button).to_have_text("Probe")

    expect(label).not_to_have_text("tick 0", timeout=10_000)
    first = tick_of(label.inner_text())
    expect(label).not_to_have_text(f"tick {first}", timeout=5_000)
    before_click = tick_of(label.inner_text())
    assert before_click > first, "the label should stream forward"
    lab.screenshot(label, "ticker-streaming")

    started = time.monotonic()
    button.click()
    expect(button).to_have_text("Clicked", timeout=5_000)
    clicked = json.loads(lab.wait_for_file("clicked.json", timeout=5))
    latency = time.monotonic() - started
    assert latency < 5, f"click took {latency:.2f}s to come back"
    assert clicked["task_done"] is False, "the click must be handled while the task runs"
    assert tick_of(clicked["label"]) >= before_click

    after_click = tick_of(label.inner_text())
    expect(label).not_to_have_text(f"tick {after_click}", timeout=5_000)
    assert tick_of(label.inner_text()) < 200, "the stream should still be running"

    lab.screenshot(button, "button-clicked")
    lab.screenshot(lab.page.locator(".jp-NotebookPanel:visible").first, "notebook")
    for name in ("ticker-streaming", "button-clicked", "notebook"):
        assert (lab.screenshots / f"{name}.png").stat().st_size > 0
    lab.assert_no_page_errors()


@pytest.mark.browser
def test_the_contrast_measurement_finds_pale_text_in_both_themes_and_leaves_light(lab: Lab) -> None:
    """What the notebook journeys measure for ``test_contrast_browser``: every workbench text run
    in each theme, the pale ones reported, a photograph after each theme, the page left light."""
    lab.write_notebook([PALE_CELL])
    lab.open()
    lab.run_all()
    lab.output(".wb-probe")
    photographed: list[str] = []
    contrast = contrast_in_both_themes(lab.page, lambda: list(lab.errors), photographed.append)
    assert contrast.outputs == 1
    assert contrast.runs == dict.fromkeys(THEMES, 4)
    for theme in THEMES:
        (line,) = contrast.problems[theme]
        assert line.startswith("3x span in wb-probe (rgb(238, 238, 238))"), line
    assert photographed == list(THEMES)
    assert lab.page.evaluate("document.body.dataset.jpThemeName") == "JupyterLab Light"
    assert contrast.errors == []


def test_only_the_box_disposal_race_is_set_aside_from_console_errors():
    """The two lines ipywidgets logs when a box view is disposed mid-build are set aside; an
    anywidget that failed, a missing model or any other error is kept."""
    race = [
        "Error: Could not add child view to box\n    at http://127.0.0.1:1/lab/170.js:1:1648\n"
        "    at async Promise.all (index 0)",
        "TypeError: Cannot read properties of null (reading 'processLuminoMessage')\n    at z",
    ]
    kept = [
        "Error: [anywidget] Failed to initialize model.",
        "Error: Could not create a model.",
        "TypeError: Cannot read properties of null (reading 'widgets')",
        "Uncaught Error: Could not add child view to box",
    ]
    assert ours(race + kept) == kept
