"""The HTML pieces of a call card: header, arguments and receipt, as pure functions of a Call.

The live card and its static form draw the same strings, so a saved notebook shows exactly what
the card showed. Every value taken from the call is escaped.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from workbench.widgets._html import badge, details, esc, pre, pretty_json

if TYPE_CHECKING:
    from workbench._call import Call

STATE_LABELS = {
    "queued": "queued",
    "awaiting_approval": "awaiting approval",
    "running": "running",
    "succeeded": "succeeded",
    "failed": "failed",
    "terminated": "terminated",
}


def ended(call: Call) -> bool:
    """True once the call has its envelope: already while its terminal event is delivered,
    which is before ``call.done`` turns true."""
    return call.envelope is not None


def elapsed_text(call: Call) -> str:
    """Whole seconds while the call runs (so the clock changes the header once a second at
    most), hundredths once it has ended."""
    if ended(call):
        return f"{call.elapsed:.2f} s"
    return f"{int(call.elapsed)} s"


def header_html(call: Call) -> str:
    """Tool name, short call id, state badge, elapsed time."""
    state = call.state
    parts = [
        f"<span class='wb-tool-name'>{esc(call.tool_name)}</span>",
        f"<code class='wb-call-id' title='{esc(call.id)}'>{esc(call.short_id)}</code>",
        badge(STATE_LABELS.get(state, state), "wb-state", f"wb-state-{state}"),
    ]
    if call.dry_run:
        parts.append(badge("dry run", "wb-flag"))
    parts.append(f"<span class='wb-elapsed'>{esc(elapsed_text(call))}</span>")
    return f"<div class='wb-card-header'>{' '.join(parts)}</div>"


def _sent(raw: object) -> str:
    # A string is shown as the model sent it: it may be JSON text the preflight parses.
    return raw if isinstance(raw, str) else pretty_json(raw)


def arguments_html(call: Call) -> str:
    """The arguments as sent and as coerced, and each coercion the preflight made."""
    if call.arguments is not None:
        coerced = pretty_json(call.arguments)
    elif ended(call):
        coerced = "(none: the call ended before its arguments were accepted)"
    else:
        coerced = "(not checked yet)"
    if call.coercions:
        items = "".join(f"<li>{esc(str(coercion))}</li>" for coercion in call.coercions)
        coercions = f"<ul class='wb-coercions'>{items}</ul>"
    else:
        coercions = "<div class='wb-note'>no coercions</div>"
    grid = (
        "<div class='wb-args-grid'>"
        f"<div><div class='wb-label'>as sent</div>{pre(_sent(call.raw_args), 'wb-raw-args')}</div>"
        f"<div><div class='wb-label'>as coerced</div>{pre(coerced, 'wb-coerced-args')}</div>"
        "</div>"
    )
    count = len(call.coercions)
    summary = "arguments" + (f" · {count} coercion{'s' * (count != 1)}" if count else "")
    return details(esc(summary), grid + coercions, open=True, cls="wb-args")


def receipt_html(receipt: str) -> str:
    """The receipt a model reads, collapsed under its size."""
    summary = f"receipt · {len(receipt):,} chars"
    return details(esc(summary), pre(receipt, "wb-receipt-text"), cls="wb-receipt")
