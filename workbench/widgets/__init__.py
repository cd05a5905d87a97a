"""Widgets: views over the core, for Jupyter (ipywidgets 8, anywidget where a view needs JS).

Every widget draws something the core already has (a Call, an Envelope, a History, a
Compaction, a Registry) and every button calls a core method that tests cover without a browser.
Each widget also renders as static HTML, so a saved notebook shows the final state on nbconvert
and GitHub. Names are imported lazily so ``import workbench.widgets`` stays cheap.

Importing this package registers its views with the core (``workbench._views``): a Call's card,
the history and registry views, a model run's card, and every family's result, compact and
static views. The core finds them there and never imports this package.
"""

import importlib as _importlib
from typing import TYPE_CHECKING as _TYPE_CHECKING

from workbench.widgets._registration import EXPORTS as _EXPORTS
from workbench.widgets._registration import register_views as _register_views

if _TYPE_CHECKING:  # the names as type checkers and the docs' reference read them
    from workbench.widgets.approval import ApprovalPrompt as ApprovalPrompt
    from workbench.widgets.call_card import CallCard as CallCard
    from workbench.widgets.call_card import card as card
    from workbench.widgets.compaction import CompactionView as CompactionView
    from workbench.widgets.custom import CustomToolForm as CustomToolForm
    from workbench.widgets.failure import FailureCard as FailureCard
    from workbench.widgets.history import HistoryView as HistoryView
    from workbench.widgets.inspector import EnvelopeInspector as EnvelopeInspector
    from workbench.widgets.listing import ListingTree as ListingTree
    from workbench.widgets.offer_form import OfferForm as OfferForm
    from workbench.widgets.registry_browser import RegistryBrowser as RegistryBrowser
    from workbench.widgets.results import result_view as result_view
    from workbench.widgets.run_card import RunCard as RunCard

__all__ = sorted(_EXPORTS)

_register_views()


def __getattr__(name: str) -> object:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'workbench.widgets' has no attribute {name!r}")
    value = getattr(_importlib.import_module(f"workbench.widgets.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return __all__
