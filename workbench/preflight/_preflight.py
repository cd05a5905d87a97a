"""The argument preflight: forgive the mistakes models make, then validate strictly.

``Preflight(schema, tool_name=...)`` compiles a tool's input schema once into plain closures;
calling it with a model's raw arguments coerces what the schema clearly asks for (``"15"`` → 15
for an integer, a JSON-encoded array for an array, ``"Pinned"`` → ``"pinned"`` for an enum, empty
fillers for optional parameters dropped, ...), records every coercion, and validates the result
with a Draft 2020-12 validator. A refusal is an ``invalid_args`` envelope whose ``field`` and
``expected`` tell the model what to fix. The preflight never raises.

Coercion never goes further than the schema asks: a JSON-looking string for a ``string``
parameter stays a string, a number for a string is refused, and unions of several non-null types
are left to the validator.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from enum import Enum
from typing import TYPE_CHECKING, Any, Final

if TYPE_CHECKING:
    from jsonschema import Draft202012Validator

from workbench.envelope import Envelope, failure
from workbench.preflight._json_schema import (
    draft_2020_12,
    json_types,
    resolve,
    split_nullable,
)
from workbench.preflight._refusals import describe_error, json_type, preview

__all__ = ["DROPPED", "Coercion", "Preflight", "PreflightResult"]


class _Dropped(Enum):
    DROPPED = "DROPPED"

    def __repr__(self) -> str:
        return "DROPPED"


DROPPED: Final = _Dropped.DROPPED
"""``Coercion.after`` for an argument the preflight removed."""

_TRUE = frozenset({"true", "yes", "1", "on"})
_FALSE = frozenset({"false", "no", "0", "off"})
_DROP_REASONS = {
    "dropped_empty_optional": "empty optional",
    "dropped_null_optional": "null for an optional argument",
}
_INTEGER = re.compile(r"[+-]?[0-9]+")
_NUMBER = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")


@dataclass(frozen=True, slots=True)
class Coercion:
    """One thing the preflight forgave: the argument path, the rule, the value before and after."""

    field: str
    rule: str
    before: Any
    after: Any

    @property
    def is_wire_form(self) -> bool:
        """True when the arguments came as a JSON string and were parsed: the form provider
        APIs carry them in (OpenAI's always), not a mistake worth a note to the person."""
        return self.rule == "parsed_json_arguments"

    def __str__(self) -> str:
        name = self.field or "arguments"
        if self.after is DROPPED:
            reason = _DROP_REASONS.get(self.rule, self.rule)
            return f"{name}: {preview(self.before)} dropped ({reason})"
        if self.rule == "parsed_json_arguments":
            return "arguments: JSON string parsed into an object"
        if self.rule == "unwrapped_properties":
            return 'arguments: unwrapped from {"properties": ...}'
        return f"{name}: {preview(self.before)} → {preview(self.after)}"


def forgiven(coercions: Iterable[Coercion]) -> list[Coercion]:
    """The coercions that forgave a mistake: all but arguments parsed from a JSON string, the
    form provider APIs carry them in (``Coercion.is_wire_form``)."""
    return [coercion for coercion in coercions if not coercion.is_wire_form]


@dataclass(frozen=True, slots=True)
class PreflightResult:
    """The outcome of one preflight: coerced arguments, or an ``invalid_args`` envelope."""

    arguments: dict[str, Any] | None
    coercions: tuple[Coercion, ...]
    error: Envelope | None

    @property
    def ok(self) -> bool:
        """True when the arguments were accepted (possibly after coercion)."""
        return self.error is None


# --- compiling a schema into coercers -----------------------------------------------------------

Coerce = Callable[[Any, str, list[Coercion]], Any]
"""Takes a value, its path and the coercion log; returns the (possibly new) value."""


class _Refusal(Exception):
    def __init__(self, message: str, expected: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.expected = expected


class _Compiler:
    """Turns schema nodes into coercers; ``$ref`` targets are compiled once, cycles allowed."""

    def __init__(self, root: Mapping[str, Any]) -> None:
        self.root = root
        self.refs: dict[str, list[Coerce | None]] = {}

    def node(self, schema: Any) -> Coerce | None:
        """The coercer for ``schema``, or None when no value of it is ever coerced.

        Coercers pass ``None`` through untouched, so a nullable schema compiles like its
        non-null part.
        """
        if not isinstance(schema, Mapping):
            return None
        ref = schema.get("$ref")
        if isinstance(ref, str):
            # Siblings of a $ref are annotations (description, default) in practice.
            return self._ref(ref)
        all_of = schema.get("allOf")
        if isinstance(all_of, list) and len(all_of) == 1 and isinstance(all_of[0], Mapping):
            return self.node({**all_of[0], **{k: v for k, v in schema.items() if k != "allOf"}})
        for keyword in ("anyOf", "oneOf"):
            branches = schema.get(keyword)
            if isinstance(branches, list):
                others = [b for b in branches if not _is_null(b, self.root)]
                if len(others) == 1:
                    return self.node(others[0])
                return self._object_union(others)
        kinds = json_types(schema) - {"null"}
        base: Coerce | None = None
        if kinds == {"object"} or (not kinds and isinstance(schema.get("properties"), Mapping)):
            base = self._object(schema)
        elif kinds == {"array"}:
            base = self._array(schema)
        elif kinds == {"integer"}:
            base = _coerce_integer
        elif kinds == {"number"}:
            base = _coerce_number
        elif kinds == {"boolean"}:
            base = _coerce_boolean
        enum = schema.get("enum")
        if isinstance(enum, list) and any(isinstance(v, str) for v in enum):
            return _with_enum_case(base, enum)
        return base

    def _object_union(self, branches: list[Any]) -> Coerce | None:
        """For a union of models: a dict takes the coercions of the first object branch that
        then validates (so a strict model's ``null`` for an optional field of one branch is
        dropped); anything else is left to the validator."""
        validator_class = draft_2020_12()
        defs = self.root.get("$defs")
        options: list[tuple[Coerce, Draft202012Validator]] = []
        for branch in branches:
            node = resolve(branch, self.root) if isinstance(branch, Mapping) else {}
            if not isinstance(node.get("properties"), Mapping):
                continue
            coerce = self.node(node)
            if coerce is not None:
                alone = {**node, "$defs": defs} if isinstance(defs, Mapping) else node
                options.append((coerce, validator_class(alone)))
        if not options:
            return None

        def coerce_union(value: Any, path: str, log: list[Coercion]) -> Any:
            if type(value) is not dict:
                return value
            for coerce, validator in options:
                tried: list[Coercion] = []
                candidate = coerce(value, path, tried)
                if validator.is_valid(candidate):
                    log.extend(tried)
                    return candidate
            return value

        return coerce_union

    def _ref(self, ref: str) -> Coerce | None:
        cell = self.refs.get(ref)
        if cell is None:
            cell = self.refs[ref] = [None]
            cell[0] = self.node(resolve({"$ref": ref}, self.root))
        return lambda value, path, log: value if cell[0] is None else cell[0](value, path, log)

    def _array(self, schema: Mapping[str, Any]) -> Coerce:
        items = self.node(schema.get("items"))
        prefix = schema.get("prefixItems")
        prefixed = [self.node(s) for s in prefix] if isinstance(prefix, list) else []

        def coerce_array(value: Any, path: str, log: list[Coercion]) -> Any:
            value = _unquoted(value, list, "json_string_to_array", path, log)
            if type(value) is not list or not (items or prefixed):
                return value
            out = list(value)
            for index, item in enumerate(value):
                coerce = prefixed[index] if index < len(prefixed) else items
                if coerce is not None:
                    out[index] = coerce(item, f"{path}[{index}]", log)
            return out

        return coerce_array

    def _object(self, schema: Mapping[str, Any]) -> Coerce:
        walk = self.walker(schema)

        def coerce_object(value: Any, path: str, log: list[Coercion]) -> Any:
            value = _unquoted(value, dict, "json_string_to_object", path, log)
            return walk(value, path, log) if type(value) is dict else value

        return coerce_object

    def walker(self, schema: Mapping[str, Any]) -> Coerce:
        """The coercer for a dict of arguments: drops empty/null optionals, recurses per key."""
        properties = schema.get("properties")
        properties = properties if isinstance(properties, Mapping) else {}
        required = schema.get("required")
        required_names = set(required) if isinstance(required, list) else set()
        fields: dict[str, tuple[Coerce | None, bool, bool, bool]] = {}
        for name, sub in properties.items():
            inner, nullable = (
                split_nullable(sub, self.root) if isinstance(sub, Mapping) else ({}, True)
            )
            enum = inner.get("enum")
            keeps_empty = isinstance(enum, list) and "" in enum
            fields[name] = (self.node(sub), name not in required_names, nullable, keeps_empty)
        extra = schema.get("additionalProperties")
        others = self.node(extra) if isinstance(extra, Mapping) else None

        def walk(value: Any, path: str, log: list[Coercion]) -> Any:
            out: dict[str, Any] = {}
            for key, item in value.items():
                child = f"{path}.{key}" if path else key
                spec = fields.get(key)
                if spec is None:
                    if type(key) is not str:
                        raise _Refusal(
                            f"Argument names must be strings, got {preview(key)}.",
                            "an object whose keys are argument names",
                        )
                    out[key] = others(item, child, log) if others is not None else item
                    continue
                coerce, optional, nullable, keeps_empty = spec
                if optional and type(item) is str and not keeps_empty and not item.strip():
                    log.append(Coercion(child, "dropped_empty_optional", item, DROPPED))
                    continue
                if optional and item is None and not nullable:
                    log.append(Coercion(child, "dropped_null_optional", item, DROPPED))
                    continue
                out[key] = coerce(item, child, log) if coerce is not None else item
            return out

        return walk


def _is_null(schema: Any, root: Mapping[str, Any]) -> bool:
    return isinstance(schema, Mapping) and json_types(resolve(schema, root)) == {"null"}


def _unquoted(value: Any, kind: type, rule: str, path: str, log: list[Coercion]) -> Any:
    """``value`` read from the JSON string a model sent in its place, when that JSON is a
    ``kind`` (a list, an object); anything else is returned as it is."""
    if type(value) is not str:
        return value
    parsed = _loads(value)
    if type(parsed) is not kind:
        return value
    log.append(Coercion(path, rule, value, parsed))
    return parsed


def _loads(text: str) -> Any:
    try:
        return json.loads(text, parse_constant=_reject_constant)
    except (ValueError, RecursionError):
        return None


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _coerce_integer(value: Any, path: str, log: list[Coercion]) -> Any:
    return _coerce_numeral(value, path, log, integral=True)


def _coerce_number(value: Any, path: str, log: list[Coercion]) -> Any:
    return _coerce_numeral(value, path, log, integral=False)


def _coerce_numeral(value: Any, path: str, log: list[Coercion], *, integral: bool) -> Any:
    """A number written as text, as the integer (``integral``) or number it says; anything
    else (or a real that is not whole, where an integer is wanted) stays as it was."""
    if type(value) is not str:
        return value
    text = value.strip()
    number: int | float | None = None
    try:
        # isdigit on ASCII text is the common case, and cheaper than the regex
        if (text.isascii() and text.isdigit()) or _INTEGER.fullmatch(text):
            number = int(text)
        elif _NUMBER.fullmatch(text):
            real = float(text)
            if not math.isfinite(real):
                number = None
            elif integral:
                number = int(real) if real.is_integer() else None
            else:
                number = real
    except (ValueError, OverflowError):
        number = None
    if number is None:
        return value
    log.append(
        Coercion(path, "string_to_integer" if integral else "string_to_number", value, number)
    )
    return number


def _coerce_boolean(value: Any, path: str, log: list[Coercion]) -> Any:
    if type(value) is not str:
        return value
    word = value.strip().lower()
    if word in _TRUE:
        log.append(Coercion(path, "string_to_boolean", value, True))
        return True
    if word in _FALSE:
        log.append(Coercion(path, "string_to_boolean", value, False))
        return False
    return value


def _with_enum_case(base: Coerce | None, enum: list[Any]) -> Coerce:
    declared = frozenset(v for v in enum if isinstance(v, str))
    folded: dict[str, str | None] = {}
    for value in declared:
        key = value.strip().casefold()
        folded[key] = None if key in folded else value  # ambiguous folds are left alone

    def coerce_enum(value: Any, path: str, log: list[Coercion]) -> Any:
        if base is not None:
            value = base(value, path, log)
        if type(value) is not str or value in declared:
            return value
        canonical = folded.get(value.strip().casefold())
        if canonical is None:
            return value
        log.append(Coercion(path, "enum_case", value, canonical))
        return canonical

    return coerce_enum


# --- proving validity without the full validator ------------------------------------------------

Check = Callable[[Any], bool]
_ANNOTATIONS = frozenset({"description", "default", "title", "examples", "format", "deprecated"})
_SCALAR_CHECKS: dict[str, Check] = {
    "string": lambda v: type(v) is str,
    "integer": lambda v: type(v) is int,
    "number": lambda v: type(v) is int or type(v) is float,
    "boolean": lambda v: type(v) is bool,
    "null": lambda v: v is None,
}


def _scalar_check(schema: Any) -> Check | None:
    """A check that implies validity for ``{"type": scalar[, "enum": [...]]}``, else None."""
    if not isinstance(schema, Mapping) or set(schema) - _ANNOTATIONS - {"type", "enum"}:
        return None
    kind = schema.get("type")
    check = _SCALAR_CHECKS.get(kind) if isinstance(kind, str) else None
    enum = schema.get("enum")
    if check is None or (enum is not None and not isinstance(enum, list)):
        return None
    if enum is None:
        return check
    allowed = frozenset(v for v in enum if isinstance(v, str | int | float) and type(v) is not bool)
    return lambda v: check(v) and v in allowed


def _value_check(schema: Any) -> Check | None:
    """A check whose True implies validity, for the schema shapes function tools produce:
    scalars, enums, ``anyOf`` of those, arrays of those and closed or open objects of those.
    None when ``schema`` uses anything else (the validator then always decides)."""
    if not isinstance(schema, Mapping):
        return None
    keywords = set(schema) - _ANNOTATIONS
    branches = schema.get("anyOf")
    if isinstance(branches, list) and keywords == {"anyOf"}:
        checks = [_value_check(branch) for branch in branches]
        known = [check for check in checks if check is not None]
        if len(known) != len(checks):
            return None
        return lambda v: any(check(v) for check in known)
    if schema.get("type") == "array" and keywords == {"type", "items"}:
        item = _value_check(schema.get("items"))
        if item is None:
            return None
        return lambda v: type(v) is list and all(item(x) for x in v)
    if schema.get("type") == "object":
        return _object_check(schema)
    return _scalar_check(schema)


def _object_check(schema: Mapping[str, Any]) -> Check | None:
    allowed = {"type", "properties", "required", "additionalProperties", "$schema"}
    properties = schema.get("properties", {})
    required = schema.get("required", [])
    closed = schema.get("additionalProperties", True)
    if set(schema) - _ANNOTATIONS - allowed or closed not in (True, False):
        return None
    if not isinstance(properties, Mapping) or not isinstance(required, list):
        return None
    checks: dict[str, Check] = {}
    for name, sub in properties.items():
        check = _value_check(sub)
        if check is None:
            return None
        checks[name] = check
    needed = tuple(required)
    open_ = closed is True

    def valid(value: Any) -> bool:
        if type(value) is not dict:
            return False
        for name in needed:
            if name not in value:
                return False
        for key, item in value.items():
            check = checks.get(key)
            if check is None:
                if open_ and type(key) is str:
                    continue
                return False
            if not check(item):
                return False
        return True

    return valid


# --- the preflight ------------------------------------------------------------------------------


class Preflight:
    """A tool's compiled preflight. Call it with raw arguments; it never raises."""

    __slots__ = ("_fast", "_properties", "_validator", "_walk", "input_schema", "tool_name")

    def __init__(self, input_schema: dict[str, Any], *, tool_name: str) -> None:
        self.input_schema = input_schema
        self.tool_name = tool_name
        # jsonschema loads its optional format checkers on import (seconds with JupyterLab
        # installed), so the validator is built the first time arguments fail the fast check.
        self._validator: Draft202012Validator | None = None
        root = resolve(input_schema, input_schema)
        properties = root.get("properties")
        self._properties: Mapping[str, Any] = properties if isinstance(properties, Mapping) else {}
        self._walk = _Compiler(input_schema).walker(root)
        self._fast = _object_check(root) if root.get("type") == "object" else None

    def __call__(self, raw: object) -> PreflightResult:
        """Coerce and validate ``raw`` (a dict, a JSON string of an object, or None)."""
        log: list[Coercion] = []
        try:
            arguments = self._walk(self._unwrap(self._parse(raw, log), log), "", log)
            if self._fast is not None and self._fast(arguments):
                return PreflightResult(arguments, tuple(log), None)
            errors = list(self.validator.iter_errors(arguments))
            if not errors:
                return PreflightResult(arguments, tuple(log), None)
            field, expected, message = describe_error(errors, self.input_schema)
            return self._refuse(message, field, expected, log)
        except _Refusal as refusal:
            return self._refuse(refusal.message, None, refusal.expected, log)
        except Exception as exc:  # the preflight fails closed, whatever the input
            message = f"Arguments could not be checked ({type(exc).__name__})."
            return self._refuse(message, None, "a JSON object of arguments", log)

    @property
    def validator(self) -> Draft202012Validator:
        """The JSON Schema validator of ``input_schema``, built on first use."""
        if self._validator is None:
            self._validator = draft_2020_12()(self.input_schema)
        return self._validator

    @property
    def is_simple(self) -> bool:
        """True when the schema is an object of plain properties that the fast check decides
        alone: valid arguments are accepted without importing jsonschema."""
        return self._fast is not None

    def _parse(self, raw: object, log: list[Coercion]) -> dict[Any, Any]:
        if type(raw) is dict:
            return raw
        if raw is None:
            return {}
        if isinstance(raw, bytes | bytearray):
            raw = bytes(raw).decode("utf-8", errors="replace")
        if isinstance(raw, str):
            try:
                parsed = json.loads(raw, parse_constant=_reject_constant)
            except json.JSONDecodeError as exc:
                raise _Refusal(
                    f"Arguments are not valid JSON ({exc.msg} at line {exc.lineno} column "
                    f"{exc.colno}); send a JSON object of arguments.",
                    "a JSON object of arguments",
                ) from None
            except ValueError:
                raise _Refusal(
                    "Arguments are not valid JSON (NaN and Infinity are not JSON numbers).",
                    "a JSON object of arguments",
                ) from None
            if parsed is not None and type(parsed) is not dict:
                raise _not_an_object(parsed)
            log.append(Coercion("", "parsed_json_arguments", raw, parsed or {}))
            return parsed or {}
        if isinstance(raw, Mapping):
            return dict(raw)
        raise _not_an_object(raw)

    def _unwrap(self, arguments: dict[Any, Any], log: list[Coercion]) -> dict[Any, Any]:
        inner = arguments.get("properties")
        if type(inner) is not dict or "properties" in self._properties:
            return arguments
        if not any(key in self._properties for key in inner):
            return arguments
        unwrapped = {k: v for k, v in arguments.items() if k != "properties"}
        unwrapped.update(inner)
        log.append(Coercion("", "unwrapped_properties", arguments, unwrapped))
        return unwrapped

    def _refuse(
        self, message: str, field: str | None, expected: str | None, log: list[Coercion]
    ) -> PreflightResult:
        envelope = failure(
            "invalid_args", message, tool=self.tool_name, field=field, expected=expected
        )
        return PreflightResult(None, tuple(log), envelope)

    def __repr__(self) -> str:
        return f"Preflight(tool_name={self.tool_name!r})"


def _not_an_object(value: object) -> _Refusal:
    return _Refusal(
        f"Arguments must be a JSON object, got {json_type(value)}.",
        "a JSON object of arguments",
    )
