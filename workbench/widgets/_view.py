"""One view, two forms: a widget's live bundle and its static, escaped HTML.

Every workbench widget is shown two ways: live inside Jupyter (its widget view), and as static,
escaped HTML, which nbconvert, GitHub and a notebook reopened without a kernel show. The mixin
:class:`StaticForm` puts the second beside the first, for every widget alike: a widget lists it
before its ipywidgets base, draws its static HTML in ``static_html()`` and says with
``shared_stylesheet`` whether the shared stylesheet (``workbench.css``) goes first. A view whose
static HTML starts with stylesheets of its own (history, registry, compaction, inspector) sets
it False.
"""

from __future__ import annotations

from typing import Any, ClassVar

from workbench.widgets._html import style_tag, with_html


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


__all__ = ["StaticForm"]
