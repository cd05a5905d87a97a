"""OpenAI strict mode (``"strict": true``): the schema the model's output is constrained to.

Strict mode wants every object closed with every property required, a subset of JSON Schema, and
no defaults. ``to_openai_strict`` rewrites a tool's input schema into that form so that the
``openai`` SDK's strict transformer and openai-agents' ``ensure_strict_json_schema`` would leave
it unchanged:

- an optional argument becomes required and nullable; its default moves into its description.
  A strict model then sends ``null`` for "not given", and the preflight (which still checks the
  tool's own schema) drops that ``null`` so the tool's default applies;
- keywords strict mode does not take (``minLength``, ``uniqueItems``, unknown ``format``s, ...)
  move into the description, so the model still reads the rule and the preflight enforces it;
- ``oneOf`` becomes ``anyOf`` and a ``$ref`` with siblings is inlined, as the SDK would do.

What cannot be made strict (a free-form mapping, an untyped value, a top-level union, subschema
keywords such as ``prefixItems``, more than ten levels of nesting, references with siblings that
would inline into more than ``MAX_NODES`` schema nodes) is a refusal: the export then sends the
tool's plain schema with ``"strict": false``.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from workbench.declare import _dialect
from workbench.declare._dialect import listed, where
from workbench.preflight import json_types, resolve

MAX_NESTING = 10
"""OpenAI strict mode: at most this many levels of object nesting."""

FORMATS = frozenset(
    {"date-time", "time", "date", "duration", "email", "hostname", "ipv4", "ipv6", "uuid"}
)
"""String formats strict mode accepts."""

_KEPT = frozenset(
    {
        "type",
        "properties",
        "required",
        "additionalProperties",
        "items",
        "anyOf",
        "enum",
        "description",
        "title",
        "$ref",
        "$defs",
        "pattern",
        "format",
        "minimum",
        "maximum",
        "exclusiveMinimum",
        "exclusiveMaximum",
        "multipleOf",
        "minItems",
        "maxItems",
    }
)
_SILENT = frozenset({"$schema", "$id", "$comment"})
_SUBSCHEMA_KEYWORDS = frozenset(
    {
        "prefixItems",
        "patternProperties",
        "not",
        "if",
        "then",
        "else",
        "dependentSchemas",
        "unevaluatedProperties",
        "unevaluatedItems",
        "contains",
        "propertyNames",
        "additionalItems",
        "definitions",
    }
)
_MAX_INLINED = 16
_MAX_LEVELS = 64
MAX_NODES = 10_000
"""The most schema nodes a strict schema may hold once references with siblings are inlined."""
_FIX_MAPPING = (
    "declare the keys (a pydantic model or TypedDict) so the object can be closed, or accept "
    "that this tool is sent with strict: false"
)


def _inlined_reference(schema: Mapping[str, Any]) -> Any:
    """The ``$ref`` that converting ``schema`` would inline: its own, or one at the end of a
    chain of one-element ``allOf`` (which the conversion merges, following the reference)."""
    node = schema
    for _ in range(_MAX_LEVELS):
        ref = node.get("$ref")
        all_of = node.get("allOf")
        if ref is not None or not (
            isinstance(all_of, list) and len(all_of) == 1 and isinstance(all_of[0], Mapping)
        ):
            return ref
        node = all_of[0]
    return None


def to_openai_strict(schema: Mapping[str, Any]) -> _dialect.Conversion:
    """``schema`` in strict mode's terms, and what that changed or could not do."""
    converter = _Strict(schema)
    converter.convert()
    return converter.result


class _Strict:
    def __init__(self, schema: Mapping[str, Any]) -> None:
        self.root = copy.deepcopy(dict(schema))
        self.result = _dialect.Conversion(schema={})
        self.moved: dict[str, list[str]] = {}
        self.optional: list[str] = []
        self.null_means_null: list[str] = []
        self.one_of: list[str] = []
        self.deepest = 0
        self.inlining: list[str] = []
        self.level = 0
        self.too_deep = False
        self.size = 0  # schema nodes made so far

    def convert(self) -> None:
        root = self.root
        if "object" not in json_types(root) and not isinstance(root.get("properties"), Mapping):
            self.result.refuse(
                "strict mode needs an object at the top level",
                'wrap the arguments in {"type": "object", "properties": {...}}',
            )
        if isinstance(root.get("anyOf") or root.get("oneOf"), list):
            self.result.refuse(
                "strict mode refuses anyOf/oneOf at the top level",
                "declare one object at the top level; move alternatives into a property",
            )
        out = self.node(root, (), 0)
        defs = root.get("$defs")
        if isinstance(defs, Mapping):
            out["$defs"] = {
                name: self.node(sub, ("$defs", name), 0)
                for name, sub in defs.items()
                if isinstance(sub, Mapping)
            }
        self.result.schema = out
        self.report()

    # --- one node -----------------------------------------------------------------------------

    def node(self, schema: Mapping[str, Any], path: tuple[str, ...], depth: int) -> dict[str, Any]:
        """One schema node in strict form; references being inlined are tracked so that a
        reference cycle is refused instead of inlined forever, and a schema whose inlined
        references multiply past ``MAX_NODES`` is refused instead of built."""
        self.size += 1
        if self.size > MAX_NODES:
            if self.size == MAX_NODES + 1:
                self.result.refuse(
                    f"inlining the references beside other keywords makes more than "
                    f"{MAX_NODES:,} schema nodes",
                    "move the keywords beside $ref into the referenced schemas",
                )
            return {}
        ref = _inlined_reference(schema)
        inlining = isinstance(ref, str) and set(schema) - {"$ref"} - _SILENT != set()
        if inlining and (ref in self.inlining or len(self.inlining) >= _MAX_INLINED):
            self.result.refuse(
                f"`{where(path)}` refers to {ref} from inside itself, with keywords beside the "
                "reference; strict mode cannot inline that",
                "move the keywords beside $ref into the referenced schema",
            )
            return {"$ref": str(ref)}
        if self.level >= _MAX_LEVELS:
            if not self.too_deep:
                self.too_deep = True
                self.result.refuse(
                    f"`{where(path)}` nests more than {_MAX_LEVELS} schemas deep (a reference "
                    "cycle?)",
                    "flatten the schema",
                )
            return {}
        if inlining:
            self.inlining.append(str(ref))
        self.level += 1
        try:
            return self._node(schema, path, depth)
        finally:
            self.level -= 1
            if inlining:
                self.inlining.pop()

    def _node(self, schema: Mapping[str, Any], path: tuple[str, ...], depth: int) -> dict[str, Any]:
        s = dict(schema)
        ref = s.get("$ref")
        if isinstance(ref, str):
            if set(s) - {"$ref"} - _SILENT == set():
                return {"$ref": ref}
            merged = resolve(s, self.root)
            if "$ref" in merged:
                self.result.refuse(
                    f"`{where(path)}` refers to {ref}, which cannot be resolved",
                    "point $ref at an entry of the schema's own $defs",
                )
                return s
            s = merged
        s.pop("$defs", None)
        self.combinators(s, path)
        if "$ref" in s and set(s) - {"$ref"} - _SILENT:
            self.result.refuse(
                f"`{where(path)}` refers to {s['$ref']}, which cannot be resolved",
                "point $ref at an entry of the schema's own $defs",
            )
            return s
        if "const" in s and "enum" not in s:
            s["enum"] = [s.pop("const")]
        moved: dict[str, Any] = {}
        for keyword in list(s):
            if keyword in _KEPT:
                continue
            value = s.pop(keyword)
            if keyword in _SILENT:
                continue
            if keyword in _SUBSCHEMA_KEYWORDS:
                self.result.refuse(
                    f"strict mode has no `{keyword}` (at {where(path)})",
                    f"express `{where(path)}` without `{keyword}` (e.g. a model with named "
                    "fields), or accept strict: false",
                )
            elif keyword == "default":
                if value is not None:
                    moved[keyword] = value
            else:
                moved[keyword] = value
                self.moved.setdefault(keyword, []).append(where(path))
        fmt = s.get("format")
        if fmt is not None and fmt not in FORMATS:
            moved["format"] = s.pop("format")
            self.moved.setdefault(f"format: {fmt}", []).append(where(path))
        _dialect.state_in_description(s, moved)
        typed = json_types(s) or "enum" in s or "anyOf" in s
        if not (typed or isinstance(s.get("properties"), Mapping)):
            self.result.refuse(
                f"`{where(path)}` has no type; strict mode needs one on every value",
                f"annotate `{where(path)}` with a type",
            )
        if isinstance(s.get("anyOf"), list):
            s["anyOf"] = [
                self.node(branch, path, depth) if isinstance(branch, Mapping) else branch
                for branch in s["anyOf"]
            ]
        items = s.get("items")
        if isinstance(items, Mapping):
            s["items"] = self.node(items, (*path, "[]"), depth)
        elif "array" in json_types(s) and items is None and "prefixItems" not in schema:
            self.result.refuse(
                f"array `{where(path)}` does not say what its items are",
                f"annotate `{where(path)}` as list[X]",
            )
        if "object" in json_types(s) or isinstance(s.get("properties"), Mapping):
            self.object(s, path, depth + 1)
        return s

    def combinators(self, s: dict[str, Any], path: tuple[str, ...]) -> None:
        _dialect.one_of_as_any_of(s, path, self.one_of)
        all_of = s.pop("allOf", None)
        if isinstance(all_of, list) and len(all_of) == 1 and isinstance(all_of[0], Mapping):
            merged = {**resolve(all_of[0], self.root), **s}
            s.clear()
            s.update(merged)
        elif isinstance(all_of, list):
            self.result.refuse(
                f"strict mode has no allOf of several schemas (at {where(path)})",
                "merge the schemas into one object",
            )

    def object(self, s: dict[str, Any], path: tuple[str, ...], depth: int) -> None:
        if not json_types(s):
            s["type"] = "object"
        self.deepest = max(self.deepest, depth)
        properties = s.get("properties")
        extra = s.get("additionalProperties")
        if extra is not False and (extra is not None or not isinstance(properties, Mapping)):
            self.result.refuse(
                f"`{where(path)}` is a free-form mapping; strict mode needs every object closed "
                "with its keys declared",
                _FIX_MAPPING,
            )
        s["additionalProperties"] = False
        if not isinstance(properties, Mapping):
            return
        listed_required = s.get("required")
        required = set(listed_required) if isinstance(listed_required, list) else set()
        out: dict[str, Any] = {}
        for name, sub in properties.items():
            child = self.node(sub, (*path, name), depth) if isinstance(sub, Mapping) else sub
            if name not in required and isinstance(child, dict):
                label = where((*path, name))
                self.optional.append(label)
                has_default = isinstance(sub, Mapping) and sub.get("default") is not None
                if has_default and _accepts_null(child):
                    self.null_means_null.append(label)
                child = nullable(child)
            out[name] = child
        s["properties"] = out
        s["required"] = list(out)

    # --- the report ---------------------------------------------------------------------------

    def report(self) -> None:
        result = self.result
        if self.deepest > MAX_NESTING:
            result.refuse(
                f"strict mode allows {MAX_NESTING} levels of nesting; this schema has "
                f"{self.deepest}",
                "flatten the arguments",
            )
        if self.optional:
            result.warn(
                f"optional arguments {listed(self.optional)} become required and nullable; "
                "defaults move into the descriptions (the model sends null to leave one out)",
                "nothing to do: the preflight drops those nulls so the tool's defaults apply",
            )
        if self.null_means_null:
            result.warn(
                f"for {listed(self.null_means_null)} null is a value of its own, so a strict "
                "model cannot ask for the default",
                "use None as the default, or make the parameter required",
            )
        _dialect.warn_rewrites(
            result,
            self.moved,
            self.one_of,
            dialect="strict mode",
            in_dialect="in strict mode",
            one_of_cost=": a value matching two branches is no longer refused by the provider",
        )


def _accepts_null(schema: Mapping[str, Any]) -> bool:
    if "null" in json_types(schema):
        return True
    branches = schema.get("anyOf")
    return isinstance(branches, list) and any(
        isinstance(b, Mapping) and json_types(b) == {"null"} for b in branches
    )


def nullable(schema: dict[str, Any]) -> dict[str, Any]:
    """``schema`` that also accepts ``null``, in the form strict mode documents."""
    if _accepts_null(schema):
        return schema
    enum = schema.get("enum")
    kind = schema.get("type")
    if isinstance(kind, str | list) and "$ref" not in schema and "anyOf" not in schema:
        out = dict(schema)
        out["type"] = [*(kind if isinstance(kind, list) else [kind]), "null"]
        if isinstance(enum, list) and None not in enum:
            out["enum"] = [*enum, None]
        return out
    if isinstance(enum, list) and "anyOf" not in schema:
        return {**schema, "enum": [*enum, None]} if None not in enum else schema
    description = schema.get("description")
    inner = {k: v for k, v in schema.items() if k != "description"}
    out = {"anyOf": [inner, {"type": "null"}]}
    if description is not None:
        out["description"] = description
    return out
