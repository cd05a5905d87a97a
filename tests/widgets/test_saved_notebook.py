"""What a saved notebook keeps of workbench's views: their static HTML, and widget state only
for other widgets. The pre-save hook runs in JupyterLab's server, enabled by installing
workbench."""

from __future__ import annotations

import copy
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat

from tests.widgets.support import display, notebook
from workbench.widgets._saved_notebook import WIDGET_STATE, WIDGET_VIEW, _pre_save, saved_form


def view(model_id: str) -> dict:
    return {"version_major": 2, "version_minor": 0, "model_id": model_id}


def model(name: str, **state: object) -> dict:
    return {
        "model_name": name,
        "model_module": "@jupyter-widgets/controls",
        "model_module_version": "2.0.0",
        "state": state,
    }


CARD_HTML = "<div class='wb-card wb-static'>shell_exec</div>"
CARD_MODELS = {
    "card": model("VBoxModel", _dom_classes=["wb-card"], children=["IPY_MODEL_button"]),
    "button": model("ButtonModel", layout="IPY_MODEL_layout", description="Terminate"),
    "layout": model("LayoutModel"),
}


def test_a_workbench_view_is_saved_as_its_html_and_its_state_goes() -> None:
    card = display({"text/plain": "<Call>", "text/html": CARD_HTML, WIDGET_VIEW: view("card")})
    saved = saved_form(notebook([card], copy.deepcopy(CARD_MODELS)))
    (output,) = saved["cells"][0]["outputs"]
    assert output["data"] == {"text/plain": "<Call>", "text/html": CARD_HTML}
    assert "widgets" not in saved["metadata"]
    nbformat.validate(nbformat.from_dict(saved))


def test_a_view_saved_before_it_ended_is_saved_as_it_showed_then() -> None:
    # The cell published the run's card when it was one line; the card kept its form as it
    # changed in its model's state, which JupyterLab saves: that form is the one kept.
    first = "<div class='wb-run wb-static'>… paused</div>"
    now = (
        "<div class='wb-run wb-static'>turn 1 <div class='wb-card wb-static'>list_notes</div></div>"
    )
    run = display({"text/plain": "<Run>", "text/html": first, WIDGET_VIEW: view("run")})
    models = {"run": model("VBoxModel", _dom_classes=["wb-run"], children=[], saved_html=now)}
    saved = saved_form(notebook([run], models))
    (output,) = saved["cells"][0]["outputs"]
    assert output["data"] == {"text/plain": "<Run>", "text/html": now}
    assert "widgets" not in saved["metadata"]


def test_a_view_that_kept_no_form_is_saved_as_published() -> None:
    card = display({"text/plain": "<Call>", "text/html": CARD_HTML, WIDGET_VIEW: view("card")})
    models = copy.deepcopy(CARD_MODELS)
    models["card"]["state"]["saved_html"] = ""
    (output,) = saved_form(notebook([card], models))["cells"][0]["outputs"]
    assert output["data"]["text/html"] == CARD_HTML


def test_other_widgets_keep_their_view_and_the_state_they_need() -> None:
    models = {
        **copy.deepcopy(CARD_MODELS),
        "slider": model("IntSliderModel", layout="IPY_MODEL_slider-layout", value=3),
        "slider-layout": model("LayoutModel"),
        "orphan": model("HTMLModel", value="made, never shown"),
    }
    outputs = [
        display({"text/plain": "<Call>", "text/html": CARD_HTML, WIDGET_VIEW: view("card")}),
        display({"text/plain": "IntSlider(value=3)", WIDGET_VIEW: view("slider")}),
    ]
    saved = saved_form(notebook(outputs, models))
    card, slider = saved["cells"][0]["outputs"]
    assert WIDGET_VIEW not in card["data"]
    assert slider["data"][WIDGET_VIEW] == view("slider")
    kept = saved["metadata"]["widgets"][WIDGET_STATE]["state"]
    assert sorted(kept) == ["slider", "slider-layout"]


def test_a_view_whose_model_was_not_saved_keeps_its_other_forms() -> None:
    # What JupyterLab saves without saveState: reopened, the view could only fail.
    outputs = [
        display({"text/plain": "IntSlider(value=3)", WIDGET_VIEW: view("gone")}),
        display({WIDGET_VIEW: view("alone")}),  # nothing else to show: left as it is
    ]
    nb = notebook(outputs, {})
    del nb["metadata"]["widgets"]
    first, second = saved_form(nb)["cells"][0]["outputs"]
    assert first["data"] == {"text/plain": "IntSlider(value=3)"}
    assert second["data"] == {WIDGET_VIEW: view("alone")}


def test_widgets_shown_inside_an_output_widget_keep_their_state() -> None:
    models = {
        "out": model(
            "OutputModel",
            outputs=[{"output_type": "display_data", "data": {WIDGET_VIEW: view("inner")}}],
        ),
        "inner": model("IntSliderModel", value=1),
    }
    saved = saved_form(notebook([display({WIDGET_VIEW: view("out")})], models))
    assert sorted(saved["metadata"]["widgets"][WIDGET_STATE]["state"]) == ["inner", "out"]


def test_the_pre_save_hook_rewrites_notebooks_only() -> None:
    card = display({"text/plain": "<Call>", "text/html": CARD_HTML, WIDGET_VIEW: view("card")})
    model_ = {"type": "notebook", "content": notebook([card], copy.deepcopy(CARD_MODELS))}
    _pre_save(model=model_, path="x.ipynb")
    assert WIDGET_VIEW not in model_["content"]["cells"][0]["outputs"][0]["data"]
    text = {"type": "file", "content": "IPY_MODEL_x", "format": "text"}
    _pre_save(model=text, path="x.txt")
    assert text["content"] == "IPY_MODEL_x"


ROOT = Path(__file__).resolve().parents[2]
CONFIG = ROOT / "jupyter-config" / "jupyter_server_config.d" / "workbench.json"


def test_its_config_enables_workbench_s_jupyter_server_extension(tmp_path: Path) -> None:
    # Installed by a wheel (pyproject's data-files), by `make lab` and by Binder's postBuild.
    assert str(CONFIG.relative_to(ROOT)) in (ROOT / "pyproject.toml").read_text()
    assert str(CONFIG.relative_to(ROOT)) in (ROOT / "Makefile").read_text()
    assert str(CONFIG.relative_to(ROOT)) in (ROOT / "binder" / "postBuild").read_text()
    config_dir = tmp_path / "config"
    (config_dir / "jupyter_server_config.d").mkdir(parents=True)
    shutil.copy(CONFIG, config_dir / "jupyter_server_config.d" / CONFIG.name)
    result = subprocess.run(
        [sys.executable, "-m", "jupyter", "server", "extension", "list"],
        capture_output=True,
        text=True,
        env={**os.environ, "HOME": str(tmp_path), "JUPYTER_CONFIG_DIR": str(config_dir)},
        timeout=120,
    )
    listing = re.sub(r"\x1b\[[0-9;]*m", "", result.stdout + result.stderr)
    assert "workbench.widgets._saved_notebook enabled" in listing, listing
    assert re.search(r"workbench\.widgets\._saved_notebook\s+OK", listing), listing
