"""Where the core finds its views: a view package registers them here, the core looks them up.

The core never imports a view package. When it shows something (a Call's card, a History, a
Registry, an envelope of some family) it asks this table by key; with nothing registered it shows
its own static form. The widgets package registers a view for ``"card"`` (a Call),
``"history"`` and ``"registry"``, and a :class:`FamilyViews` for every family of
``workbench.families.FAMILIES``. Whoever decides that views are wanted (the top-level package,
inside a Jupyter kernel) installs a loader that imports the view package on the first look-up.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from workbench.envelope import Envelope

ViewKey = Literal["card", "history", "registry", "run"]
ViewFactory = Callable[[Any], Any]
Loader = Callable[[], bool]


@dataclass(frozen=True)
class FamilyViews:
    """How one family's envelopes look to a person.

    ``result(envelope, call)`` is the live view (``call`` is the Call it came from, or None);
    ``compact(envelope)`` one line of escaped HTML, for tables and follow-up rows;
    ``static(envelope)`` the escaped HTML a saved notebook shows without a kernel.
    """

    result: Callable[[Envelope, Any], Any]
    compact: Callable[[Envelope], str]
    static: Callable[[Envelope], str]


_views: dict[str, ViewFactory] = {}
_family_views: dict[str, FamilyViews] = {}
_loaders: list[Loader] = []
_lock = threading.RLock()


def register(key: str, factory: ViewFactory) -> None:
    """Make ``factory(subject)`` the view shown for ``key`` (the latest registration wins)."""
    with _lock:
        _views[key] = factory


def register_family(name: str, views: FamilyViews) -> None:
    """Make ``views`` the views of the family ``name``."""
    with _lock:
        _family_views[name] = views


def add_loader(loader: Loader) -> None:
    """Run ``loader`` before the next look-up; it returns True once it has registered its views
    (it stays pending while it returns False, e.g. outside a Jupyter kernel)."""
    with _lock:
        if loader not in _loaders:
            _loaders.append(loader)


def _load() -> None:
    with _lock:
        pending = list(_loaders)
    for loader in pending:
        if loader():
            with _lock:
                if loader in _loaders:
                    _loaders.remove(loader)


def view(key: str) -> ViewFactory | None:
    """The factory registered for ``key``, or None when no view package registered one."""
    _load()
    with _lock:
        return _views.get(key)


def family_views(name: str) -> FamilyViews | None:
    """The views registered for the family ``name``, or None."""
    _load()
    with _lock:
        return _family_views.get(name)


def families_without_views(families: Iterable[str]) -> list[str]:
    """The names among ``families`` that no view package covers, sorted (none once the widgets
    are loaded)."""
    _load()
    with _lock:
        return sorted(set(families) - set(_family_views))


def in_kernel() -> bool:
    """True inside a running Jupyter kernel, the only place live views are shown (a script or
    a test gets static forms, even when a view package or ipykernel was imported)."""
    if "ipykernel" not in sys.modules:
        return False
    from IPython import get_ipython

    return getattr(get_ipython(), "kernel", None) is not None


def _live_view(key: str) -> ViewFactory | None:
    if not in_kernel():
        return None
    return view(key)


def display_widget(key: str, subject: object, fallback: Callable[[], dict[str, Any]]) -> None:
    """Show the view registered for ``key`` over ``subject`` inside a Jupyter kernel, through
    the view's own display so its saved output follows later changes; ``fallback()``
    elsewhere (built only then)."""
    factory = _live_view(key)
    if factory is not None:
        factory(subject)._ipython_display_()
        return
    from IPython.display import display

    display(fallback(), raw=True)  # type: ignore[no-untyped-call]


def widget_mimebundle(
    key: str, subject: object, fallback: dict[str, Any], **kwargs: Any
) -> dict[str, Any]:
    """The bundle of the view registered for ``key`` over ``subject`` inside a Jupyter kernel,
    merged over ``fallback``; just ``fallback`` outside one."""
    factory = _live_view(key)
    if factory is None:
        return fallback
    widget_bundle = factory(subject)._repr_mimebundle_(**kwargs)
    if isinstance(widget_bundle, dict):
        return {**fallback, **widget_bundle}
    return fallback


__all__ = [
    "FamilyViews",
    "ViewFactory",
    "ViewKey",
    "add_loader",
    "display_widget",
    "families_without_views",
    "family_views",
    "in_kernel",
    "register",
    "register_family",
    "view",
    "widget_mimebundle",
]
