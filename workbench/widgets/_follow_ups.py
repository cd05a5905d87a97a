"""Calls started from inside another view: a listing click, an edit and retry.

They appear below the view that started them, newest last, and their static forms belong to
that view's, so a saved notebook keeps the whole descent. A retry shows its whole card (it is
a new attempt at the same call); an entry opened from a listing shows one row, its result
under it, so a tree of clicks does not become cards nested in cards.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TYPE_CHECKING

import ipywidgets

from workbench.runtime import TERMINAL_EVENTS, Event
from workbench.widgets._card_html import STATE_LABELS, one_line
from workbench.widgets._html import badge, esc

if TYPE_CHECKING:
    from workbench.runtime import Call
    from workbench.widgets.call_card import CallCard

Listener = Callable[[], None]


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
    from workbench.families import family_of
    from workbench.widgets.results import family_views

    family = family_of(envelope).name
    views = family_views()[family]
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
        self.views: list[CallCard | FollowUpRow] = []
        self.listeners: list[Listener] = []

    @property
    def cards(self) -> list[CallCard]:
        """The whole cards shown (none when ``rows``)."""
        from workbench.widgets.call_card import CallCard

        return [view for view in self.views if isinstance(view, CallCard)]

    def add(self, call: Call) -> CallCard | FollowUpRow:
        """Show ``call`` below the others, as a row or as its card."""
        view: CallCard | FollowUpRow
        if self.rows:
            view = FollowUpRow(call, self._changed)
        else:
            from workbench.widgets.call_card import card

            view = card(call)
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
