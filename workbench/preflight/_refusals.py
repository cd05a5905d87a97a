"""From jsonschema's validation errors to the one ``invalid_args`` a model can act on.

``describe_error`` picks the single most useful error, deterministically: a missing required
argument first, then an unknown one, then a wrong type, then an enum miss, then anything else;
shallower before deeper; the validator's own order last. It returns the dotted ``field``, an
``expected`` phrase (type, enum values, an example from the schema) and a model-readable message.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from workbench.preflight._json_schema import json_types, resolve

if TYPE_CHECKING:
    from jsonschema.exceptions import ValidationError

_PRIORITY = {
    "required": 0,
    "additionalProperties": 1,
    "unevaluatedProperties": 1,
    "type": 2,
    "enum": 3,
    "const": 3,
}
_BARE_PHRASES = ("one of ", "exactly ", "any ")
_MAX_LISTED = 12
_PREVIEW_CHARS = 40

Described = tuple[str | None, str | None, str]


def describe_error(errors: Sequence[ValidationError], root: Mapping[str, Any]) -> Described:
    """``(field, expected, message)`` for the most useful of ``errors`` (which is non-empty).

    A missing argument sent under another name (``{"file": ...}`` for ``path``) is the commonest
    slip, so a missing-argument message also names an unknown key sent beside it.
    """
    error = _descend(_pick(errors), root)
    path = _path(error.absolute_path)
    handler = _HANDLERS.get(str(error.validator), _other)
    field, expected, message = handler(error, path, root)
    if error.validator == "required":
        stray = next(
            (
                other
                for other in errors
                if other.validator in ("additionalProperties", "unevaluatedProperties")
                and list(other.absolute_path) == list(error.absolute_path)
            ),
            None,
        )
        if stray is not None:
            unknown, _expected, _message = _unknown(stray, path, root)
            message += (
                f" The unknown argument `{unknown}` was sent instead; rename it to `{field}`."
            )
    return field, expected, message


def _pick(errors: Iterable[ValidationError]) -> ValidationError:
    ranked = sorted(
        enumerate(errors),
        key=lambda pair: (_PRIORITY.get(str(pair[1].validator), 4), len(pair[1].path), pair[0]),
    )
    return ranked[0][1]


def _descend(error: ValidationError, root: Mapping[str, Any]) -> ValidationError:
    """Inside ``anyOf``/``oneOf`` of one type and null, the error of the non-null branch when it
    is deeper or about missing/unknown keys; otherwise the union error itself ("X or null")."""
    while error.validator in ("anyOf", "oneOf") and error.context and error.instance is not None:
        branches = error.validator_value if isinstance(error.validator_value, list) else []
        others = [
            index
            for index, branch in enumerate(branches)
            if not (isinstance(branch, Mapping) and json_types(resolve(branch, root)) == {"null"})
        ]
        if len(others) != 1:
            return error
        inside = [e for e in error.context if e.relative_schema_path[0] == others[0]]
        useful = [
            e
            for e in inside
            if len(e.absolute_path) > len(error.absolute_path)
            or _PRIORITY.get(str(e.validator)) in (0, 1)
        ]
        if not useful:
            return error
        error = _pick(useful)
    return error


def _about_keys(error: ValidationError) -> bool:
    return _PRIORITY.get(str(error.validator)) in (0, 1)


def _path(parts: Iterable[Any]) -> str:
    text = ""
    for part in parts:
        if isinstance(part, int):
            text += f"[{part}]"
        else:
            text += f".{part}" if text else str(part)
    return text


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def _subject(path: str) -> str:
    return f"Argument `{path}`" if path else "Arguments"


# --- one handler per validator keyword ----------------------------------------------------------


def _required(error: ValidationError, path: str, root: Mapping[str, Any]) -> Described:
    instance = error.instance if isinstance(error.instance, Mapping) else {}
    names = error.validator_value if isinstance(error.validator_value, list) else []
    missing = next((str(name) for name in names if name not in instance), "")
    properties = error.schema.get("properties", {}) if isinstance(error.schema, Mapping) else {}
    schema = properties.get(missing, {}) if isinstance(properties, Mapping) else {}
    field = _join(path, missing)
    message = f"Missing required argument `{field}` ({type_phrase(schema, root)})."
    return field, expected_text(schema, root), message


def _unknown(error: ValidationError, path: str, root: Mapping[str, Any]) -> Described:
    schema = error.schema if isinstance(error.schema, Mapping) else {}
    properties = schema.get("properties", {})
    declared = [str(name) for name in properties] if isinstance(properties, Mapping) else []
    patterns = schema.get("patternProperties", {})
    instance = error.instance if isinstance(error.instance, Mapping) else {}
    unknown = next(
        (str(key) for key in instance if key not in declared and not _matches(key, patterns)),
        "",
    )
    field = _join(path, unknown)
    owner = "this tool" if not path else f"`{path}`"
    if declared:
        accepted = ", ".join(f"`{name}`" for name in declared[:_MAX_LISTED])
        message = f"Unknown argument `{field}`; {owner} accepts: {accepted}."
        expected = "one of: " + ", ".join(declared[:_MAX_LISTED])
    else:
        message = f"Unknown argument `{field}`; {owner} takes no arguments."
        expected = "no arguments"
    return field, expected, message


def _matches(key: object, patterns: object) -> bool:
    if not isinstance(key, str) or not isinstance(patterns, Mapping):
        return False
    return any(re.search(str(pattern), key) for pattern in patterns)


def _type(error: ValidationError, path: str, root: Mapping[str, Any]) -> Described:
    schema = error.schema if isinstance(error.schema, Mapping) else {}
    got = _got(error.instance)
    message = f"{_subject(path)} must be {_article(type_phrase(schema, root))}, got {got}."
    return path or None, expected_text(schema, root), message


def _got(value: Any) -> str:
    return "null" if value is None else f"{json_type(value)} {preview(value)}"


def _enum(error: ValidationError, path: str, root: Mapping[str, Any]) -> Described:
    schema = error.schema if isinstance(error.schema, Mapping) else {}
    phrase = type_phrase(schema, root)
    message = f"{_subject(path)} must be {phrase}; got {preview(error.instance)}."
    return path or None, phrase, message


_CONSTRAINTS: dict[str, str] = {
    "minLength": "must be at least {v} characters long",
    "maxLength": "must be at most {v} characters long",
    "minimum": "must be at least {v}",
    "maximum": "must be at most {v}",
    "exclusiveMinimum": "must be greater than {v}",
    "exclusiveMaximum": "must be less than {v}",
    "multipleOf": "must be a multiple of {v}",
    "minItems": "must have at least {v} items",
    "maxItems": "must have at most {v} items",
    "uniqueItems": "must not contain duplicate items",
    "minProperties": "must have at least {v} keys",
    "maxProperties": "must have at most {v} keys",
    "pattern": "must match the pattern {v}",
    "format": "must be a valid {v}",
    "oneOf": "must match exactly one of the allowed forms",
    "not": "is not allowed in this form",
}


def _other(error: ValidationError, path: str, root: Mapping[str, Any]) -> Described:
    schema = error.schema if isinstance(error.schema, Mapping) else {}
    template = _CONSTRAINTS.get(str(error.validator))
    if template is not None:
        phrase = template.format(v=preview(error.validator_value))
    else:
        verb = "is" if path else "are"
        phrase = f"{verb} invalid: {_clip(error.message, 160)}"
    message = f"{_subject(path)} {phrase}; got {preview(error.instance)}."
    return path or None, expected_text(schema, root), message


_HANDLERS: dict[str, Callable[[ValidationError, str, Mapping[str, Any]], Described]] = {
    "required": _required,
    "additionalProperties": _unknown,
    "unevaluatedProperties": _unknown,
    "type": _type,
    "anyOf": _type,
    "enum": _enum,
    "const": _enum,
}


# --- describing what a schema expects -----------------------------------------------------------


def type_phrase(schema: Any, root: Mapping[str, Any]) -> str:
    """What values of ``schema`` look like: ``integer``, ``array of string``, ``one of "a"``."""
    if not isinstance(schema, Mapping):
        return "any JSON value"
    node = resolve(schema, root)
    if isinstance(node.get("enum"), list):
        values = node["enum"]
        listed = ", ".join(preview(v) for v in values[:_MAX_LISTED])
        return f"one of {listed}" + (", …" if len(values) > _MAX_LISTED else "")
    if "const" in node:
        return f"exactly {preview(node['const'])}"
    for keyword in ("anyOf", "oneOf"):
        branches = node.get(keyword)
        if isinstance(branches, list) and branches:
            phrases = list(dict.fromkeys(type_phrase(b, root) for b in branches))
            return " or ".join(phrases)
    kinds = node.get("type")
    names = [kinds] if isinstance(kinds, str) else kinds if isinstance(kinds, list) else []
    if not names:
        return "object" if isinstance(node.get("properties"), Mapping) else "any JSON value"
    return " or ".join(_single_type(str(name), node, root) for name in names)


def _single_type(name: str, node: Mapping[str, Any], root: Mapping[str, Any]) -> str:
    if name == "array" and isinstance(node.get("items"), Mapping):
        return f"array of {type_phrase(node['items'], root)}"
    if name == "string" and isinstance(node.get("format"), str):
        return f"string ({node['format']})"
    return name


def expected_text(schema: Any, root: Mapping[str, Any]) -> str:
    """``type_phrase`` plus an example from the schema's ``default`` or ``examples``."""
    phrase = type_phrase(schema, root)
    node = resolve(schema, root) if isinstance(schema, Mapping) else {}
    examples = node.get("examples")
    if node.get("default") is not None:
        return f"{phrase}, e.g. {preview(node['default'])}"
    if isinstance(examples, list) and examples:
        return f"{phrase}, e.g. {preview(examples[0])}"
    return phrase


def _article(phrase: str) -> str:
    if phrase.startswith(_BARE_PHRASES) or phrase == "null":
        return phrase
    return ("an " if phrase[:1] in "aeiou" else "a ") + phrase


def json_type(value: object) -> str:
    """The JSON name of a Python value's type (``"string"``, ``"array"``, ...)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list | tuple):
        return "array"
    if isinstance(value, Mapping):
        return "object"
    return type(value).__name__


_PREVIEW_ENCODER = json.JSONEncoder(ensure_ascii=False, default=repr)
"""``json.dumps(value, ensure_ascii=False, default=repr)``, built once (it keeps no state
between calls): a preview is made for every coercion of every imported call."""


def preview(value: Any, limit: int = _PREVIEW_CHARS) -> str:
    """A short JSON rendering of ``value`` for messages (long values are cut with ``…``)."""
    if isinstance(value, str) and len(value) > limit:
        value = value[:limit]  # a 100k-character argument need not be encoded to be cut
    elif type(value) is int:
        return _clip(repr(value), limit)  # JSON writes an int as its repr: no encoder needed
    try:
        text = _PREVIEW_ENCODER.encode(value)
    except (ValueError, RecursionError):
        text = repr(value)
    return _clip(text, limit)


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"
