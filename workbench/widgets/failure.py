"""The failure card: why a call failed, with the fields the model reads, and Edit and retry.

It shows the error's kind, message, ``field`` and ``expected``, the recovery hint, who stopped
the call (``killed_by``), whether a retry may help, and what the call printed before it
stopped (unless its card already shows that output). A retryable failure offers "Edit and
retry": it reopens the call's arguments as JSON; Retry invokes the same tool
through the same registry with the edited arguments, and the new call's card appears below.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import ipywidgets

from workbench.envelope import Envelope
from workbench.families.failure import KEPT_STREAMS
from workbench.widgets._ansi import ansi_pre
from workbench.widgets._envelope_html import cut_note, footer_html
from workbench.widgets._follow_ups import FollowUps
from workbench.widgets._html import badge, details, esc, json_tree_html, shared_style
from workbench.widgets._kernel_controls import kernel_controls_html
from workbench.widgets._view import LiveView

if TYPE_CHECKING:
    from workbench.runtime import Call


def _field(name: str, value: str) -> str:
    return f"<dt>{esc(name)}</dt><dd><code>{esc(value)}</code></dd>"


def failure_body_html(envelope: Envelope, *, show_output: bool = True) -> str:
    """The inside of a failure card: badges, message, fields, output kept (unless
    ``show_output`` is False: the call's card already shows it), warnings."""
    error = envelope.error
    if error is None:
        raise ValueError("a failure card needs an error envelope")
    retry = ("retryable", "wb-ok") if error.retryable else ("not retryable", "wb-flag")
    head = f"{badge(error.kind.value, 'wb-kind')} {badge(*retry)}"
    fields = []
    for name in ("field", "expected", "recovery_hint"):
        value = getattr(error, name)
        if value is not None:
            fields.append(_field(name.replace("_", " "), value))
    if envelope.killed_by is not None:
        fields.append(_field("killed_by", json.dumps(envelope.killed_by)))
    parts = [
        f"<div class='wb-failure-head'>{head}</div>",
        f"<div class='wb-message'>{esc(error.message)}</div>",
    ]
    if fields:
        parts.append(f"<dl class='wb-fields'>{''.join(fields)}</dl>")
    extra = dict(error.details or {})
    for stream in KEPT_STREAMS:
        text = extra.pop(f"{stream}_preview", None)
        if isinstance(text, str) and text and show_output:
            parts.append(f"<div class='wb-label'>{stream} before it stopped</div>")
            parts.append(ansi_pre(text, f"wb-{stream}"))
            if extra.get(f"{stream}_truncated") and show_output:
                parts.append(cut_note(envelope, extra, stream, stream))
        for key in ("bytes", "truncated", "artifact"):
            extra.pop(f"{stream}_{key}", None)
    if extra:
        parts.append(details("details", json_tree_html(extra), cls="wb-details"))
    parts.append(footer_html(envelope))
    return "".join(parts)


def failure_html(envelope: Envelope) -> str:
    """The static failure card (``wb-failure``)."""
    return f"<div class='wb-failure'>{failure_body_html(envelope)}</div>"


def arguments_text(raw_args: Any) -> str:
    """A call's raw arguments as editable JSON text (a string is kept as it was sent)."""
    if isinstance(raw_args, str):
        return raw_args
    return json.dumps({} if raw_args is None else raw_args, indent=2, ensure_ascii=False)


class FailureCard(LiveView, ipywidgets.VBox):  # type: ignore[misc]
    """A failed envelope (``wb-failure``); with its ``call``, an Edit and retry form.

    ``edit()`` shows the arguments; ``retry()`` invokes a new call with the edited JSON and
    returns it, or returns None and shows the problem when the text is not JSON. Retries are
    kept in ``retries`` and their cards in ``follow_ups``. Shown on its own in a cell, its saved
    output follows its retries' cards as they end.
    """

    def __init__(
        self, envelope: Envelope, *, call: Call | None = None, show_output: bool = True
    ) -> None:
        super().__init__()
        self.envelope = envelope
        self.call = call
        self.show_output = show_output
        self.retries: list[Call] = []
        self.body = ipywidgets.HTML(failure_body_html(envelope, show_output=show_output))
        self.edit_button = ipywidgets.Button(description="Edit and retry", icon="pencil")
        self.edit_button.add_class("wb-edit-retry")
        self.editor = ipywidgets.Textarea(
            value=arguments_text(None if call is None else call.raw_args),
            layout=ipywidgets.Layout(width="100%", height="8em"),
        )
        self.editor.add_class("wb-retry-args")
        self.retry_button = ipywidgets.Button(description="Retry", button_style="primary")
        self.retry_button.add_class("wb-retry")
        self.problem = ipywidgets.HTML()
        self.form = ipywidgets.VBox(
            (self.editor, self.retry_button, self.problem),
            layout=ipywidgets.Layout(display="none"),
        )
        self.follow_ups = FollowUps()
        self.follow_ups.listeners.append(self._republish)
        self.edit_button.on_click(lambda _: self.edit())
        self.retry_button.on_click(lambda _: self.retry())
        retry = (self.edit_button, self.form) if self.can_retry else ()
        self.children = (shared_style(), self.body, *retry, self.follow_ups)
        self.add_class("wb-failure")

    @property
    def can_retry(self) -> bool:
        """True when the failure is marked retryable and the tool that failed is still in the
        call's registry: a failure marked not retryable offers no retry."""
        error = self.envelope.error
        return (
            error is not None
            and error.retryable
            and self.call is not None
            and self.call.registry.get(self.call.tool_name) is not None
        )

    @property
    def interactive(self) -> bool:
        """True when the card offers Edit and retry (a call card keeps it live for that)."""
        return self.can_retry

    def edit(self) -> None:
        """Open the arguments for editing."""
        self.form.layout.display = None

    def retry(self) -> Call | None:
        """Invoke the tool again with the edited arguments; its card appears below."""
        if self.call is None or not self.can_retry:
            return None
        try:
            args = json.loads(self.editor.value)
        except json.JSONDecodeError as exc:
            self.problem.value = f"<div class='wb-bad'>The arguments are not JSON: {esc(exc)}</div>"
            return None
        self.problem.value = ""
        retried = self.call.registry.invoke(self.call.tool_name, args)
        self.retries.append(retried)
        self.follow_ups.add(retried)
        return retried

    def static_html(self) -> str:
        """The card and its retries' cards as escaped HTML (without the stylesheet); Edit and
        retry, when offered, is drawn disabled: it needs the kernel."""
        body = failure_body_html(self.envelope, show_output=self.show_output)
        if self.can_retry:
            body += kernel_controls_html("Edit and retry")
        body += self.follow_ups.static_html()
        return f"<div class='wb-failure'>{body}</div>"


__all__ = ["FailureCard", "arguments_text", "failure_body_html", "failure_html"]
