"""Helpers shared by the widget tests: the XSS payload and a check that it stayed text, and
notebooks as JupyterLab sends them to be saved."""

from __future__ import annotations

import json
import re
from typing import Any

import nbformat

from workbench.widgets._saved_notebook import WIDGET_STATE

# Any tag or event handler that would run if tool text reached the page unescaped.
XSS = '<img src=x onerror="window.__xss=1"><script>window.__xss=2</script>'
LIVE_MARKUP = re.compile(r"<(img|script|iframe|svg)\b|\bon\w+\s*=\s*[\"']?window", re.I)


def assert_escaped(html: str) -> None:
    """The payload is in ``html`` as text, never as live markup."""
    assert "&lt;img src=x onerror=" in html or "&lt;script&gt;" in html, html[:500]
    assert not LIVE_MARKUP.search(html), LIVE_MARKUP.search(html)


def notebook(outputs: list[dict], models: dict[str, dict]) -> dict:
    """A notebook of one code cell with ``outputs``, ``models`` as its saved widget state."""
    cell = nbformat.v4.new_code_cell("x")
    cell.outputs = [nbformat.from_dict(output) for output in outputs]
    nb = nbformat.v4.new_notebook(cells=[cell])
    nb.metadata["widgets"] = {
        WIDGET_STATE: {"state": models, "version_major": 2, "version_minor": 0}
    }
    return json.loads(json.dumps(nb))


def display(data: dict) -> dict:
    """A ``display_data`` output of ``data``."""
    return {"output_type": "display_data", "data": data, "metadata": {}}


def notebook_showing(view: Any) -> dict:
    """A notebook as JupyterLab sends it to be saved: one cell showing ``view``, the view's
    model state (as the page holds it) in the notebook's widget state."""
    state = {"model_name": view._model_name, "state": view.get_state()}
    return notebook([display(view._repr_mimebundle_())], {view.model_id: state})
