"""Gemini function declarations: the OpenAPI-style ``Schema`` subset Gemini's ``parameters`` take.

``to_gemini`` rewrites a tool's input schema into the fields of google-genai's ``types.Schema``
(upper-case ``type``, ``nullable``, ``format: enum``), with no ``$ref`` or ``$defs``:

- nested models are inlined; a recursive model is inlined ``RECURSION_DEPTH`` levels deep and the
  property that would recurse further is left out (reported). Inlining grows with every
  reference (models that refer to each other multiply): a declaration is kept under
  ``MAX_NODES`` schema nodes by inlining recursion less deeply, and refused when even one level
  is too large;
- ``X | None`` becomes ``nullable: true``; a ``type`` list becomes ``anyOf``; ``oneOf`` becomes
  ``anyOf``; ``const`` a one-value enum; an integer ``Literal`` a ``format: enum`` of strings, as
  Gemini documents it;
- a free-form mapping (``dict[str, X]``) cannot be declared, since Gemini objects are their
  properties: it is sent as a string holding a JSON object, which the preflight parses back;
- keywords outside the subset (``exclusiveMinimum``, ``uniqueItems``, ``multipleOf``, ...) move
  into the description; the preflight still enforces them.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping
from typing import Any

from workbench.declare import _dialect
from workbench.declare._dialect import listed, where
from workbench.preflight import json_types

RECURSION_DEPTH = 3
"""How many times a recursive model is inlined inside itself before the recursion is cut."""

MAX_NODES = 10_000
"""The most schema nodes a declaration may inline into (each a dict in ``parameters``)."""

TYPES = {
    "string": "STRING",
    "number": "NUMBER",
    "integer": "INTEGER",
    "boolean": "BOOLEAN",
    "array": "ARRAY",
    "object": "OBJECT",
    "null": "NULL",
}
_RENAMED = {"minItems", "maxItems", "minLength", "maxLength", "minProperties", "maxProperties"}
_KEPT = frozenset(
    {"description", "pattern", "minimum", "maximum", "default", "title", "format", *_RENAMED}
)
_SILENT = frozenset({"$schema", "$id", "$comment", "additionalProperties"})
_NUMBER_FORMATS = frozenset({"float", "double", "int32", "int64"})


_MAX_LEVELS = 64


class _Cut(Exception):
    """The recursion stops here: the property holding this value is left out."""


class _TooLarge(Exception):
    """Inlining has made more than ``MAX_NODES`` schema nodes."""


def to_gemini(schema: Mapping[str, Any]) -> _dialect.Conversion:
    """``schema`` as a Gemini ``parameters`` Schema (empty when the tool takes no arguments)."""
    for depth in range(RECURSION_DEPTH, 0, -1):
        converter = _Gemini(schema, depth)
        result = converter.result
        try:
            out = converter.node(schema, (), ())
        except _Cut:  # only a top level that is itself a bare self-reference
            out = {}
        except _TooLarge:
            continue
        break
    else:
        result = _dialect.Conversion(schema={})
        result.refuse(
            f"inlining the schema's references makes more than {MAX_NODES:,} schema nodes, even "
            "with each model inlined once (Gemini has no $ref)",
            "flatten the models that refer to each other, or send fewer nested models",
        )
        return result
    converter.report()
    if out.get("type") == "OBJECT" and not out.get("properties"):
        out = {}  # a function without arguments declares no parameters
    result.schema = out
    return result


class _Gemini:
    def __init__(self, schema: Mapping[str, Any], depth: int) -> None:
        self.depth = depth  # how many times a recursive model is inlined inside itself
        self.size = 0  # schema nodes made so far
        self.root = copy.deepcopy(dict(schema))
        defs = self.root.get("$defs")
        self.defs: Mapping[str, Any] = defs if isinstance(defs, Mapping) else {}
        self.result = _dialect.Conversion(schema={})
        self.moved: dict[str, list[str]] = {}
        self.cut: dict[str, list[str]] = {}
        self.mappings: list[str] = []
        self.one_of: list[str] = []

    def node(
        self, schema: Mapping[str, Any], path: tuple[str, ...], stack: tuple[str, ...]
    ) -> dict[str, Any]:
        """One schema node in Gemini's terms; raises ``_Cut`` where recursion stops and
        ``_TooLarge`` past ``MAX_NODES``."""
        self.size += 1
        if self.size > MAX_NODES:
            raise _TooLarge
        if len(path) + len(stack) > _MAX_LEVELS:
            self.cut.setdefault("(nesting)", []).append(where(path))
            raise _Cut
        s = dict(schema)
        ref = s.pop("$ref", None)
        if isinstance(ref, str):
            name = ref.removeprefix("#/$defs/")
            target = self.defs.get(name)
            if not isinstance(target, Mapping):
                self.result.refuse(
                    f"`{where(path)}` refers to {ref}, which cannot be resolved",
                    "point $ref at an entry of the schema's own $defs",
                )
                return {"type": "STRING", "description": str(s.get("description", ""))}
            if stack.count(name) >= self.depth:
                self.cut.setdefault(name, []).append(where(path))
                raise _Cut
            return self.node({**target, **s}, path, (*stack, name))
        s.pop("$defs", None)
        _dialect.one_of_as_any_of(s, path, self.one_of)
        all_of = s.pop("allOf", None)
        if isinstance(all_of, list) and len(all_of) == 1 and isinstance(all_of[0], Mapping):
            return self.node({**all_of[0], **s}, path, stack)
        if all_of is not None:
            s["allOf"] = all_of  # reported below as a keyword Gemini lacks
        if "const" in s and "enum" not in s:
            s["enum"] = [s.pop("const")]
        kinds = _type_list(s)
        nullable = "null" in kinds and len(kinds) > 1
        kinds = [k for k in kinds if k != "null"] if nullable else kinds
        branches = s.pop("anyOf", None)
        if isinstance(branches, list):
            return self.union(s, branches, path, stack)
        if "object" in kinds or (not kinds and isinstance(s.get("properties"), Mapping)):
            out = self.object(s, path, stack)
        else:
            out = self.leaf(s, kinds, path, stack)
        if nullable:
            out["nullable"] = True
        return out

    def union(
        self, s: dict[str, Any], branches: list[Any], path: tuple[str, ...], stack: tuple[str, ...]
    ) -> dict[str, Any]:
        nulls = [b for b in branches if isinstance(b, Mapping) and json_types(b) == {"null"}]
        others: list[dict[str, Any]] = []
        for branch in branches:
            if not isinstance(branch, Mapping) or branch in nulls:
                continue
            try:
                others.append(self.node(branch, path, stack))
            except _Cut:
                continue  # the other branches still describe the value
        if not others:
            raise _Cut
        if len(others) == 1:
            out = {**others[0], **self.annotations(s, path)}
            inner, outer = others[0].get("description"), out.get("description")
            if inner and outer and inner != outer:
                out["description"] = f"{outer} {inner}"
        else:
            out = {"anyOf": others, **self.annotations(s, path)}
        if nulls:
            out["nullable"] = True
        return out

    def object(
        self, s: dict[str, Any], path: tuple[str, ...], stack: tuple[str, ...]
    ) -> dict[str, Any]:
        properties = s.pop("properties", None)
        extra = s.get("additionalProperties")
        if not isinstance(properties, Mapping) or (not properties and extra is not False):
            return self.mapping(s, path)
        out: dict[str, Any] = {"type": "OBJECT"}
        required = s.pop("required", None)
        names = list(required) if isinstance(required, list) else []
        converted: dict[str, Any] = {}
        for name, sub in (properties or {}).items():
            if not isinstance(sub, Mapping):
                continue
            try:
                converted[name] = self.node(sub, (*path, name), stack)
            except _Cut:
                if name in names:
                    self.result.refuse(
                        f"required `{where((*path, name))}` recurses deeper than "
                        f"{self.depth} levels and cannot be declared to Gemini",
                        "give the recursive field a default (e.g. an empty list)",
                    )
                    names.remove(name)
        out["properties"] = converted
        kept = [name for name in names if name in converted]
        if kept:
            out["required"] = kept
        out.update(self.annotations(s, path))
        return out

    def mapping(self, s: dict[str, Any], path: tuple[str, ...]) -> dict[str, Any]:
        self.mappings.append(where(path))
        if "default" in s and not isinstance(s["default"], str):
            s["default"] = json.dumps(s["default"], ensure_ascii=False)
        out = {"type": "STRING", **self.annotations(s, path)}
        hint = "a JSON object, as a string"
        extra = s.get("additionalProperties")
        if isinstance(extra, Mapping) and json_types(extra):
            hint += f", whose values are {'/'.join(sorted(json_types(extra)))}"
        text = str(out.get("description", "")).rstrip()
        out["description"] = f"{text} ({hint})" if text else f"({hint})"
        return out

    def leaf(
        self, s: dict[str, Any], kinds: list[str], path: tuple[str, ...], stack: tuple[str, ...]
    ) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if len(kinds) == 1:
            out["type"] = TYPES.get(kinds[0], "STRING")
        elif kinds:
            return {"anyOf": [{"type": TYPES.get(k, "STRING")} for k in kinds]} | (
                self.annotations(s, path)
            )
        items = s.pop("items", None)
        if isinstance(items, Mapping):
            out["items"] = self.node(items, (*path, "[]"), stack)
        enum = s.pop("enum", None)
        if isinstance(enum, list):
            self.enum(out, s, enum, path)
        out.update(self.annotations(s, path))
        return out

    def enum(
        self, out: dict[str, Any], s: dict[str, Any], enum: list[Any], path: tuple[str, ...]
    ) -> None:
        values = [v for v in enum if v is not None]
        kind = out.get("type")
        if None in enum:
            out["nullable"] = True
        if all(type(v) is str for v in values):
            out.setdefault("type", "STRING")
            out["format"] = "enum"
            out["enum"] = values
        elif kind in ("INTEGER", "NUMBER", None) and all(type(v) in (int, float) for v in values):
            out["type"] = kind or ("INTEGER" if all(type(v) is int for v in values) else "NUMBER")
            out["format"] = "enum"
            out["enum"] = [str(v) for v in values]
        else:
            s["enum"] = values  # described below

    def annotations(self, s: dict[str, Any], path: tuple[str, ...]) -> dict[str, Any]:
        """The keywords Gemini takes, renamed; the others stated in the description."""
        out: dict[str, Any] = {}
        moved: dict[str, Any] = {}
        for keyword, value in s.items():
            if keyword in ("type", "properties", "required", "items", "enum", "anyOf"):
                continue
            if keyword in _SILENT or (keyword == "default" and value is None):
                continue  # Gemini's Schema cannot carry a null default
            if keyword == "examples" and isinstance(value, list):
                if value and value[0] is not None:
                    out["example"] = value[0]
            elif keyword == "format" and isinstance(value, str):
                if value in _NUMBER_FORMATS or "string" in _type_list(s):
                    out["format"] = value
                else:
                    moved[keyword] = value
            elif keyword == "exclusiveMinimum" and s.get("type") == "integer":
                out["minimum"] = value + 1 if isinstance(value, int) else value
            elif keyword == "exclusiveMaximum" and s.get("type") == "integer":
                out["maximum"] = value - 1 if isinstance(value, int) else value
            elif keyword in _KEPT:
                out[keyword] = value
            else:
                moved[keyword] = value
                self.moved.setdefault(keyword, []).append(where(path))
        if moved:
            _dialect.state_in_description(out, moved)
        return out

    def report(self) -> None:
        result = self.result
        smaller = (
            f" (not {RECURSION_DEPTH}: that would make more than {MAX_NODES:,} schema nodes)"
            if self.depth < RECURSION_DEPTH
            else ""
        )
        for name, places in self.cut.items():
            result.warn(
                f"recursive `{name}` is inlined {self.depth} level{'s' * (self.depth != 1)} deep"
                f"{smaller} (Gemini has no $ref); deeper {listed(places, 3)} left out",
                "nothing to do if that depth is enough; else flatten the recursion",
            )
        if self.mappings:
            result.warn(
                f"free-form mapping {listed(self.mappings)}: Gemini objects are only their "
                "declared properties, so it is sent as a JSON string (the preflight parses it)",
                "declare the keys with a pydantic model or TypedDict",
            )
        _dialect.warn_rewrites(
            result, self.moved, self.one_of, dialect="Gemini", in_dialect="for Gemini"
        )


def _type_list(s: Mapping[str, Any]) -> list[str]:
    kinds = s.get("type")
    if isinstance(kinds, str):
        return [kinds]
    if isinstance(kinds, list):
        return [k for k in kinds if isinstance(k, str)]
    return []
