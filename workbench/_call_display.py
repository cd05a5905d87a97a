"""How the core's objects show themselves in a notebook: the view registered for them inside a
Jupyter kernel (see ``workbench._views``), their static HTML otherwise (and always as the
fallback that nbconvert and GitHub render).

This module names no view package: it asks ``_views`` for a key (``"card"``, ``"history"``,
``"registry"``) and for a family's static form.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from workbench import _views
from workbench._context import Stream
from workbench._display import envelope_html, esc, pretty_json

if TYPE_CHECKING:
    from workbench._call import Call
    from workbench._envelope import Envelope


def envelope_static_html(envelope: Envelope) -> str:
    """The static form of ``envelope``: its family's registered static view, or the core's
    own plain block when no view package registered one."""
    from workbench.families import family_of

    views = _views.family_views(family_of(envelope).name)
    return envelope_html(envelope) if views is None else views.static(envelope)


def call_html(call: Call) -> str:
    """A static, escaped HTML card of the call as it is now: header, arguments, the result by
    family (a failure's kind, message, field, expected and hint) or the output so far."""
    rows = [
        f"<div class='wb-card-header'><b>{esc(call.tool_name)}</b> "
        f"<code>{esc(call.short_id)}</code> "
        f"<span class='wb-badge wb-state wb-state-{esc(call.state)}'>{esc(call.state)}</span> "
        f"<span>{call.elapsed:.1f} s</span></div>"
    ]
    if call.arguments is not None:
        rows.append(f"<pre class='wb-args'>{esc(pretty_json(call.arguments))}</pre>")
    if call.coercions:
        items = "".join(f"<li>{esc(str(c))}</li>" for c in call.coercions)
        rows.append(f"<ul class='wb-coercions'>{items}</ul>")
    envelope = call.envelope
    if envelope is not None:
        rows.append(envelope_static_html(envelope))
        if call.receipt is not None:
            rows.append(
                f"<details class='wb-receipt'><summary>receipt</summary>"
                f"<pre class='wb-receipt-text'>{esc(call.receipt)}</pre></details>"
            )
    else:
        streams: tuple[Stream, ...] = ("stdout", "stderr")
        for stream in streams:
            tail = call.output_tail(stream)
            if tail:
                rows.append(f"<pre class='wb-output wb-{stream}'>{esc(tail)}</pre>")
    return f"<div class='wb-card wb-static'>{''.join(rows)}</div>"


def call_mimebundle(call: Call, **kwargs: Any) -> dict[str, Any]:
    """The live card inside a Jupyter kernel with a registered view; static HTML elsewhere."""
    bundle: dict[str, Any] = {"text/plain": repr(call), "text/html": call_html(call)}
    return widget_mimebundle("card", call, bundle, **kwargs)


def display_call(call: Call) -> None:
    """Show ``call``: inside a Jupyter kernel its live card, shown so that the saved output
    follows the card to its final state (a mimebundle returned to the display hook would be
    saved as the card was when the cell ended, typically queued); elsewhere its bundle."""
    display_widget("card", call, lambda: call_mimebundle(call))


def in_kernel() -> bool:
    """True inside a running Jupyter kernel, the only place live views are shown (a script or
    a test gets static forms, even when a view package or ipykernel was imported)."""
    if "ipykernel" not in sys.modules:
        return False
    from IPython import get_ipython

    return getattr(get_ipython(), "kernel", None) is not None


def _live_view(key: str) -> _views.ViewFactory | None:
    if not in_kernel():
        return None
    return _views.view(key)


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
