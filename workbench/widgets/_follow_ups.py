"""Calls started from inside another view: a listing click, an edit and retry.

They appear below the view that started them, newest last, and their static forms belong to
that view's, so a saved notebook keeps the whole descent. A retry shows its whole card (it is
a new attempt at the same call); an entry opened from a listing shows one row, its result
under it, so a tree of clicks does not become cards nested in cards.

A card shows a failure card, which shows its retries' cards. The failure card and the listing
tree import this module, and a card reaches them through the result views, so this module
imports neither the card nor the result views: it finds a call's card and a family's views
where the package registered them with the core (``workbench._views``, see the package's
``__init__``), where a Call finds its card too.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Protocol

import ipywidgets

from workbench import _views
from workbench.families import family_of
from workbench.runtime import TERMINAL_EVENTS, Event
from workbench.widgets._card_html import STATE_LABELS, one_line
from workbench.widgets._html import badge, esc

if TYPE_CHECKING:
    from workbench.runtime import Call

Listener = Callable[[], None]


class Card(Protocol):
    """What a column needs of a call's card: its static form, listeners that hear when its
    call ends, and to be made whole (it is shown as a widget, inside the column)."""

    listeners: list[Listener]

    def static_html(self) -> str: ...

    def make_whole(self) -> None: ...


def card_of(call: Call) -> Card:
    """The card of ``call``: the view registered for ``"card"`` (one card per call)."""
    factory = _views.view("card")
    if factory is None:
        raise LookupError("no card view is registered")
    card: Card = factory(call)
    card.make_whole()  # a column shows it as a widget, result and output included
    return card


def registered_views(family: str) -> _views.FamilyViews:
    """The views registered for ``family`` (``KeyError`` for none)."""
    views = _views.family_views(family)
    if views is None:
        raise KeyError(family)
    return views


def row_html(call: Call) -> str:
    """One follow-up call as a row: while it runs, its state and arguments; once it ended, its
    family's compact line, and (unless it is a listing, whose entries join the tree above) its
    result's static form."""
    envelope = call.envelope
    if envelope is None:
        state = call.state
        label = badge(STATE_LABELS.get(state, state), "wb-state", f"wb-state-{state}")
        return (
            f"<div class='wb-follow-up'>{label} "
            f"<b>{esc(call.tool_name)}</b> <code>{esc(one_line(call.raw_args))}</code></div>"
        )
    family = family_of(envelope).name
    views = registered_views(family)
    body = "" if family == "listing" else views.static(envelope)
    return f"<div class='wb-follow-up'>{views.compact(envelope)}{body}</div>"


class FollowUpRow(ipywidgets.HTML):  # type: ignore[misc]
    """A follow-up call as one row (``wb-follow-up``), redrawn when the call ends."""

    def __init__(self, call: Call, on_end: Listener) -> None:
        super().__init__(row_html(call))
        self.call = call
        self._on_end = on_end
        self._lock = threading.Lock()
        self._ended = False
        self._unsubscribe = call.subscribe(self._on_event)
        if call.envelope is not None:  # it ended before we subscribed
            self._finish()

    def _on_event(self, event: Event) -> None:
        if event.type in TERMINAL_EVENTS:
            self._finish()

    def _finish(self) -> None:
        with self._lock:
            if self._ended:
                return
            self._ended = True
        self._unsubscribe()
        self.value = row_html(self.call)
        self._on_end()

    def static_html(self) -> str:
        """The row as escaped HTML."""
        return str(self.value)


class FollowUps(ipywidgets.VBox):  # type: ignore[misc]
    """A column of follow-up calls (``wb-follow-ups``): whole cards, or one row each when
    ``rows``. ``listeners`` hear when one of them ends, which changes the static form of every
    view around them."""

    def __init__(self, *, rows: bool = False) -> None:
        super().__init__()
        self.add_class("wb-follow-ups")
        self.rows = rows
        self.calls: list[Call] = []
        self.views: list[Card | FollowUpRow] = []
        self.listeners: list[Listener] = []

    @property
    def cards(self) -> list[Card]:
        """The whole cards shown (none when ``rows``)."""
        return [view for view in self.views if not isinstance(view, FollowUpRow)]

    def add(self, call: Call) -> Card | FollowUpRow:
        """Show ``call`` below the others, as a row or as its card."""
        view: Card | FollowUpRow
        if self.rows:
            view = FollowUpRow(call, self._changed)
        else:
            view = card_of(call)
            # Listeners hear when the new card ends: its queued form is not worth a redraw.
            view.listeners.append(self._changed)
        self.calls.append(call)
        self.views.append(view)
        self.children = tuple(self.views)
        if call.envelope is not None:
            self._changed()  # it ended before it was listed here: its end is now
        return view

    def _changed(self) -> None:
        for listener in list(self.listeners):
            listener()

    def static_html(self) -> str:
        """Every follow-up's static form."""
        return "".join(view.static_html() for view in self.views)
