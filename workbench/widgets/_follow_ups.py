"""Cards of calls started from inside another view: a listing click, an edit and retry.

They appear below the view that started them, newest last, and their static forms belong to
that view's, so a saved notebook keeps the whole descent.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import ipywidgets

if TYPE_CHECKING:
    from workbench._call import Call
    from workbench.widgets.call_card import CallCard

Listener = Callable[[], None]


class FollowUps(ipywidgets.VBox):  # type: ignore[misc]
    """A column of call cards (``wb-follow-ups``). ``listeners`` hear when one of them ends,
    which changes the static form of every view around them."""

    def __init__(self) -> None:
        super().__init__()
        self.add_class("wb-follow-ups")
        self.calls: list[Call] = []
        self.cards: list[CallCard] = []
        self.listeners: list[Listener] = []

    def add(self, call: Call) -> CallCard:
        """Show ``call``'s card below the others."""
        from workbench.widgets.call_card import card

        view = card(call)
        self.calls.append(call)
        self.cards.append(view)
        self.children = tuple(self.cards)
        # Listeners hear when the new card ends: its queued form is not worth a redraw.
        view.listeners.append(self._changed)
        return view

    def _changed(self) -> None:
        for listener in list(self.listeners):
            listener()

    def static_html(self) -> str:
        """Every follow-up card's static form."""
        return "".join(view.static_html() for view in self.cards)
