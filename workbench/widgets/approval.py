"""The approval prompt of an ``always_ask`` call: what the tool may do, the exact arguments it
will receive, and Allow / Deny.

Allow is ``call.approve()``, Deny is ``call.deny(reason)`` and "Allow edited" is
``call.modify(arguments)``, each bound to the arguments the prompt showed (a decision about
arguments that changed meanwhile no longer applies); the prompt decides nothing itself. A card
shows it while ``call.state == "awaiting_approval"``.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import ipywidgets

from workbench.widgets._html import badge, esc, pre, pretty_json, shared_style
from workbench.widgets._view import StaticForm

if TYPE_CHECKING:
    from workbench.runtime import Call

FLAGS = ("destructive", "read_only", "open_world", "idempotent")


def approval_html(call: Call, *, with_arguments: bool = True) -> str:
    """The question, the tool's declared effects and flags, and (``with_arguments``) the
    coerced arguments."""
    spec = call.spec
    flags = []
    effects: tuple[str, ...] = ()
    if spec is not None:
        effects = spec.effects
        flags = [
            badge(flag.replace("_", " "), "wb-flag", f"wb-flag-{flag}")
            for flag in FLAGS
            if getattr(spec, flag)
        ]
    if effects:
        listed = "".join(f"<li>{esc(effect)}</li>" for effect in effects)
        effects_html = f"<ul class='wb-effects'>{listed}</ul>"
    else:
        effects_html = "<div class='wb-note'>no effects declared</div>"
    arguments = call.arguments if call.arguments is not None else call.raw_args
    html = (
        f"<div class='wb-message'>Allow <code>{esc(call.tool_name)}</code> to run? "
        f"{' '.join(flags)}</div>"
        f"<div class='wb-label'>effects</div>{effects_html}"
    )
    if with_arguments:
        html += (
            "<div class='wb-label'>arguments it will receive</div>"
            f"{pre(pretty_json(arguments), 'wb-approval-args')}"
        )
    return html


class ApprovalPrompt(StaticForm, ipywidgets.VBox):  # type: ignore[misc]
    """Allow / Deny for one call waiting for approval (``wb-approval``).

    ``allow_button`` ("Allow") calls ``call.approve()``; ``deny_button`` ("Deny") calls
    ``call.deny(reason)`` with the optional reason typed beside it, which the model reads in the
    ``user_denied`` message. ``edit_button`` ("Edit arguments") opens ``editor``, a JSON text of
    the arguments, and ``modify_button`` ("Allow edited") calls ``call.modify(arguments)``: the
    preflight checks them again, and a refusal is shown here with the call still waiting. After
    a decision, the buttons are disabled.
    """

    def __init__(self, call: Call, *, with_arguments: bool = True) -> None:
        super().__init__()
        self.call = call
        self.with_arguments = with_arguments
        request = call.gate.request
        self.binding = None if request is None else request.binding
        self.info = ipywidgets.HTML(approval_html(call, with_arguments=with_arguments))
        self.allow_button = ipywidgets.Button(description="Allow", button_style="success")
        self.allow_button.add_class("wb-allow")
        self.deny_button = ipywidgets.Button(description="Deny", button_style="danger")
        self.deny_button.add_class("wb-deny")
        self.reason = ipywidgets.Text(placeholder="reason to deny (optional; the model reads it)")
        self.decision = ipywidgets.HTML()
        self.edit_button = ipywidgets.Button(description="Edit arguments")
        self.edit_button.add_class("wb-edit-arguments")
        shown = call.arguments if call.arguments is not None else call.raw_args
        self.editor = ipywidgets.Textarea(
            value=json.dumps(shown, indent=2, ensure_ascii=False, default=repr),
            layout=ipywidgets.Layout(width="100%", height="8em", display="none"),
        )
        self.editor.add_class("wb-arguments-editor")
        self.modify_button = ipywidgets.Button(
            description="Allow edited", layout=ipywidgets.Layout(display="none")
        )
        self.modify_button.add_class("wb-modify")
        self.allow_button.on_click(lambda _: self.allow())
        self.deny_button.on_click(lambda _: self.deny())
        self.edit_button.on_click(lambda _: self.edit())
        self.modify_button.on_click(lambda _: self.allow_edited())
        buttons = ipywidgets.HBox(
            (self.allow_button, self.deny_button, self.reason, self.edit_button)
        )
        editing = ipywidgets.VBox((self.editor, self.modify_button))
        self.children = (shared_style(), self.info, buttons, editing, self.decision)
        self.add_class("wb-approval")

    def allow(self) -> None:
        """Approve the call (the Allow button), with the arguments shown."""
        self.call.approve(binding=self.binding)
        self._decided("allowed")

    def deny(self) -> None:
        """Deny the call (the Deny button), with the typed reason if any."""
        self.call.deny(self.reason.value.strip() or None, binding=self.binding)
        self._decided("denied")

    def edit(self) -> None:
        """Show the arguments as editable JSON and the "Allow edited" button."""
        self.editor.layout.display = None
        self.modify_button.layout.display = None

    def allow_edited(self) -> None:
        """Approve with the edited arguments; a refusal (bad JSON, or the preflight's) is shown
        and the call keeps waiting."""
        try:
            arguments = json.loads(self.editor.value)
            if not isinstance(arguments, dict):
                raise ValueError("the arguments must be a JSON object")
            self.call.modify(arguments, binding=self.binding)
        except ValueError as exc:  # json.JSONDecodeError is a ValueError
            self.decision.value = f"<div class='wb-note wb-refused'>not sent: {esc(str(exc))}</div>"
            return
        self._decided("allowed with edited arguments")

    def _decided(self, word: str) -> None:
        for control in (
            self.allow_button,
            self.deny_button,
            self.reason,
            self.edit_button,
            self.editor,
            self.modify_button,
        ):
            control.disabled = True
        self.decision.value = f"<div class='wb-note'>{esc(word)}</div>"

    def static_html(self) -> str:
        """The prompt as escaped HTML (without buttons or the stylesheet)."""
        info = approval_html(self.call, with_arguments=self.with_arguments)
        return f"<div class='wb-approval'>{info}{self.decision.value}</div>"


__all__ = ["ApprovalPrompt", "approval_html"]
