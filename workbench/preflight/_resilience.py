"""The resilience matrix: the mistakes models really make, sent through a tool's preflight only.

From the input schema alone, ``resilience_matrix`` builds a valid baseline (defaults, examples,
first enum values, type-based placeholders) and then one case per mistake: string-encoded
numbers and booleans, JSON-encoded arrays and objects, empty fillers and nulls for optional
parameters, mixed-case enums, arguments wrapped in ``{"properties": ...}``, unknown keys, each
missing required argument, wrong types, a 100,000-character string, unicode. Nothing runs but the
preflight, so a tool body never sees these cases. The same inputs give the same table.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, Protocol

from workbench.preflight._json_schema import json_types, resolve, split_nullable
from workbench.preflight._preflight import Preflight, PreflightResult, forgiven

if TYPE_CHECKING:
    import pandas as pd


class Declared(Protocol):
    """A tool's declaration, as far as the matrix reads it."""

    @property
    def input_schema(self) -> dict[str, Any]: ...


Outcome = Literal["accepted", "coerced", "refused"]
COLUMNS = ("case", "input", "outcome", "arguments", "coercions", "field", "expected", "message")
LONG_STRING_CHARS = 100_000
UNICODE_SAMPLE = "naïve café — 東京 🚀 Ωμέγα"
_FORMAT_EXAMPLES = {
    "date-time": "2024-01-31T12:00:00Z",
    "date": "2024-01-31",
    "time": "12:00:00",
    "email": "ada@example.com",
    "uri": "https://example.com/",
    "url": "https://example.com/",
    "uuid": "123e4567-e89b-42d3-a456-426614174000",
    "path": "example.txt",
}
_MAX_DEPTH = 6


@dataclass(frozen=True)
class Case:
    """One mistake to send: a short name and the raw arguments."""

    name: str
    raw: object


def resilience_matrix(spec: Declared, preflight: Preflight) -> pd.DataFrame:
    """The table of every generated case and what the preflight made of it.

    Columns: ``case``, ``input`` (the raw arguments sent), ``outcome`` (``accepted`` |
    ``coerced`` | ``refused``), ``arguments`` (the resulting arguments, or None), ``coercions``
    (list of str: what was forgiven; arguments parsed from a JSON string, the wire's own form,
    are not), and the refusal's ``field``, ``expected`` and ``message``.
    """
    import pandas as pd

    rows = [_row(case, preflight(case.raw)) for case in mistakes(spec.input_schema)]
    # object dtype keeps None as None and lists as lists (not NaN, not strings)
    return pd.DataFrame(rows, columns=list(COLUMNS), dtype=object)


def _row(case: Case, result: PreflightResult) -> dict[str, Any]:
    # Arguments sent as a JSON string are the form provider APIs carry them in, not a mistake
    # forgiven: such a case reads "accepted", like the baseline.
    mistakes = forgiven(result.coercions)
    outcome: Outcome = "refused" if not result.ok else "coerced" if mistakes else "accepted"
    error = result.error.error if result.error is not None else None
    return {
        "case": case.name,
        "input": case.raw,
        "outcome": outcome,
        "arguments": result.arguments,
        "coercions": [str(coercion) for coercion in mistakes],
        "field": error.field if error else None,
        "expected": error.expected if error else None,
        "message": error.message if error else None,
    }


def refuses_unknown_properties(preflight: Preflight, baseline: dict[str, Any]) -> bool:
    """True when an unknown key is refused with ``field`` naming it, at the top level and in
    every nested object of ``baseline`` whose schema declares properties.

    ``baseline`` must itself be accepted; ``baseline_arguments`` builds one from the schema.
    """
    schema = preflight.input_schema
    root = resolve(schema, schema)
    for path, properties in _objects(baseline, root, schema, ()):
        key = unknown_name(properties)
        result = preflight(_set_in(baseline, (*path, key), "surprise"))
        error = result.error.error if result.error is not None else None
        if error is None or error.field != ".".join((*path, key)):
            return False
    return True


def _objects(
    value: Mapping[str, Any],
    schema: Mapping[str, Any],
    root: Mapping[str, Any],
    path: tuple[str, ...],
) -> Iterator[tuple[tuple[str, ...], Mapping[str, Any]]]:
    properties = schema.get("properties")
    properties = properties if isinstance(properties, Mapping) else {}
    yield path, properties
    for name, item in value.items():
        sub = properties.get(name)
        if isinstance(item, Mapping) and isinstance(sub, Mapping):
            inner, _ = split_nullable(sub, root)
            if isinstance(inner.get("properties"), Mapping):
                yield from _objects(item, inner, root, (*path, name))


def unknown_name(properties: Mapping[str, Any]) -> str:
    """An argument name the schema does not declare."""
    name = "unexpected_argument"
    while name in properties:
        name += "_"
    return name


# --- the baseline -------------------------------------------------------------------------------


def baseline_arguments(schema: Mapping[str, Any]) -> dict[str, Any]:
    """Valid-looking arguments for ``schema``: every required property, from the schema's
    default, examples, const or first enum value, else a placeholder of the right type."""
    value = placeholder(schema, schema)
    return value if isinstance(value, dict) else {}


def placeholder(schema: Any, root: Mapping[str, Any], depth: int = 0) -> Any:
    """A value ``schema`` accepts in the common case (constraints such as ``pattern`` aside)."""
    if not isinstance(schema, Mapping) or depth > _MAX_DEPTH:
        return None
    node, _ = split_nullable(schema, root)
    examples = node.get("examples")
    enum = node.get("enum")
    if node.get("default") is not None:
        return copy.deepcopy(node["default"])
    if isinstance(examples, list) and examples:
        return copy.deepcopy(examples[0])
    if "const" in node:
        return copy.deepcopy(node["const"])
    if isinstance(enum, list) and enum:
        return copy.deepcopy(enum[0])
    branches = node.get("anyOf") or node.get("oneOf")
    if isinstance(branches, list) and branches:
        return placeholder(branches[0], root, depth + 1)
    kinds = json_types(node) - {"null"}
    if isinstance(node.get("properties"), Mapping) and not kinds:
        kinds = {"object"}
    return _typed_placeholder(min(kinds) if kinds else "string", node, root, depth)


def _typed_placeholder(
    kind: str, node: Mapping[str, Any], root: Mapping[str, Any], depth: int
) -> Any:
    if kind == "object":
        properties = node.get("properties")
        required = node.get("required")
        names = required if isinstance(required, list) else []
        if not isinstance(properties, Mapping):
            return {}
        return {name: placeholder(properties.get(name), root, depth + 1) for name in names}
    if kind == "array":
        count = node.get("minItems", 1)
        item = placeholder(node.get("items"), root, depth + 1)
        return [copy.deepcopy(item) for _ in range(count if isinstance(count, int) else 1)]
    if kind in ("integer", "number"):
        return _number(kind, node)
    if kind == "boolean":
        return True
    if kind == "null":
        return None
    return _string(node)


def _number(kind: str, node: Mapping[str, Any]) -> int | float:
    value: float = 1 if kind == "integer" else 1.5
    low, high = node.get("minimum"), node.get("maximum")
    if isinstance(node.get("exclusiveMinimum"), int | float):
        low = node["exclusiveMinimum"] + 1
    if isinstance(node.get("exclusiveMaximum"), int | float):
        high = node["exclusiveMaximum"] - 1
    if isinstance(low, int | float):
        value = max(value, low)
    if isinstance(high, int | float):
        value = min(value, high)
    return int(value) if kind == "integer" else float(value)


def _string(node: Mapping[str, Any]) -> str:
    fmt = node.get("format")
    text = _FORMAT_EXAMPLES.get(fmt, "example") if isinstance(fmt, str) else "example"
    shortest, longest = node.get("minLength"), node.get("maxLength")
    if isinstance(shortest, int) and len(text) < shortest:
        text = text + "x" * (shortest - len(text))
    if isinstance(longest, int):
        text = text[:longest]
    return text


# --- the mistakes -------------------------------------------------------------------------------


def mistakes(schema: Mapping[str, Any]) -> list[Case]:
    """Every case for ``schema``, the valid baseline first, in schema order."""
    root = resolve(schema, schema)
    base = baseline_arguments(schema)
    cases = [Case("baseline", base)]
    cases.extend(_argument_cases(base, root))
    cases.extend(_field_cases(base, root, schema, ()))
    return cases


def _argument_cases(base: dict[str, Any], root: Mapping[str, Any]) -> Iterator[Case]:
    properties = root.get("properties")
    properties = properties if isinstance(properties, Mapping) else {}
    yield Case("json_string_arguments", json.dumps(base, ensure_ascii=False))
    yield Case("malformed_json_arguments", json.dumps(base, ensure_ascii=False)[:-1] or "{")
    yield Case("non_object_arguments", ["not", "an", "object"])
    yield Case("null_arguments", None)
    if "properties" not in properties and properties:
        wrapped = base or {
            name: placeholder(sub, root) for name, sub in list(properties.items())[:1]
        }
        yield Case("wrapped_properties", {"properties": wrapped})
    yield Case("unknown_key", {**base, unknown_name(properties): "surprise"})


def _field_cases(
    base: dict[str, Any], node: Mapping[str, Any], root: Mapping[str, Any], path: tuple[str, ...]
) -> Iterator[Case]:
    properties = node.get("properties")
    required = node.get("required")
    required_names = set(required) if isinstance(required, list) else set()
    if not isinstance(properties, Mapping):
        return
    for name, sub in properties.items():
        field = (*path, str(name))
        label = ".".join(field)
        inner, nullable = split_nullable(sub, root) if isinstance(sub, Mapping) else ({}, True)
        value = placeholder(sub, root)
        yield from _type_cases(base, field, label, inner, value, root)
        if name in required_names:
            yield Case(f"missing:{label}", _delete_in(base, field))
            if not nullable:
                yield Case(f"null_required:{label}", _set_in(base, field, None))
        else:
            yield Case(f"empty_filler:{label}", _set_in(base, field, ""))
            yield Case(f"null_optional:{label}", _set_in(base, field, None))
        if isinstance(inner.get("properties"), Mapping) and isinstance(value, dict):
            nested = _set_in(base, field, value)
            nested_unknown = {**value, unknown_name(inner["properties"]): "surprise"}
            yield Case(f"unknown_key:{label}", _set_in(base, field, nested_unknown))
            yield from _field_cases(nested, inner, root, field)


def _type_cases(
    base: dict[str, Any],
    field: tuple[str, ...],
    label: str,
    inner: Mapping[str, Any],
    value: Any,
    root: Mapping[str, Any],
) -> Iterator[Case]:
    kinds = json_types(inner)
    if "integer" in kinds or "number" in kinds:
        number = value if isinstance(value, int | float) and not isinstance(value, bool) else 1
        rule = "string_integer" if "integer" in kinds else "string_number"
        yield Case(f"{rule}:{label}", _set_in(base, field, str(number)))
        yield Case(f"wrong_type:{label}", _set_in(base, field, "not a number"))
    if "boolean" in kinds:
        yield Case(f"string_boolean:{label}", _set_in(base, field, "true"))
        yield Case(f"word_boolean:{label}", _set_in(base, field, "No"))
        yield Case(f"wrong_type:{label}", _set_in(base, field, "maybe"))
    if "array" in kinds:
        items = value if isinstance(value, list) else []
        yield Case(f"json_array:{label}", _set_in(base, field, json.dumps(items)))
        yield Case(f"bare_string_array:{label}", _set_in(base, field, "just a string"))
        yield Case(f"wrong_type:{label}", _set_in(base, field, 42))
    if "object" in kinds and isinstance(value, dict):
        yield Case(f"json_object:{label}", _set_in(base, field, json.dumps(value)))
        yield Case(f"wrong_type:{label}", _set_in(base, field, 42))
    enum = inner.get("enum")
    if isinstance(enum, list) and enum:
        yield from _enum_cases(base, field, label, enum)
    elif "string" in kinds:
        yield Case(f"wrong_type:{label}", _set_in(base, field, 12345))
        yield Case(f"long_string:{label}", _set_in(base, field, "x" * LONG_STRING_CHARS))
        yield Case(f"unicode:{label}", _set_in(base, field, UNICODE_SAMPLE))


def _enum_cases(
    base: dict[str, Any], field: tuple[str, ...], label: str, enum: list[Any]
) -> Iterator[Case]:
    first = next((v for v in enum if isinstance(v, str) and v.lower() != v.upper()), None)
    if first is not None:
        mixed = first.capitalize() if first.capitalize() != first else first.swapcase()
        yield Case(f"mixed_case_enum:{label}", _set_in(base, field, mixed))
    yield Case(f"not_in_enum:{label}", _set_in(base, field, "not-one-of-the-options"))


def _set_in(base: dict[str, Any], path: tuple[str, ...], value: Any) -> dict[str, Any]:
    out = copy.deepcopy(base)
    node = out
    for key in path[:-1]:
        child = node.get(key)
        if not isinstance(child, dict):
            child = node[key] = {}
        node = child
    node[path[-1]] = value
    return out


def _delete_in(base: dict[str, Any], path: tuple[str, ...]) -> dict[str, Any]:
    out = copy.deepcopy(base)
    node: Any = out
    for key in path[:-1]:
        node = node.get(key) if isinstance(node, dict) else None
    if isinstance(node, dict):
        node.pop(path[-1], None)
    return out
