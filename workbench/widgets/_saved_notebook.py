"""What a saved notebook keeps of workbench's views: their static HTML, not their widget models.

A live view needs its kernel: reopened without it, a widget view can only be drawn from widget
state saved in the notebook, which makes the file heavy, draws controls that do nothing (a
Retry with no kernel behind it), and makes ``nbconvert --to html`` fetch a widget renderer from
a CDN, so the exported page is blank offline. Every workbench view also carries its static,
escaped HTML (``text/html``, with its controls drawn disabled and saying they need a kernel).
So when JupyterLab saves a notebook, :func:`saved_form` keeps that HTML in place of the widget
view (the HTML the view kept in its saved model state as it changed, when it kept one: a run
saved before it ended reads as it was at the moment of saving), and keeps widget
state only for the widgets still shown as widgets (other libraries'): reopened, exported or
shown on GitHub, every card reads as it did.

JupyterLab runs it through workbench's server extension (this module), which installing
workbench enables (``jupyter-config/workbench.json``, installed to
``etc/jupyter/jupyter_server_config.d``). The live page is not touched: its widgets stay live
until it is reloaded; running the cell again brings a view back to life.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
WIDGET_STATE = "application/vnd.jupyter.widget-state+json"
MODEL_REFERENCE = "IPY_MODEL_"
OUR_CLASS_PREFIX = "wb-"


def _ours(model: Any) -> bool:
    """True for the model of a workbench view: its root carries a ``wb-`` CSS class."""
    state = model.get("state", {}) if isinstance(model, dict) else {}
    classes = state.get("_dom_classes", []) if isinstance(state, dict) else []
    return any(isinstance(c, str) and c.startswith(OUR_CLASS_PREFIX) for c in classes)


def _saved_html(model: Any) -> str:
    """The static HTML a workbench view kept in its model's state as it changed (``LiveView``
    ``saved_html``), or "" when it kept none."""
    state = model.get("state", {}) if isinstance(model, dict) else {}
    html = state.get("saved_html") if isinstance(state, dict) else None
    return html if isinstance(html, str) else ""


def _references(value: Any) -> Iterator[str]:
    """The model ids ``value`` refers to: ``IPY_MODEL_<id>`` strings, and the widget views
    inside an Output widget's outputs."""
    if isinstance(value, str):
        if value.startswith(MODEL_REFERENCE):
            yield value[len(MODEL_REFERENCE) :]
    elif isinstance(value, list):
        for item in value:
            yield from _references(item)
    elif isinstance(value, dict):
        view = value.get(WIDGET_VIEW)
        if isinstance(view, dict) and isinstance(view.get("model_id"), str):
            yield view["model_id"]
        for item in value.values():
            yield from _references(item)


def _reachable(models: dict[str, Any], roots: list[str]) -> set[str]:
    seen: set[str] = set()
    todo = [root for root in roots if root in models]
    while todo:
        model_id = todo.pop()
        if model_id in seen:
            continue
        seen.add(model_id)
        todo.extend(ref for ref in _references(models[model_id]) if ref in models)
    return seen


def saved_form(notebook: dict[str, Any]) -> dict[str, Any]:
    """Rewrite a notebook's JSON (in place; also returned) into the form worth saving.

    An output showing a widget keeps only its other forms when the widget is a workbench view
    (it has its static ``text/html``), or when the widget's model is not in the saved state (a
    front end could only say "model not found" there; nbconvert makes the same choice). The
    saved widget state keeps only the models that the remaining widget views need, and goes
    when none does.
    """
    metadata = notebook.get("metadata")
    widgets = metadata.get("widgets") if isinstance(metadata, dict) else None
    saved = widgets.get(WIDGET_STATE) if isinstance(widgets, dict) else None
    models = saved.get("state") if isinstance(saved, dict) else None
    if not isinstance(models, dict):
        models = {}
    roots: list[str] = []
    for cell in notebook.get("cells", []):
        for output in cell.get("outputs", []) if isinstance(cell, dict) else []:
            data = output.get("data") if isinstance(output, dict) else None
            if not isinstance(data, dict) or not isinstance(data.get(WIDGET_VIEW), dict):
                continue
            view = data[WIDGET_VIEW]
            model_id = view.get("model_id")
            static = bool(set(data) - {WIDGET_VIEW}) and (
                model_id not in models or ("text/html" in data and _ours(models[model_id]))
            )
            if static:
                now = _saved_html(models.get(model_id))
                if now:  # the view as it was at the moment of saving, not as first shown
                    data["text/html"] = now
                del data[WIDGET_VIEW]
            elif isinstance(model_id, str):
                roots.append(model_id)
    kept = _reachable(models, roots)
    if kept and isinstance(saved, dict):
        saved["state"] = {model_id: models[model_id] for model_id in models if model_id in kept}
    elif isinstance(metadata, dict) and "widgets" in metadata:
        del metadata["widgets"]
    return notebook


def _pre_save(model: dict[str, Any], **_: Any) -> None:
    """JupyterLab's pre-save hook: a notebook is saved in :func:`saved_form`."""
    if model.get("type") == "notebook" and isinstance(model.get("content"), dict):
        saved_form(model["content"])


def _jupyter_server_extension_points() -> list[dict[str, str]]:
    return [{"module": "workbench.widgets._saved_notebook"}]


def _load_jupyter_server_extension(serverapp: Any) -> None:
    serverapp.contents_manager.register_pre_save_hook(_pre_save)
    serverapp.log.info("workbench: notebooks save workbench views as their static HTML")


__all__ = ["saved_form"]
