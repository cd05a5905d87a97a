"""How a call shows itself in a notebook: its live card inside a Jupyter kernel where a view
package registered one, its static HTML otherwise (and always as the fallback that nbconvert
and GitHub render). This module names no view package: it asks for the key ``"card"``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from workbench._html import esc, pretty_json
from workbench._views import display_widget, widget_mimebundle
from workbench.families import envelope_static_html
from workbench.output import Stream
from workbench.tokens import count_tokens

if TYPE_CHECKING:
    from workbench.runtime.call._call import Call


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
                f"<details class='wb-receipt'><summary>receipt · "
                f"{esc(str(count_tokens(call.receipt)))}</summary>"
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
