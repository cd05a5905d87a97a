"""The listing view: a directory's entries as a tree that opens what you click.

Clicking an entry (a directory or a file) starts a new ``file_read`` call on that entry's
``path`` through the same registry, exactly the field copy a model would make, and the new
call's row (its result once it ends) appears below the tree. When a directory's call returns
a listing, its entries appear under it in the tree, expandable and clickable in turn.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anywidget
import ipywidgets
import traitlets

from workbench.envelope import Envelope
from workbench.families.listing import is_listing_result
from workbench.runtime import TERMINAL_EVENTS, Event
from workbench.widgets._envelope_html import cut_note, footer_html
from workbench.widgets._follow_ups import FollowUps
from workbench.widgets._html import esc, shared_style
from workbench.widgets._kernel_controls import NEEDS_KERNEL
from workbench.widgets._view import LiveView

if TYPE_CHECKING:
    from workbench.runtime import Call, Host

OPENER = "file_read"
Entry = dict[str, str]


def entries_of(result: Mapping[str, Any]) -> list[Entry]:
    """A listing result's entries reduced to their ``name``, ``path`` and ``type`` strings."""
    return [
        {
            "name": str(entry.get("name") or entry["path"]),
            "path": str(entry["path"]),
            "type": str(entry.get("type") or "file"),
        }
        for entry in result["entries"]
    ]


def tree_html(
    entries: list[Entry], children: Mapping[str, list[Entry]], expanded: set[str] | None = None
) -> str:
    """Entries as nested lists; a directory whose entries are known shows them below it."""
    expanded = set(children) if expanded is None else expanded
    items = []
    for entry in entries:
        directory = entry["type"] == "directory"
        name = esc(entry["name"] + ("/" if directory else ""))
        inner = ""
        if entry["path"] in children and entry["path"] in expanded:
            inner = tree_html(children[entry["path"]], children, expanded - {entry["path"]})
        items.append(
            f"<li class='wb-tree-{esc(entry['type'])}' title='{esc(entry['path'])}'>"
            f"<code>{name}</code>{inner}</li>"
        )
    return f"<ul>{''.join(items)}</ul>"


def _summary_html(envelope: Envelope) -> str:
    result = envelope.result
    parts = [f"<div class='wb-summary'>{esc(envelope.summary_text)}</div>"]
    if result.get("truncated"):
        shown, total = len(result["entries"]), result.get("entry_count")
        parts.append(f"<div class='wb-note'>showing the first {shown} of {esc(total)}</div>")
        parts.append(cut_note(envelope, result, "listing", "entries", "entries", size=total))
    return "".join(parts)


def listing_html(envelope: Envelope) -> str:
    """The static listing (``wb-listing``): summary, the entries, warnings and artifacts."""
    tree = tree_html(entries_of(envelope.result), {})
    body = f"{_summary_html(envelope)}<div class='wb-tree'>{tree}</div>{footer_html(envelope)}"
    return f"<div class='wb-listing'>{body}</div>"


class TreeView(anywidget.AnyWidget):
    """The browser side of a ListingTree: draws entries with ``textContent`` and sends
    ``{"open": path}`` when one is clicked."""

    _esm = Path(__file__).parent / "static" / "listing.js"

    entries: traitlets.List[Any] = traitlets.List(
        help="The listing's entries: name, path, type."
    ).tag(sync=True)
    children = traitlets.Dict(help="Entries of directories opened since, by path.").tag(sync=True)
    expanded: traitlets.List[Any] = traitlets.List(help="Paths of directories shown open.").tag(
        sync=True
    )
    loading: traitlets.List[Any] = traitlets.List(
        help="Paths whose file_read call is running."
    ).tag(sync=True)
    clickable = traitlets.Bool(False, help="True when entries open a file_read call.").tag(
        sync=True
    )


class ListingTree(LiveView, ipywidgets.VBox):  # type: ignore[misc]
    """A listing envelope as a clickable tree (``wb-listing``), opened entries below it.

    ``open_entry(path)`` is what a click does: ``registry.invoke("file_read", {"path": path})``
    for a path this tree shows; the call is kept in ``opened`` and its row in ``follow_ups``.
    Without a registry holding ``file_read`` the tree is drawn but does not open anything.
    Shown on its own in a cell, its saved output follows the entries opened from it.
    """

    def __init__(self, envelope: Envelope, *, registry: Host | None = None) -> None:
        if not is_listing_result(envelope.result):
            raise ValueError("a ListingTree needs a listing envelope")
        super().__init__()
        self.envelope = envelope
        self.registry = registry
        self.opened: list[Call] = []
        entries = entries_of(envelope.result)
        self._known = {entry["path"] for entry in entries}
        self._settled: set[str] = set()
        self._lock = threading.Lock()
        self.view = TreeView(entries=entries, clickable=self.can_open)
        self.view.on_msg(self._on_message)
        self.summary = ipywidgets.HTML(_summary_html(envelope) + footer_html(envelope))
        self.follow_ups = FollowUps(rows=True)
        self.follow_ups.listeners.append(self._republish)
        self.children = (shared_style(), self.summary, self.view, self.follow_ups)
        self.add_class("wb-listing")

    @property
    def can_open(self) -> bool:
        """True when clicking an entry starts a ``file_read`` call."""
        return self.registry is not None and self.registry.get(OPENER) is not None

    @property
    def interactive(self) -> bool:
        """True while the view does something on a click (a card keeps it live for that)."""
        return self.can_open

    def open_entry(self, path: str) -> Call:
        """Start ``file_read`` on an entry's ``path`` (``ValueError`` for a path this tree does
        not show, ``RuntimeError`` when there is no ``file_read``); its row appears below."""
        if self.registry is None or not self.can_open:
            raise RuntimeError(f"this listing has no registry with {OPENER}")
        if path not in self._known:
            raise ValueError(f"{path!r} is not an entry of this listing")
        call = self.registry.invoke(OPENER, {"path": path})
        self.opened.append(call)
        self.view.loading = [*self.view.loading, path]
        # The tree learns the entries before the row's end republishes the card around it.
        self._watch(call, path)
        self.follow_ups.add(call)
        return call

    def _on_message(self, _widget: Any, content: Any, _buffers: Any) -> None:
        path = content.get("open") if isinstance(content, dict) else None
        if isinstance(path, str):
            with contextlib.suppress(ValueError, RuntimeError):
                self.open_entry(path)

    def _watch(self, call: Call, path: str) -> None:
        def on_event(event: Event) -> None:
            if event.type in TERMINAL_EVENTS:
                self._loaded(call, path)

        unsubscribe = call.subscribe(on_event)
        if call.envelope is not None:  # it ended before we subscribed
            unsubscribe()
            self._loaded(call, path)

    def _loaded(self, call: Call, path: str) -> None:
        with self._lock:
            if call.id in self._settled:
                return  # the call ended while we subscribed: both sides saw it
            self._settled.add(call.id)
        view = self.view
        envelope = call.envelope
        with self._lock, view.hold_sync():
            view.loading = [p for p in view.loading if p != path]
            if envelope is not None and is_listing_result(envelope.result):
                entries = entries_of(envelope.result)
                self._known.update(entry["path"] for entry in entries)
                view.children = {**view.children, path: entries}
                if path not in view.expanded:
                    view.expanded = [*view.expanded, path]

    def static_html(self) -> str:
        """The tree as far as it was opened (nested lists), then the entries opened from it (no
        stylesheet)."""
        tree = tree_html(self.view.entries, self.view.children, set(self.view.expanded))
        # Entries open on a click only while the kernel runs: the saved tree says so.
        tip = f" title='Opening an entry: {esc(NEEDS_KERNEL)}'" if self.can_open else ""
        return (
            f"<div class='wb-listing'>{self.summary.value}<div class='wb-tree'{tip}>{tree}</div>"
            f"{self.follow_ups.static_html()}</div>"
        )


__all__ = ["ListingTree", "TreeView", "entries_of", "listing_html", "tree_html"]
