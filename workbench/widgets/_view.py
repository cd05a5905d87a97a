"""One view, two forms: a widget's live bundle and its static, escaped HTML.

Every workbench widget is shown two ways: live inside Jupyter (its widget view), and as static,
escaped HTML, which nbconvert, GitHub and a notebook reopened without a kernel show. The mixin
:class:`StaticForm` puts the second beside the first, for every widget alike: a widget lists it
before its ipywidgets base, draws its static HTML in ``static_html()`` and says with
``shared_stylesheet`` whether the shared stylesheet (``workbench.css``) goes first. A view whose
static HTML starts with stylesheets of its own (history, registry, compaction, inspector) sets
it False.

A view shown on its own in a cell (a card, a run, the history, registry, compaction and
inspector views) is a :class:`LiveView`: shown with a display id, so that ``_republish()``
replaces the output the notebook saves with the form the view has now, after the cell ended.
"""

from __future__ import annotations

import threading
from typing import Any, ClassVar

import traitlets

from workbench.widgets._detached_comm import detach_view_comms
from workbench.widgets._html import style_tag, with_html
from workbench.widgets._live_display import LiveDisplay
from workbench.widgets._timer import call_later

# Every view module imports this one: from here on, in a kernel, views' widget messages answer
# no cell, so a headless run saves no widget state for them and exports their static HTML.
detach_view_comms()


class StaticForm:
    """Mixed in before an ipywidgets base: the widget's bundle is its live view with
    :meth:`to_html` beside it as ``text/html`` (front ends with a widget manager prefer the
    live view; the others show the HTML)."""

    shared_stylesheet: ClassVar[bool] = True
    """True when the shared stylesheet goes before ``static_html()``: a widget that also sits
    inside another view (a card, a failure card) leaves it out of its static HTML, which the
    view around it then embeds as it is."""

    def static_html(self) -> str:
        """The view as it is now, as escaped HTML."""
        raise NotImplementedError

    def to_html(self) -> str:
        """What a notebook shows without a kernel: the shared stylesheet when the view uses it,
        then ``static_html()``."""
        html = self.static_html()
        return style_tag() + html if self.shared_stylesheet else html

    def _repr_mimebundle_(self, **kwargs: Any) -> Any:
        live = super()._repr_mimebundle_(**kwargs)  # type: ignore[misc]
        if isinstance(live, tuple):  # an anywidget's (data, metadata)
            data, metadata = live
            return with_html(data, self.to_html()), metadata
        return with_html(live, self.to_html())


SAVED_FORM_INTERVAL_S = 1.0
"""How often, at most, a view still changing sends its static HTML to the page's model."""


class LiveView(StaticForm, traitlets.HasTraits):
    """A :class:`StaticForm` shown on its own, with a display id: its saved output follows it.

    A view that calls ``_keep_saved_form`` as it changes (the run card, until its run ends)
    also keeps its static HTML as it is now in its model's state (``saved_html``, at most once
    a second and once more after the last change): JupyterLab saves that state with the
    notebook, and the save hook (``_saved_notebook``) keeps it in place of the form the cell
    published when the view was first shown, so a notebook saved mid-run keeps what the view
    showed then."""

    saved_html = traitlets.Unicode("").tag(sync=True)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self._live = LiveDisplay()
        self._saved_form_lock = threading.Lock()
        self._saved_form_due = False
        super().__init__(*args, **kwargs)

    def _keep_saved_form(self) -> None:
        """Send the static HTML as it is now to the page's model, at most once a second (a
        change meanwhile is sent when the second is over)."""
        with self._saved_form_lock:
            if self._saved_form_due:
                return
            self._saved_form_due = True
        self._send_saved_form()
        call_later(SAVED_FORM_INTERVAL_S, self._saved_form_again)

    def _saved_form_again(self) -> None:
        with self._saved_form_lock:
            self._saved_form_due = False
        self._send_saved_form()

    def _send_saved_form(self) -> None:
        html = self.to_html()
        if html != self.saved_html:
            self.saved_html = html

    def _ipython_display_(self) -> None:
        """Show the view so that its saved output follows what it shows (``_republish``)."""
        self._live.show(self._bundle_data)

    def _republish(self) -> None:
        """Replace the output the view was shown in with its bundle as it is now (nothing
        when it was never shown that way)."""
        if self._live.shown:
            self._live.update(self._bundle_data)

    def _bundle_data(self) -> dict[str, Any]:
        shown = self._repr_mimebundle_()
        data: dict[str, Any] = shown[0] if isinstance(shown, tuple) else shown
        return data


__all__ = ["LiveView", "StaticForm"]
