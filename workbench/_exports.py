"""Provider tool lists (OpenAI, Anthropic, MCP) and the table of what each provider would refuse.

``export_tool`` gives one tool in a provider's own shape; the schemas are copies, so editing an
export never changes a spec. ``check_exports`` never raises: every problem is a row (tool,
target, severity, problem, fix), with ``target`` ``"all"`` for problems every provider shares.

Severity: ``error`` means the provider rejects the export as produced; ``warning`` means it
accepts it but something is lost: OpenAI strict mode (``"strict": true``) refuses the schema,
the model sees less than it should, or MCP clients may refuse the name.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Iterable, Iterator, Mapping
from typing import TYPE_CHECKING, Any, Literal, get_args

from workbench._json_schema import iter_subschemas, json_types

if TYPE_CHECKING:
    import pandas as pd

    from workbench._spec import ToolSpec

Target = Literal["openai", "anthropic", "mcp"]
Severity = Literal["error", "warning"]
TARGETS: tuple[Target, ...] = get_args(Target)
COLUMNS = ("tool", "target", "severity", "problem", "fix")

MODEL_API_NAME = re.compile(r"[a-zA-Z0-9_-]{1,64}")
"""OpenAI function names and Anthropic tool names."""
MCP_NAME = re.compile(r"[A-Za-z0-9_.-]{1,128}")
"""MCP 2025-11-25: tool names SHOULD be 1 to 128 characters of ASCII letters, digits, ``_-.``."""

# OpenAI strict mode: keywords outside its documented subset of JSON Schema.
_STRICT_UNSUPPORTED = (
    "allOf",
    "oneOf",
    "not",
    "if",
    "then",
    "else",
    "dependentRequired",
    "dependentSchemas",
    "patternProperties",
    "unevaluatedProperties",
    "unevaluatedItems",
    "propertyNames",
    "contains",
    "minContains",
    "maxContains",
    "minProperties",
    "maxProperties",
    "minLength",
    "maxLength",
    "uniqueItems",
)
# Supported by strict mode now, but not for fine-tuned models, and refused by older deployments.
_STRICT_LIMITED = (
    "pattern",
    "format",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "multipleOf",
    "minItems",
    "maxItems",
    "default",
)
_STRICT_MAX_DEPTH = 10
_COMBINATORS = ("anyOf", "oneOf", "allOf")


def export_tool(spec: ToolSpec, target: Target) -> dict[str, Any]:
    """One tool in ``target``'s tool-list shape.

    - ``openai``: Chat Completions ``{"type": "function", "function": {name, description,
      parameters}}``;
    - ``anthropic``: ``{name, description, input_schema}``;
    - ``mcp``: ``{name, description, inputSchema, outputSchema?, annotations}``. An output schema
      that is not an object is wrapped as ``{"result": ...}`` (the MCP Python SDK's convention);
      ``annotations`` carries the safety metadata as MCP hints.
    """
    schema = copy.deepcopy(spec.input_schema)
    if target == "openai":
        function = {"name": spec.name, "description": spec.description, "parameters": schema}
        return {"type": "function", "function": function}
    if target == "anthropic":
        return {"name": spec.name, "description": spec.description, "input_schema": schema}
    if target == "mcp":
        return _mcp_tool(spec, schema)
    raise ValueError(f"unknown export target {target!r}; choose one of {', '.join(TARGETS)}")


def export_tools(specs: Iterable[ToolSpec], target: Target) -> list[dict[str, Any]]:
    """Every tool in ``target``'s shape, in order."""
    return [export_tool(spec, target) for spec in specs]


def _mcp_tool(spec: ToolSpec, schema: dict[str, Any]) -> dict[str, Any]:
    tool: dict[str, Any] = {"name": spec.name, "description": spec.description}
    tool["inputSchema"] = schema
    if spec.output_schema is not None:
        tool["outputSchema"] = mcp_output_schema(spec.output_schema)
    tool["annotations"] = {
        "readOnlyHint": spec.read_only,
        "destructiveHint": spec.destructive,
        "idempotentHint": spec.idempotent,
        "openWorldHint": spec.open_world,
    }
    return tool


def mcp_output_schema(output_schema: Mapping[str, Any]) -> dict[str, Any]:
    """``output_schema`` as MCP requires it (an object at the root), wrapping others in
    ``{"result": ...}`` as the MCP Python SDK does for non-object return types."""
    schema = copy.deepcopy(dict(output_schema))
    if schema.get("type") == "object":
        return schema
    defs = schema.pop("$defs", None)
    wrapped: dict[str, Any] = {
        "type": "object",
        "properties": {"result": schema},
        "required": ["result"],
        "additionalProperties": False,
    }
    if defs is not None:
        wrapped["$defs"] = defs
    return wrapped


# --- check_exports ------------------------------------------------------------------------------

Row = tuple[str, str, Severity, str, str]


def check_exports(specs: Iterable[ToolSpec]) -> pd.DataFrame:
    """One row per problem a provider would have with these tools; empty when all is well.

    Columns: ``tool``, ``target`` (``openai`` | ``anthropic`` | ``mcp`` | ``all``),
    ``severity`` (``error`` | ``warning``), ``problem``, ``fix``. Never raises for a spec.
    """
    import pandas as pd

    rows: list[Row] = []
    for spec in specs:
        try:
            rows.extend(_check(spec))
        except Exception as exc:  # a table, never a crash
            name = str(getattr(spec, "name", "?"))
            problem = f"could not be checked ({type(exc).__name__}: {exc})"
            rows.append((name, "all", "error", problem, "report this as a workbench bug"))
    return pd.DataFrame(rows, columns=list(COLUMNS))


def _check(spec: ToolSpec) -> Iterator[Row]:
    yield from _check_name(spec)
    from jsonschema import Draft202012Validator  # heavy: imported where it is used
    from jsonschema.exceptions import SchemaError

    schema = spec.input_schema
    try:
        Draft202012Validator.check_schema(schema)
    except SchemaError as exc:
        yield (spec.name, "all", "error", f"input schema is invalid: {exc.message}", _FIX_SCHEMA)
        return
    yield from _check_top_level(spec)
    yield from _check_descriptions(spec)
    yield from _check_strict(spec)
    if spec.output_schema is not None and spec.output_schema.get("type") != "object":
        yield (
            spec.name,
            "mcp",
            "warning",
            'output schema is not an object; the MCP export wraps it as {"result": ...}',
            'return structured content as {"result": value}, or return a model/TypedDict',
        )


_FIX_SCHEMA = "fix the JSON Schema (Draft 2020-12) so that it validates against the meta-schema"
_FIX_NAME = "rename the tool to ASCII snake_case, at most 64 characters (e.g. search_files)"


def _check_name(spec: ToolSpec) -> Iterator[Row]:
    name = spec.name
    if not MODEL_API_NAME.fullmatch(name):
        problem = f"name {name!r} does not match ^[a-zA-Z0-9_-]{{1,64}}$"
        if MCP_NAME.fullmatch(name):
            problem += " (valid for MCP, refused by the model APIs)"
        for target in ("openai", "anthropic"):
            yield (name, target, "error", problem, _FIX_NAME)
    if not MCP_NAME.fullmatch(name):
        problem = f"name {name!r} is outside MCP's advice (1 to 128 of A-Z a-z 0-9 _ - .)"
        yield (name, "mcp", "warning", problem, _FIX_NAME)


def _check_top_level(spec: ToolSpec) -> Iterator[Row]:
    schema = spec.input_schema
    if schema.get("type") != "object":
        problem = f"input schema top level is type {schema.get('type')!r}, not an object"
        fix = 'wrap the arguments in {"type": "object", "properties": {...}}'
        for target in TARGETS:
            yield (spec.name, target, "error", problem, fix)
    combinators = [k for k in _COMBINATORS if k in schema]
    if combinators:
        problem = f"input schema top level uses {', '.join(combinators)}"
        fix = "declare one object at the top level; move alternatives into a property"
        for target in ("openai", "anthropic"):
            yield (spec.name, target, "error", problem, fix)
    if schema.get("additionalProperties") is not False:
        yield (
            spec.name,
            "all",
            "warning",
            "input schema allows unknown arguments (no additionalProperties: false), so the "
            "preflight cannot refuse a misspelled argument",
            'add "additionalProperties": false to the top-level schema',
        )


def _check_descriptions(spec: ToolSpec) -> Iterator[Row]:
    if not spec.description.strip():
        yield (
            spec.name,
            "all",
            "warning",
            "tool has no description; the model must guess when to call it",
            "write a docstring (or pass description=) saying what the tool does and returns",
        )
    properties = spec.input_schema.get("properties")
    if not isinstance(properties, Mapping):
        return
    for name, sub in properties.items():
        if not isinstance(sub, Mapping):
            continue
        if not _described(sub):
            yield (
                spec.name,
                "all",
                "warning",
                f"parameter `{name}` has no description",
                f"document `{name}` in the docstring's Args section or with Field(description=)",
            )
        if not _typed(sub):
            yield (
                spec.name,
                "all",
                "warning",
                f"parameter `{name}` has no type; the model may send anything",
                f"annotate `{name}` with a type",
            )


def _described(schema: Mapping[str, Any]) -> bool:
    if str(schema.get("description", "")).strip():
        return True
    branches = schema.get("anyOf")
    return isinstance(branches, list) and any(
        isinstance(b, Mapping) and str(b.get("description", "")).strip() for b in branches
    )


def _typed(schema: Mapping[str, Any]) -> bool:
    return any(key in schema for key in ("type", "enum", "const", "$ref", *_COMBINATORS))


def _check_strict(spec: ToolSpec) -> Iterator[Row]:
    """OpenAI strict mode: every property required, every object closed, a keyword subset."""
    unsupported: dict[str, list[str]] = {}
    limited: dict[str, list[str]] = {}
    deepest = 0
    for path, node in iter_subschemas(spec.input_schema):
        where = location(path)
        yield from _strict_object(spec.name, where, node)
        for keyword in node:
            if keyword in _STRICT_UNSUPPORTED:
                unsupported.setdefault(keyword, []).append(where)
            elif keyword in _STRICT_LIMITED:
                limited.setdefault(keyword, []).append(where)
        deepest = max(deepest, sum(1 for part in path if part == "properties"))
    for keyword, places in unsupported.items():
        yield (
            spec.name,
            "openai",
            "warning",
            f"strict mode does not support `{keyword}` (at {_places(places)})",
            f"remove `{keyword}` and state the rule in the description",
        )
    for keyword, places in limited.items():
        yield (
            spec.name,
            "openai",
            "warning",
            f"strict mode may refuse `{keyword}` (at {_places(places)}): not supported for "
            "fine-tuned models and by some deployments",
            f"if strict mode is refused, drop `{keyword}` and state it in the description",
        )
    if deepest > _STRICT_MAX_DEPTH:
        yield (
            spec.name,
            "openai",
            "warning",
            f"strict mode allows at most {_STRICT_MAX_DEPTH} levels of nesting ({deepest} here)",
            "flatten the arguments",
        )


def _places(places: list[str]) -> str:
    unique = list(dict.fromkeys(places))
    return ", ".join(unique[:6]) + (", …" if len(unique) > 6 else "")


def _strict_object(tool: str, where: str, node: Mapping[str, Any]) -> Iterator[Row]:
    is_object = "object" in json_types(node) or isinstance(node.get("properties"), Mapping)
    if not is_object:
        return
    if node.get("additionalProperties") is not False:
        yield (
            tool,
            "openai",
            "warning",
            f"strict mode needs additionalProperties: false on every object ({where} is open)",
            "declare the object's properties (a model or TypedDict) instead of a free mapping",
        )
    properties = node.get("properties")
    listed_required = node.get("required")
    required: list[Any] = listed_required if isinstance(listed_required, list) else []
    optional = [name for name in properties if name not in required] if properties else []
    if optional:
        listed = ", ".join(f"`{name}`" for name in optional)
        yield (
            tool,
            "openai",
            "warning",
            f"strict mode needs every property required; optional at {where}: {listed}",
            "make them required and nullable (X | None) so the model can send null",
        )


def location(path: tuple[str, ...]) -> str:
    """A keyword path as a model-facing argument path (``filters.limit``, ``tags[]``)."""
    text = ""
    parts = iter(path)
    for part in parts:
        if part in ("properties", "patternProperties"):
            name = next(parts, "")
            text = f"{text}.{name}" if text else name
        elif part in ("items", "prefixItems", "additionalItems"):
            text += "[]"
            if part == "prefixItems":
                next(parts, None)
        elif part == "additionalProperties":
            text += ".*" if text else "*"
        elif part in ("$defs", "definitions"):
            text = f"$defs.{next(parts, '')}"
        elif part in _COMBINATORS:
            next(parts, None)
    return text or "the top level"
