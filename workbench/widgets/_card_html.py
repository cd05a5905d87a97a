"""The HTML pieces of a call card: header, arguments and receipt, as pure functions of a Call.

The live card and its static form draw the same strings, so a saved notebook shows exactly what
the card showed. Every value taken from the call is escaped.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from workbench.preflight import forgiven
from workbench.tokens import count_tokens
from workbench.widgets._html import badge, details, esc, pre, pretty_json

if TYPE_CHECKING:
    from workbench.runtime import Call

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
    label = STATE_LABELS.get(state, state)
    if not ended(call) and call.pending_action == "result":
        # A custom tool's body is the person: nothing runs until they answer the form.
        label = "waiting for you"
    parts = [
        f"<span class='wb-tool-name'>{esc(call.tool_name)}</span>",
        f"<code class='wb-call-id' title='{esc(call.id)}'>{esc(call.short_id)}</code>",
        badge(label, "wb-state", f"wb-state-{state}"),
    ]
    if call.dry_run:
        parts.append(badge("dry run", "wb-flag"))
    parent = call.parent
    if parent is not None:
        parts.append(
            f"<span class='wb-parent' title='{esc(parent.id)}'>called by "
            f"{esc(parent.tool_name)} <code>{esc(parent.short_id)}</code></span>"
        )
    if approved(call):
        who = next((e.data.get("by") for e in list(call.events) if e.type == "tool.approved"), None)
        label = "✓ approved by you" if who in (None, "person") else f"✓ approved by {who}"
        parts.append(badge(label, "wb-flag", "wb-approved"))
    fulfilled_by = _fulfilled_by(call)
    if fulfilled_by is not None:
        who = "you" if fulfilled_by == "person" else fulfilled_by
        parts.append(badge(f"✓ fulfilled by {who}", "wb-flag", "wb-fulfilled"))
    parts.append(f"<span class='wb-elapsed'>{esc(elapsed_text(call))}</span>")
    return f"<div class='wb-card-header'>{' '.join(parts)}</div>"


def _fulfilled_by(call: Call) -> str | None:
    """Who supplied a custom tool's result (``"person"`` for the form or ``call.fulfil``), or
    None when nobody has."""
    for event in list(call.events):
        if event.type == "tool.fulfilled":
            by = event.data.get("by")
            return by if isinstance(by, str) else "person"
    return None


def approved(call: Call) -> bool:
    """True once a person (or code on their behalf) approved the call: the mark stays on the
    card after it ends."""
    return any(event.type == "tool.approved" for event in list(call.events))


def _sent(raw: object) -> str:
    # A string is shown as the model sent it: it may be JSON text the preflight parses.
    return raw if isinstance(raw, str) else pretty_json(raw)


ONE_LINE_CHARS = 120


def one_line(value: Any) -> str:
    """``value`` as compact JSON on one line, clipped to ``ONE_LINE_CHARS``."""
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=repr)
    text = " ".join(text.split())
    return text if len(text) <= ONE_LINE_CHARS else text[: ONE_LINE_CHARS - 1] + "…"


def _edited(call: Call) -> dict[str, Any] | None:
    """The last edit a person made to the arguments while approving (``from``, ``to``,
    ``by``), or None."""
    return call.modifications[-1] if call.modifications else None


def arguments_html(call: Call) -> str:
    """The arguments collapsed to one line (the ones the tool ran with once the preflight ran,
    with a "coerced: …" note when it changed something and an "edited by you" note when a
    person changed them while approving); expanded, the arguments as sent beside the arguments
    as coerced (one block when they are the same), the edited ones beside them, and each
    coercion."""
    edit = _edited(call)
    if call.arguments is not None:
        final = pretty_json(call.arguments)
        line = one_line(call.arguments)
    elif ended(call):
        final = "(none: the call ended before its arguments were accepted)"
        line = one_line(call.raw_args)
    else:
        final = "(not checked yet)"
        line = one_line(call.raw_args)
    coerced = pretty_json(edit["from"]) if edit is not None else final
    sent = _sent(call.raw_args)
    summary = (
        f"<span class='wb-label'>arguments</span> <code class='wb-args-line'>{esc(line)}</code>"
    )
    if edit is not None:
        who = "you" if edit.get("by") in (None, "person") else str(edit["by"])
        summary += f" <span class='wb-edited-note'>edited by {esc(who)}</span>"
    # Arguments that came as a JSON string (every OpenAI call's) were not mistaken: the "as
    # sent" block shows the string, and no note calls its parsing a coercion.
    mistakes = forgiven(call.coercions)
    if mistakes:
        note = "coerced: " + "; ".join(str(coercion) for coercion in mistakes)
        summary += f" <span class='wb-coerced-note'>{esc(one_line(note))}</span>"
        items = "".join(f"<li>{esc(str(coercion))}</li>" for coercion in mistakes)
        coercions = f"<ul class='wb-coercions'>{items}</ul>"
    else:
        coercions = ""
    if edit is None and call.arguments is not None and not mistakes and sent == coerced:
        body = (
            "<div class='wb-label'>as sent, accepted unchanged</div>"
            f"{pre(coerced, 'wb-coerced-args')}"
        )
    else:
        blocks = [f"<div><div class='wb-label'>as sent</div>{pre(sent, 'wb-raw-args')}</div>"]
        if mistakes or sent != coerced:
            blocks.append(
                "<div><div class='wb-label'>as coerced</div>"
                f"{pre(coerced, 'wb-coerced-args')}</div>"
            )
        if edit is not None:
            blocks.append(
                f"<div><div class='wb-label'>edited by {esc(who)}</div>"
                f"{pre(final, 'wb-edited-args')}</div>"
            )
        body = f"<div class='wb-args-grid'>{''.join(blocks)}</div>"
    return details(summary, body + coercions, cls="wb-args")


def receipt_html(receipt: str) -> str:
    """The receipt a model reads, collapsed under its size in characters and tokens."""
    summary = f"receipt · {len(receipt):,} chars · {count_tokens(receipt)}"
    return details(esc(summary), pre(receipt, "wb-receipt-text"), cls="wb-receipt")


def progress_html(call: Call) -> str:
    """The call's latest progress report as a bar with its count and message (escaped); empty
    when the call reported none. A report without a total draws a bar that only counts."""
    reported = call.sheet.log.reported
    if reported is None:
        return ""
    done, total, message = reported["done"], reported["total"], reported["message"]
    if total is None:
        bar = "<progress class='wb-progress-bar'></progress>"
        count = f"{done:g}"
    else:
        shown = min(max(done, 0), total)
        bar = f"<progress class='wb-progress-bar' value='{shown:g}' max='{total:g}'></progress>"
        count = f"{done:g}/{total:g} ({100 * shown / total:.0f}%)"
    text = f"<span class='wb-progress-count'>{esc(count)}</span>"
    if message:
        text += f" <span class='wb-progress-message'>{esc(message)}</span>"
    return f"<div class='wb-progress'>{bar} {text}</div>"
