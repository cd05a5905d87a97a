"""A form generated from a tool's input schema: one input per top-level property.

Strings get a text box, integers and numbers a number box, booleans a checkbox, enums a
dropdown, and arrays, objects and anything else JSON text. Optional properties start unset (the
tool's own default then applies) and become set as soon as the person edits them; unticking
leaves them out again. The form only gathers values: the preflight decides what they mean, so
JSON text that does not parse is sent as the string typed, as a model would send it.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

import ipywidgets as widgets

from workbench.preflight import json_types, resolve, split_nullable
from workbench.widgets._html import esc

InputKind = Literal["text", "integer", "number", "boolean", "enum", "json"]
_SCALARS: dict[str, InputKind] = {
    "string": "text",
    "integer": "integer",
    "number": "number",
    "boolean": "boolean",
}
_JSON_PLACEHOLDERS = {"array": '["first", "second"]', "object": '{"key": "value"}'}


def input_kind(
    schema: Mapping[str, Any], root: Mapping[str, Any]
) -> tuple[InputKind, dict[str, Any]]:
    """Which input a property gets, and its schema with references and ``null`` unwrapped."""
    node, _nullable = split_nullable(schema, root)
    enum = node.get("enum")
    if isinstance(enum, list) and enum:
        return "enum", node
    types = json_types(node)
    if len(types) == 1:
        return _SCALARS.get(types.pop(), "json"), node
    return "json", node


@dataclass
class Field:
    """One property's input: ``toggle`` (optional properties only) says whether it is sent;
    ``help`` shows the property's description."""

    name: str
    kind: InputKind
    required: bool
    schema: dict[str, Any]
    input: widgets.Widget
    toggle: widgets.Checkbox | None
    row: widgets.Box
    help: widgets.HTML | None = None

    @property
    def is_set(self) -> bool:
        """True when the value will be sent."""
        return self.toggle is None or bool(self.toggle.value)

    def value(self) -> Any:
        """The value as it will be sent (JSON text parsed when it parses)."""
        value = self.input.value
        if self.kind != "json":
            return value
        try:
            return json.loads(value)
        except ValueError:
            return value


def _input(kind: InputKind, node: Mapping[str, Any]) -> widgets.Widget:
    default = node.get("default")
    layout = widgets.Layout(width="auto", flex="1 1 auto")
    if kind == "enum":
        values = list(node["enum"])
        options = [(v if isinstance(v, str) else json.dumps(v), v) for v in values]
        chosen = default if default in values else values[0]
        return widgets.Dropdown(options=options, value=chosen, layout=layout)
    if kind == "boolean":
        return widgets.Checkbox(value=default is True, indent=False)
    if kind == "integer":
        number = default if isinstance(default, int) and not isinstance(default, bool) else 0
        return widgets.IntText(value=number, layout=layout)
    if kind == "number":
        real = 0.0 if isinstance(default, bool) or not isinstance(default, int | float) else default
        return widgets.FloatText(value=float(real), layout=layout)
    if kind == "text":
        text = default if isinstance(default, str) else ""
        return widgets.Text(value=text, placeholder=str(node.get("format", "")), layout=layout)
    types = sorted(json_types(node))
    placeholder = _JSON_PLACEHOLDERS.get(types[0] if len(types) == 1 else "", "any JSON value")
    text = "" if default is None else json.dumps(default, ensure_ascii=False)
    return widgets.Textarea(value=text, placeholder=placeholder, rows=2, layout=layout)


def _tick_box(*, required: bool) -> widgets.Checkbox:
    # A required field shows a ticked, disabled box: always sent, and the rows line up.
    box = widgets.Checkbox(
        value=required,
        disabled=required,
        indent=False,
        tooltip="required: always sent" if required else "send this optional argument",
        layout=widgets.Layout(width="2em"),
    )
    box.add_class("wb-form-required" if required else "wb-form-set")
    return box


def make_field(
    name: str, schema: Mapping[str, Any], root: Mapping[str, Any], *, required: bool
) -> Field:
    """The input row of one property: tick box, name, then the input over its description."""
    kind, node = input_kind(schema, root)
    control = _input(kind, node)
    control.add_class("wb-form-input")
    box = _tick_box(required=required)
    toggle = None if required else box
    if toggle is not None:
        sent = toggle

        def mark_set(_change: object) -> None:
            sent.value = True

        control.observe(mark_set, names="value")
    label = widgets.Label(name + (" *" if required else ""), layout=widgets.Layout(width="12em"))
    description = node.get("description") or schema.get("description")
    help_text = None
    if isinstance(description, str) and description:
        help_text = widgets.HTML(f"<div class='wb-form-help'>{esc(description)}</div>")
    column = widgets.VBox(
        [control, *([help_text] if help_text else [])], layout=widgets.Layout(flex="1 1 auto")
    )
    row = widgets.HBox([box, label, column])
    row.add_class("wb-form-field")
    row.add_class(f"wb-form-{kind}")
    return Field(name, kind, required, node, control, toggle, row, help_text)


class SchemaForm:
    """The inputs for one input schema; ``arguments()`` gathers what is set."""

    def __init__(self, input_schema: Mapping[str, Any]) -> None:
        root = resolve(input_schema, input_schema)
        properties = root.get("properties")
        properties = properties if isinstance(properties, Mapping) else {}
        required = root.get("required")
        needed = set(required) if isinstance(required, list) else set()
        self.fields = [
            make_field(str(name), sub, input_schema, required=name in needed)
            for name, sub in properties.items()
            if isinstance(sub, Mapping)
        ]
        rows: list[widgets.Widget] = [field.row for field in self.fields]
        if not rows:
            rows = [widgets.HTML("<i>This tool takes no arguments.</i>")]
        self.widget = widgets.VBox(rows)
        self.widget.add_class("wb-form")

    def field(self, name: str) -> Field:
        """The field of property ``name``."""
        for field in self.fields:
            if field.name == name:
                return field
        raise KeyError(f"no field {name!r}; fields: {', '.join(f.name for f in self.fields)}")

    def arguments(self) -> dict[str, Any]:
        """The arguments to send: every required field and every optional one that is set."""
        return {field.name: field.value() for field in self.fields if field.is_set}
