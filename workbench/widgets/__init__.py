"""Widgets: views over the core, for Jupyter (ipywidgets 8, anywidget where a view needs JS).

Every widget draws something the core already has (a Call, an Envelope, a History, a
Compaction, a Registry) and every button calls a core method that tests cover without a browser.
Each widget also renders as static HTML, so a saved notebook shows the final state on nbconvert
and GitHub. Names are imported lazily so ``import workbench.widgets`` stays cheap.

Importing this package registers its views with the core (``workbench._views``): a Call's card,
the history and registry views, a model run's card, and every family's result, compact and
static views. The core finds them there and never imports this package.
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
    "RunCard": "run_card",
    "card": "call_card",
    "result_view": "results",
}

__all__ = sorted(_EXPORTS)


def _register_views() -> None:
    from workbench import _views

    def card(call: Any) -> Any:
        from workbench.widgets.call_card import card

        return card(call)

    def history(history: Any) -> Any:
        from workbench.widgets.history import HistoryView

        return HistoryView(history)

    def registry(registry: Any) -> Any:
        from workbench.widgets.registry_browser import RegistryBrowser

        return RegistryBrowser(registry)

    def run(run: Any) -> Any:
        from workbench.widgets.run_card import run_card

        return run_card(run)

    _views.register("card", card)
    _views.register("run", run)
    _views.register("history", history)
    _views.register("registry", registry)
    from workbench.families import get_family
    from workbench.widgets.results import family_views

    for name, views in family_views().items():
        get_family(name)  # KeyError for a family the core does not know
        _views.register_family(name, views)


_register_views()


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'workbench.widgets' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"workbench.widgets.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return __all__
