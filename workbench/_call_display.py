"""How a Call shows itself in a notebook: a live card when widgets are available, static HTML
otherwise (and always as the fallback that nbconvert and GitHub render)."""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable
from types import ModuleType
from typing import TYPE_CHECKING, Any

from workbench._context import Stream
from workbench._display import esc, pretty_json

if TYPE_CHECKING:
    from workbench._call import Call


def call_html(call: Call) -> str:
    """A static, escaped HTML card of the call as it is now."""
    rows = [
        f"<div class='wb-card-header'><b>{esc(call.tool_name)}</b> "
        f"<code>{esc(call.short_id)}</code> "
        f"<span class='wb-badge wb-state-{esc(call.state)}'>{esc(call.state)}</span> "
        f"<span>{call.elapsed:.1f} s</span></div>"
    ]
    if call.arguments is not None:
        rows.append(f"<pre class='wb-args'>{esc(pretty_json(call.arguments))}</pre>")
    if call.coercions:
        items = "".join(f"<li>{esc(str(c))}</li>" for c in call.coercions)
        rows.append(f"<ul class='wb-coercions'>{items}</ul>")
    if call.receipt is not None:
        rows.append(f"<pre class='wb-receipt'>{esc(call.receipt)}</pre>")
    else:
        streams: tuple[Stream, ...] = ("stdout", "stderr")
        for stream in streams:
            tail = call.output_tail(stream)
            if tail:
                rows.append(f"<pre class='wb-output wb-{stream}'>{esc(tail)}</pre>")
    return f"<div class='wb-card wb-static'>{''.join(rows)}</div>"


def call_mimebundle(call: Call, **kwargs: Any) -> dict[str, Any]:
    """The live card inside a Jupyter kernel with ipywidgets; static HTML elsewhere."""
    bundle: dict[str, Any] = {"text/plain": repr(call), "text/html": call_html(call)}
    return widget_mimebundle("card", call, bundle, **kwargs)


def display_call(call: Call) -> None:
    """Show ``call``: inside a Jupyter kernel its live card, shown so that the saved output
    follows the card to its final state (a mimebundle returned to the display hook would be
    saved as the card was when the cell ended, typically queued); elsewhere its bundle."""
    display_widget("card", call, lambda: call_mimebundle(call))


def _kernel_widgets() -> ModuleType | None:
    """``workbench.widgets`` inside a Jupyter kernel; None elsewhere (a script, a test), so the
    core never imports Jupyter on its own."""
    if "ipykernel" not in sys.modules:
        return None
    try:
        return importlib.import_module("workbench.widgets")
    except ImportError:
        return None


def display_widget(factory: str, subject: object, fallback: Callable[[], dict[str, Any]]) -> None:
    """Show ``workbench.widgets.<factory>(subject)`` inside a Jupyter kernel, through the
    widget's own display so its saved output follows later changes; ``fallback()`` elsewhere
    (built only then)."""
    widgets = _kernel_widgets()
    if widgets is not None:
        getattr(widgets, factory)(subject)._ipython_display_()
        return
    from IPython.display import display

    display(fallback(), raw=True)  # type: ignore[no-untyped-call]


def widget_mimebundle(
    factory: str, subject: object, fallback: dict[str, Any], **kwargs: Any
) -> dict[str, Any]:
    """``workbench.widgets.<factory>(subject)``'s bundle inside a Jupyter kernel, merged over
    ``fallback``; just ``fallback`` outside one."""
    widgets = _kernel_widgets()
    if widgets is None:
        return fallback
    widget_bundle = getattr(widgets, factory)(subject)._repr_mimebundle_(**kwargs)
    if isinstance(widget_bundle, dict):
        return {**fallback, **widget_bundle}
    return fallback
