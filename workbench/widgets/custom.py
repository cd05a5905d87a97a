"""The custom-tool form: for ``ownership="custom"`` tools the person supplies the result.

While ``call.pending_action == "result"`` a card shows this form. The person types the result
(as plain text for a text tool such as a sampling reply; as JSON, or plain text when the tool
declares no output schema; or in fields generated from a simple output schema: an object whose
properties are strings, numbers, integers, booleans or string enums) or a failure (an
``ErrorKind`` and a message). Submit checks the value against the tool's output schema first
(``tool.output_problem``) and shows the problem instead of sending it; otherwise it calls
``call.fulfil(value)`` or ``call.fulfil(wb.failure(kind, message))``.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import ipywidgets

from workbench.envelope import ErrorKind, as_kind, failure
from workbench.widgets._html import esc, pre, pretty_json, shared_style
from workbench.widgets._view import StaticForm

if TYPE_CHECKING:
    from workbench.runtime import Call

_SIMPLE = {
    "string": ipywidgets.Text,
    "integer": ipywidgets.IntText,
    "number": ipywidgets.FloatText,
    "boolean": ipywidgets.Checkbox,
}


def schema_fields(schema: Any) -> dict[str, ipywidgets.Widget]:
    """One input per property of a simple object schema; empty when the schema is not simple
    (then the result is typed as JSON)."""
    if not isinstance(schema, dict) or schema.get("type") != "object":
        return {}
    properties = schema.get("properties")
    if not isinstance(properties, dict) or not properties:
        return {}
    fields: dict[str, ipywidgets.Widget] = {}
    style = {"description_width": "initial"}
    for name, prop in properties.items():
        if not isinstance(prop, dict):
            return {}
        enum = prop.get("enum")
        if isinstance(enum, list) and enum and all(isinstance(v, str) for v in enum):
            fields[name] = ipywidgets.Dropdown(options=enum, description=name, style=style)
        elif prop.get("type") in _SIMPLE:
            fields[name] = _SIMPLE[prop["type"]](description=name, style=style)
        else:
            return {}
    return fields


class CustomToolForm(StaticForm, ipywidgets.VBox):  # type: ignore[misc]
    """The form a person fills in to finish a custom tool's call (``wb-custom``)."""

    def __init__(self, call: Call) -> None:
        super().__init__()
        self.call = call
        self.tool = call.registry.get(call.tool_name)
        schema = None if self.tool is None else self.tool.spec.output_schema
        self.fields = schema_fields(schema)
        self._required = set(schema.get("required", ())) if isinstance(schema, dict) else set()
        self.plain_text = self.tool is not None and self.tool.spec.family == "text"
        """A text tool's result (a sampling reply among them) is the text as typed."""
        self.result_text = ipywidgets.Textarea(
            placeholder=(
                "the reply, as plain text"
                if self.plain_text
                else 'the result as JSON, e.g. {"answer": 42}, or plain text'
            ),
            layout=ipywidgets.Layout(width="100%", height="6em"),
        )
        self._schema = schema
        self.mode = ipywidgets.ToggleButtons(
            options=(("Result", "result"), ("Failure", "failure")), value="result"
        )
        self.kind = ipywidgets.Dropdown(
            options=[kind.value for kind in ErrorKind], value="execution_error", description="kind"
        )
        self.message = ipywidgets.Text(description="message", placeholder="what the model reads")
        self.submit_button = ipywidgets.Button(description="Submit", button_style="primary")
        self.submit_button.add_class("wb-submit")
        self.problem = ipywidgets.HTML()
        self.result_box = ipywidgets.VBox(tuple(self.fields.values()) or (self.result_text,))
        self.failure_box = ipywidgets.VBox(
            (self.kind, self.message), layout=ipywidgets.Layout(display="none")
        )
        self.mode.observe(self._switch, names="value")
        self.submit_button.on_click(lambda _: self.submit())
        info = ipywidgets.HTML(self._info_html(schema))
        self.children = (
            shared_style(),
            info,
            self.mode,
            self.result_box,
            self.failure_box,
            self.submit_button,
            self.problem,
        )
        self.add_class("wb-custom")

    def _info_html(self, schema: Any) -> str:
        parts = [
            f"<div class='wb-message'><code>{esc(self.call.tool_name)}</code> is a custom tool: "
            "you supply its result.</div>",
            f"<div class='wb-label'>arguments</div>{pre(pretty_json(self.call.arguments))}",
        ]
        if schema is not None:
            parts.append(f"<div class='wb-label'>output schema</div>{pre(pretty_json(schema))}")
        return "".join(parts)

    def _switch(self, change: dict[str, Any]) -> None:
        failing = change["new"] == "failure"
        self.result_box.layout.display = "none" if failing else None
        self.failure_box.layout.display = None if failing else "none"

    def value(self) -> Any:
        """The result as typed: the fields' values; a text tool's text as it is; otherwise the
        parsed JSON, or the text itself when it is not JSON and the tool declares no output
        schema (``ValueError`` when it is not JSON and a schema wants a value). Empty optional
        text fields are left out."""
        if self.fields:
            return {
                name: field.value
                for name, field in self.fields.items()
                if name in self._required or field.value != ""
            }
        typed = self.result_text.value
        if self.plain_text:
            return typed
        try:
            return json.loads(typed)
        except ValueError:
            if self._schema is None:
                return typed
            raise

    def submit(self) -> bool:
        """Send the result or failure to the call; False (and the problem shown) when the
        value is not JSON, does not match the output schema, or a failure has no message."""
        if self.mode.value == "failure":
            message = self.message.value.strip()
            if not message:
                return self._refuse("Write the failure message the model will read.")
            kind = as_kind(self.kind.value)
            self.call.fulfil(failure(kind, message, tool=self.call.tool_name))
            return self._sent()
        try:
            value = self.value()
        except ValueError as exc:
            return self._refuse(
                f"The result is not JSON ({exc}); the output schema wants a JSON value, "
                'e.g. ["red", "teal"], or "text" in quotes'
            )
        problem = None if self.tool is None else self.tool.output_problem(value)
        if problem is not None:
            return self._refuse(f"The result does not match the output schema: {problem}")
        self.call.fulfil(value)
        return self._sent()

    def _refuse(self, text: str) -> bool:
        self.problem.value = f"<div class='wb-bad'>{esc(text)}</div>"
        return False

    def _sent(self) -> bool:
        self.problem.value = "<div class='wb-note'>sent</div>"
        self.submit_button.disabled = True
        return True

    def static_html(self) -> str:
        """The form's question as escaped HTML (without inputs or the stylesheet)."""
        schema = None if self.tool is None else self.tool.spec.output_schema
        return f"<div class='wb-custom'>{self._info_html(schema)}</div>"


__all__ = ["CustomToolForm", "schema_fields"]
