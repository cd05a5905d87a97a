"""What importing the widgets does: the core's views registered, and the names the package
exports, imported on first use so ``import workbench.widgets`` stays cheap."""

from __future__ import annotations

from typing import Any

EXPORTS = {
    "ApprovalPrompt": "approval",
    "CallCard": "call_card",
    "CompactionView": "compaction",
    "CustomToolForm": "custom",
    "EnvelopeInspector": "inspector",
    "FailureCard": "failure",
    "HistoryView": "history",
    "ListingTree": "listing",
    "OfferForm": "offer_form",
    "RegistryBrowser": "registry_browser",
    "RunCard": "run_card",
    "card": "call_card",
    "result_view": "results",
}
"""Each public widget name and the module that defines it."""


def register_views() -> None:
    """Register every view of this package with the core (a card, the history, the registry,
    a run, and each family's views)."""
    from workbench import _views

    def card(call: Any) -> Any:
        from workbench.widgets.call_card import displayed_card

        return displayed_card(call)

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
