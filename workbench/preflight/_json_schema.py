"""JSON Schema helpers shared by the schema builder, the preflight and the exports.

``resolve`` follows local references, ``split_nullable`` separates "X or null", ``iter_subschemas``
visits every schema node, and ``clean_schema`` turns pydantic's output into the provider-friendly
form workbench shows a model (``$defs`` inlined, no ``title``, every declared object closed).
"""

from __future__ import annotations

import copy
import sys
from collections.abc import Callable, Iterator, Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from jsonschema import Draft202012Validator

# Keywords whose values are subschemas, by shape: a map of schemas, a list of schemas, one schema.
_SCHEMA_MAPS = frozenset({"properties", "patternProperties", "$defs", "definitions"})
_SCHEMA_MAPS |= {"dependentSchemas"}
_SCHEMA_LISTS = frozenset({"anyOf", "oneOf", "allOf", "prefixItems"})
_SCHEMA_ONES = frozenset(
    {
        "items",
        "additionalProperties",
        "unevaluatedProperties",
        "unevaluatedItems",
        "additionalItems",
        "not",
        "if",
        "then",
        "else",
        "contains",
        "propertyNames",
    }
)
_MAX_REF_HOPS = 32

# --- navigating a JSON Schema -------------------------------------------------------------------


def resolve(node: Mapping[str, Any], root: Mapping[str, Any]) -> dict[str, Any]:
    """``node`` with local ``$ref`` followed and a one-element ``allOf`` merged in.

    Sibling keywords win over the target's (so a property's description beats its model's).
    Unresolvable references are left in place; reference cycles stop after a bounded number of
    hops. Never raises for a mapping.
    """
    current = dict(node)
    for _ in range(_MAX_REF_HOPS):
        ref = current.get("$ref")
        all_of = current.get("allOf")
        if isinstance(ref, str) and ref.startswith("#"):
            target = _pointer(root, ref)
            if target is None:
                break
            current = {**target, **{k: v for k, v in current.items() if k != "$ref"}}
        elif isinstance(all_of, list) and len(all_of) == 1 and isinstance(all_of[0], Mapping):
            current = {**all_of[0], **{k: v for k, v in current.items() if k != "allOf"}}
        else:
            break
    return current


def _pointer(root: Mapping[str, Any], ref: str) -> dict[str, Any] | None:
    node: Any = root
    for token in ref.lstrip("#").split("/")[1:]:
        key = token.replace("~1", "/").replace("~0", "~")
        if isinstance(node, Mapping) and key in node:
            node = node[key]
        elif isinstance(node, list) and key.isdigit() and int(key) < len(node):
            node = node[int(key)]
        else:
            return None
    return dict(node) if isinstance(node, Mapping) else None


def split_nullable(node: Mapping[str, Any], root: Mapping[str, Any]) -> tuple[dict[str, Any], bool]:
    """The non-null part of ``node`` and whether ``node`` also accepts ``null``.

    Understands ``anyOf``/``oneOf`` with a ``{"type": "null"}`` branch and ``type`` lists that
    include ``"null"``. A union of several non-null branches is returned unchanged.
    """
    schema = resolve(node, root)
    for keyword in ("anyOf", "oneOf"):
        branches = schema.get(keyword)
        if not isinstance(branches, list):
            continue
        resolved = [resolve(b, root) for b in branches if isinstance(b, Mapping)]
        others = [b for b in resolved if json_types(b) != {"null"}]
        if len(others) == len(resolved) or len(others) != 1:
            return schema, len(others) != len(resolved)
        siblings = {k: v for k, v in schema.items() if k != keyword}
        return {**others[0], **siblings}, True
    kinds = schema.get("type")
    if isinstance(kinds, list) and "null" in kinds:
        rest = [kind for kind in kinds if kind != "null"]
        return {**schema, "type": rest[0] if len(rest) == 1 else rest}, True
    return schema, kinds == "null"


def json_types(node: Mapping[str, Any]) -> set[str]:
    """The JSON types a schema node names in ``type`` (empty when it names none)."""
    kinds = node.get("type")
    if isinstance(kinds, str):
        return {kinds}
    if isinstance(kinds, list):
        return {kind for kind in kinds if isinstance(kind, str)}
    return set()


def iter_subschemas(
    node: Mapping[str, Any], path: tuple[str, ...] = ()
) -> Iterator[tuple[tuple[str, ...], Mapping[str, Any]]]:
    """Every schema node under ``node`` (itself first), with its keyword path from the root."""
    yield path, node
    for key, value in node.items():
        if key in _SCHEMA_MAPS and isinstance(value, Mapping):
            for name, sub in value.items():
                if isinstance(sub, Mapping):
                    yield from iter_subschemas(sub, (*path, key, str(name)))
        elif key in _SCHEMA_LISTS and isinstance(value, list):
            for index, sub in enumerate(value):
                if isinstance(sub, Mapping):
                    yield from iter_subschemas(sub, (*path, key, str(index)))
        elif key in _SCHEMA_ONES and isinstance(value, Mapping):
            yield from iter_subschemas(value, (*path, key))


def _rebuild(
    node: Mapping[str, Any], child: Callable[[Mapping[str, Any]], dict[str, Any]]
) -> dict[str, Any]:
    """A copy of ``node`` with every direct subschema replaced by ``child(subschema)``."""
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key in _SCHEMA_MAPS and isinstance(value, Mapping):
            out[key] = {n: child(s) if isinstance(s, Mapping) else s for n, s in value.items()}
        elif key in _SCHEMA_LISTS and isinstance(value, list):
            out[key] = [child(s) if isinstance(s, Mapping) else s for s in value]
        elif key in _SCHEMA_ONES and isinstance(value, Mapping):
            out[key] = child(value)
        else:
            out[key] = value
    return out


# --- making pydantic's schema provider-friendly -------------------------------------------------


def clean_schema(schema: Mapping[str, Any]) -> dict[str, Any]:
    """Inline ``$defs``, drop ``title``, turn ``const`` into a one-value ``enum``, close objects."""
    return copy.deepcopy(_tidy(_inline_defs(schema)))


def _inline_defs(schema: Mapping[str, Any]) -> dict[str, Any]:
    defs = schema.get("$defs")
    if not isinstance(defs, Mapping):
        return dict(schema)
    recursive: set[str] = set()

    def visit(node: Mapping[str, Any], stack: tuple[str, ...]) -> dict[str, Any]:
        ref = node.get("$ref")
        name = ref.removeprefix("#/$defs/") if isinstance(ref, str) else None
        if name is not None and isinstance(defs.get(name), Mapping):
            if name in stack:
                recursive.add(name)
            else:
                siblings = {k: v for k, v in node.items() if k != "$ref"}
                return visit({**defs[name], **siblings}, (*stack, name))
        return _rebuild(node, lambda sub: visit(sub, stack))

    root = visit({k: v for k, v in schema.items() if k != "$defs"}, ())
    kept: dict[str, Any] = {}
    while recursive - kept.keys():
        for name in sorted(recursive - kept.keys()):
            kept[name] = visit(defs[name], (name,))
    if kept:
        root["$defs"] = kept
    return root


def _tidy(node: Mapping[str, Any]) -> dict[str, Any]:
    out = _rebuild(node, _tidy)
    out.pop("title", None)
    if "const" in out and "enum" not in out:
        out["enum"] = [out.pop("const")]
    is_object = out.get("type") == "object" or isinstance(out.get("properties"), Mapping)
    if is_object and "additionalProperties" not in out:
        out["additionalProperties"] = False
    return out


SLOW_FORMAT_PACKAGES = ("rfc3987_syntax",)
"""Packages jsonschema imports for format checks that build a parser on import (seconds: a
lark grammar), kept out of the import the preflight makes; it checks no formats."""


def draft_2020_12() -> type[Draft202012Validator]:
    """jsonschema's 2020-12 validator class, imported on first use. When jsonschema is not
    loaded yet, ``SLOW_FORMAT_PACKAGES`` are kept out of its import (2.5-6 s on a 2-core
    machine, paid by the first refused arguments of a session): jsonschema then registers no
    "iri" format check, which the preflight never uses. A package imported by name later
    still imports."""
    if "jsonschema" in sys.modules:
        from jsonschema import Draft202012Validator as loaded

        return loaded
    blocked = [name for name in SLOW_FORMAT_PACKAGES if name not in sys.modules]
    for name in blocked:
        sys.modules[name] = None  # type: ignore[assignment]  # an import of it raises ImportError
    try:
        from jsonschema import Draft202012Validator as imported
    finally:
        for name in blocked:
            if sys.modules.get(name, 0) is None:
                del sys.modules[name]
    return imported
