"""Static HTML and plain-text forms of an envelope, for notebooks without any widget.

Everything a tool produced is escaped here before it becomes HTML: tool output is untrusted.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from workbench._html import esc, pretty_json
from workbench.envelope._truncate import TEXT_RESULT_KEYS

if TYPE_CHECKING:
    from workbench.envelope._envelope import Envelope
    from workbench.envelope._errors import ToolError


def envelope_text(envelope: Envelope) -> str:
    """A plain-text form: the status line, then the result or the error fields."""
    name = envelope.tool_name or "tool"
    if envelope.error is None:
        lines = [f"✓ {name}: {envelope.summary_text}"]
        if envelope.result is not None:
            lines.append(pretty_json(envelope.result))
    else:
        error = envelope.error
        lines = [f"✗ {name}: {error.kind.value}: {error.message}"]
        lines += [f"  {label}: {value}" for label, value in _details(error)]
        lines.append(f"  retryable: {'yes' if error.retryable else 'no'}")
    lines.extend(f"warning: {warning}" for warning in envelope.warnings)
    return "\n".join(lines)


def _details(error: ToolError) -> list[tuple[str, str]]:
    """The error's optional fields that are set: where, what was expected, what to do."""
    found = ((label, getattr(error, label)) for label in ("field", "expected", "recovery_hint"))
    return [(label, value) for label, value in found if value is not None]


_STYLE = (
    "font-family:var(--jp-ui-font-family,sans-serif);border:1px solid var(--jp-border-color1,#ccc);"
    "border-radius:6px;"
    "padding:6px 10px;margin:4px 0;max-width:60em"
)


def _text_of(result: object) -> str | None:
    """The text of a text family's result (``{"text": ...}``, with the marks of a cut)."""
    if not isinstance(result, dict) or not isinstance(result.get("text"), str):
        return None
    return result["text"] if set(result) <= TEXT_RESULT_KEYS else None


def _readable(status: str, fallback: str) -> str:
    """A status colour for text that keeps WCAG AA contrast in light and dark themes: the
    theme's status colour mixed with its text colour (as the widgets' stylesheet does)."""
    return (
        f"color-mix(in srgb,var(--jp-{status}-color1,{fallback}) 55%,"
        "var(--jp-content-font-color1,#1f2328))"
    )


def envelope_html(envelope: Envelope) -> str:
    """An escaped HTML block: status badge, tool, kind and message or the result."""
    name = esc(envelope.tool_name or "tool")
    rows: list[str] = []
    if envelope.error is None:
        colour = _readable("success", "#1a7f37")
        badge = f'<span class="wb-badge wb-badge-success" style="color:{colour}">✓ success</span>'
        rows.append(f"<div>{esc(envelope.summary_text)}</div>")
        text = _text_of(envelope.result)
        if text is not None:  # a text result reads as its text, not as one JSON string
            rows.append(f"<pre class='wb-result wb-result-text'>{esc(text)}</pre>")
        elif envelope.result is not None:
            rows.append(f"<pre class='wb-result'>{esc(pretty_json(envelope.result))}</pre>")
    else:
        error = envelope.error
        colour = _readable("error", "#cf222e")
        badge = (
            f'<span class="wb-badge wb-badge-error" style="color:{colour}">✗ '
            f"{esc(error.kind.value)}</span>"
        )
        rows.append(f"<div class='wb-message'>{esc(error.message)}</div>")
        rows += [
            f"<div><b>{label}</b>: <code>{esc(value)}</code></div>"
            for label, value in _details(error)
        ]
        rows.append(f"<div><b>retryable</b>: {'yes' if error.retryable else 'no'}</div>")
    rows.extend(f"<div class='wb-warning'>⚠ {esc(w)}</div>" for w in envelope.warnings)
    status = esc(envelope.status)
    return (
        f"<div class='wb-envelope wb-status-{status}' style='{_STYLE}'>"
        f"<div><b>{name}</b> {badge}</div>{''.join(rows)}</div>"
    )
