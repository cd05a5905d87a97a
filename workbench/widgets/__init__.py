"""Widgets: views over the core, for Jupyter (ipywidgets 8, anywidget where a view needs JS).

Every widget draws something the core already has (a Call, an Envelope, a History, a
Compaction, a Registry) and every button calls a core method that tests cover without a browser.
Each widget also renders as static HTML, so a saved notebook shows the final state on nbconvert
and GitHub. Names are imported lazily so ``import workbench.widgets`` stays cheap.
"""

from __future__ import annotations

import importlib
from typing import Any

_EXPORTS = {
    "ApprovalPrompt": "approval",
    "CallCard": "call_card",
    "CompactionView": "compaction",
    "CustomToolForm": "custom",
    "EnvelopeInspector": "inspector",
    "FailureCard": "failure",
    "HistoryView": "history",
    "ListingTree": "listing",
    "RegistryBrowser": "registry_browser",
    "card": "call_card",
    "result_view": "results",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'workbench.widgets' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"workbench.widgets.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return __all__
