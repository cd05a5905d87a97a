"""Provider tool lists in every dialect, and the table of what each provider would refuse.

``export_tool`` gives one tool in a provider's own shape; the schemas are copies, so editing an
export never changes a spec. ``check_exports`` never raises: every problem is a row (tool,
target, severity, problem, fix), with ``target`` ``"all"`` for problems every provider shares.

Severity: ``error`` means the provider refuses the export as produced, or the dialect cannot keep
its promise (a tool that cannot be strict goes out with ``"strict": false``); ``warning`` means
the provider takes it but something changes on the way: a keyword moved into a description, a
default that became a ``null`` filler, a mapping the model cannot see into.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal, get_args

from workbench.declare._gemini import to_gemini
from workbench.declare._openai_strict import to_openai_strict
from workbench.families import KEEPS_VALUE
from workbench.preflight import draft_2020_12, json_types

if TYPE_CHECKING:
    import pandas as pd

    from workbench.declare._spec import ToolSpec

Target = Literal["openai", "openai-strict", "anthropic", "gemini", "mcp"]
Severity = Literal["error", "warning"]
Verdict = Literal["ok", "changed", "refused"]
TARGETS: tuple[Target, ...] = get_args(Target)
COLUMNS = ("tool", "target", "severity", "problem", "fix")

MODEL_API_NAME = re.compile(r"[a-zA-Z0-9_-]{1,64}")
"""OpenAI function names and Anthropic tool names."""
GEMINI_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_.:-]{0,127}")
"""Gemini function names: a letter or underscore first, then letters, digits, ``_.:-``."""
MCP_NAME = re.compile(r"[A-Za-z0-9_.-]{1,128}")
"""MCP 2025-11-25: tool names SHOULD be 1 to 128 characters of ASCII letters, digits, ``_-.``."""

_COMBINATORS = ("anyOf", "oneOf", "allOf")


def export_tool(spec: ToolSpec, target: Target) -> dict[str, Any]:
    """One tool in ``target``'s tool-list shape.

    - ``openai``: Chat Completions ``{"type": "function", "function": {name, description,
      parameters}}``;
    - ``openai-strict``: the same with ``"strict": true`` and the schema rewritten for strict
      mode (optional arguments required and nullable); a tool that cannot be strict keeps its
      plain schema with ``"strict": false`` (``check_exports`` says why);
    - ``anthropic``: ``{name, description, input_schema}``;
    - ``gemini``: a function declaration ``{name, description, parameters?}`` in google-genai's
      ``Schema`` fields, no ``$ref``/``$defs`` (``parameters`` left out for a tool without
      arguments);
    - ``mcp``: ``{name, description, inputSchema, outputSchema?, annotations}``. Only a json or
      text family tool advertises its output schema (the others reshape the value); one that
      is not an object is wrapped as ``{"result": ...}`` (the MCP Python SDK's convention);
      ``annotations`` carries the safety metadata as MCP hints.
    """
    schema = copy.deepcopy(spec.input_schema)
    if target == "openai":
        function = {"name": spec.name, "description": spec.description, "parameters": schema}
        return {"type": "function", "function": function}
    if target == "openai-strict":
        return _openai_strict_tool(spec, schema)
    if target == "anthropic":
        return {"name": spec.name, "description": spec.description, "input_schema": schema}
    if target == "gemini":
        declaration: dict[str, Any] = {"name": spec.name, "description": spec.description}
        parameters = to_gemini(schema).schema
        if parameters:
            declaration["parameters"] = parameters
        return declaration
    if target == "mcp":
        return _mcp_tool(spec, schema)
    raise ValueError(f"unknown export target {target!r}; choose one of {', '.join(TARGETS)}")


def _openai_strict_tool(spec: ToolSpec, schema: dict[str, Any]) -> dict[str, Any]:
    conversion = to_openai_strict(schema)
    strict = not conversion.refused
    function = {
        "name": spec.name,
        "description": spec.description,
        "parameters": conversion.schema if strict else schema,
        "strict": strict,
    }
    return {"type": "function", "function": function}


def export_tools(specs: Iterable[ToolSpec], target: Target) -> list[dict[str, Any]]:
    """Every tool in ``target``'s shape, in order."""
    return [export_tool(spec, target) for spec in specs]


def _mcp_tool(spec: ToolSpec, schema: dict[str, Any]) -> dict[str, Any]:
    tool: dict[str, Any] = {"name": spec.name, "description": spec.description}
    tool["inputSchema"] = schema
    if spec.output_schema is not None and spec.family in KEEPS_VALUE:
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


def check_exports(specs: Iterable[ToolSpec], targets: Sequence[Target] = TARGETS) -> pd.DataFrame:
    """One row per problem a provider would have with these tools; empty when all is well.

    Columns: ``tool``, ``target`` (one of ``targets``, or ``all``), ``severity`` (``error`` |
    ``warning``), ``problem``, ``fix``. Never raises for a spec.
    """
    import pandas as pd

    wanted = set(targets) | {"all"}
    rows: list[Row] = []
    for spec in specs:
        try:
            rows.extend(row for row in _check(spec, wanted) if row[1] in wanted)
        except Exception as exc:  # a table, never a crash
            name = str(getattr(spec, "name", "?"))
            problem = f"could not be checked ({type(exc).__name__}: {exc})"
            rows.append((name, "all", "error", problem, "report this as a workbench bug"))
    return pd.DataFrame(rows, columns=list(COLUMNS))


def dialect_verdicts(
    specs: Iterable[ToolSpec], targets: Sequence[Target] = TARGETS
) -> pd.DataFrame:
    """One row per tool, one column per target: ``ok``, ``changed`` (warnings: the provider
    takes it but something changes) or ``refused`` (an error). Rows with target ``all`` count
    for every column."""
    specs = list(specs)
    names = [str(spec.name) for spec in specs]
    return verdict_table(check_exports(specs, targets), names, targets)


def verdict_table(
    problems: pd.DataFrame, names: Sequence[str], targets: Sequence[Target] = TARGETS
) -> pd.DataFrame:
    """``dialect_verdicts`` from a ``check_exports`` table already computed."""
    import pandas as pd

    rank = {"ok": 0, "changed": 1, "refused": 2}
    table: dict[str, dict[str, Verdict]] = {name: dict.fromkeys(targets, "ok") for name in names}
    for tool, target, severity in zip(
        problems["tool"], problems["target"], problems["severity"], strict=True
    ):
        verdict: Verdict = "refused" if severity == "error" else "changed"
        columns = list(targets) if target == "all" else [t for t in targets if t == target]
        row = table.setdefault(tool, dict.fromkeys(targets, "ok"))
        for column in columns:
            if rank[verdict] > rank[row[column]]:
                row[column] = verdict
    frame = pd.DataFrame.from_dict(table, orient="index", columns=list(targets))
    frame.index.name = "tool"
    return frame


def _check(spec: ToolSpec, wanted: set[str]) -> Iterator[Row]:
    yield from _check_name(spec)
    check_schema = draft_2020_12().check_schema  # jsonschema is heavy: imported on first use
    from jsonschema.exceptions import SchemaError

    schema = spec.input_schema
    try:
        check_schema(schema)
    except SchemaError as exc:
        yield (spec.name, "all", "error", f"input schema is invalid: {exc.message}", _FIX_SCHEMA)
        return
    yield from _check_top_level(spec)
    yield from _check_descriptions(spec)
    yield from _check_mappings(spec)
    if "openai-strict" in wanted:
        for change in to_openai_strict(schema).changes:
            problem = change.problem
            if change.severity == "error":
                problem += "; the tool goes out with strict: false"
            yield (spec.name, "openai-strict", change.severity, problem, change.fix)
    if "gemini" in wanted:
        for change in to_gemini(schema).changes:
            yield (spec.name, "gemini", change.severity, change.problem, change.fix)
    for note in spec.declare_warnings:
        fix = "define the return type at module level, where annotations resolve"
        yield (spec.name, "mcp", "warning", note, fix)
    if spec.output_schema is not None and spec.family not in KEEPS_VALUE:
        yield (
            spec.name,
            "mcp",
            "warning",
            f"the {spec.family} family reshapes the tool's value, so its output schema is not "
            "advertised over MCP (clients get the receipt as text)",
            "nothing to do; or return the value from a json-family tool to advertise its schema",
        )
    elif spec.output_schema is not None:
        yield (spec.name, "mcp", "warning", _STRUCTURED_PROBLEM, _STRUCTURED_FIX)
        if spec.output_schema.get("type") != "object":
            yield (
                spec.name,
                "mcp",
                "warning",
                'output schema is not an object; the MCP export wraps it as {"result": ...}',
                'return structured content as {"result": value}, or return a model/TypedDict',
            )


_STRUCTURED_PROBLEM = (
    "clients that prefer structured content hand their model the whole result as "
    "structuredContent, outside the receipt budget; only clients that read the text get the "
    "receipt (a cut call's card and row say how much more)"
)
_STRUCTURED_FIX = (
    "keep results within the receipt budget, or compare what each client hands its model in "
    "the inspector's 'as each client sees it' view; drop the return annotation to serve text only"
)
_FIX_SCHEMA = "fix the JSON Schema (Draft 2020-12) so that it validates against the meta-schema"
_FIX_NAME = "rename the tool to ASCII snake_case, at most 64 characters (e.g. search_files)"


def _check_name(spec: ToolSpec) -> Iterator[Row]:
    name = spec.name
    if not MODEL_API_NAME.fullmatch(name):
        problem = f"name {name!r} does not match ^[a-zA-Z0-9_-]{{1,64}}$"
        if MCP_NAME.fullmatch(name):
            problem += " (valid for MCP, refused by the model APIs)"
        for target in ("openai", "openai-strict", "anthropic"):
            yield (name, target, "error", problem, _FIX_NAME)
    if not GEMINI_NAME.fullmatch(name):
        problem = f"name {name!r} does not match Gemini's ^[A-Za-z_][A-Za-z0-9_.:-]{{0,127}}$"
        yield (name, "gemini", "error", problem, _FIX_NAME)
    if not MCP_NAME.fullmatch(name):
        problem = f"name {name!r} is outside MCP's advice (1 to 128 of A-Z a-z 0-9 _ - .)"
        yield (name, "mcp", "warning", problem, _FIX_NAME)


def _check_top_level(spec: ToolSpec) -> Iterator[Row]:
    """Top-level shape; ``openai-strict`` reports its own (its conversion refuses these)."""
    schema = spec.input_schema
    if schema.get("type") != "object":
        problem = f"input schema top level is type {schema.get('type')!r}, not an object"
        fix = 'wrap the arguments in {"type": "object", "properties": {...}}'
        for target in TARGETS:
            if target != "openai-strict":
                yield (spec.name, target, "error", problem, fix)
    combinators = [k for k in _COMBINATORS if k in schema]
    if combinators:
        problem = f"input schema top level uses {', '.join(combinators)}"
        fix = "declare one object at the top level; move alternatives into a property"
        for target in ("openai", "anthropic", "gemini"):
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


def _check_mappings(spec: ToolSpec) -> Iterator[Row]:
    """A parameter that is a mapping of anything: the model sees an object and nothing more.
    (openai-strict and gemini report mappings in their own terms.)"""
    properties = spec.input_schema.get("properties")
    if not isinstance(properties, Mapping):
        return
    blind = [name for name, sub in properties.items() if _free_form(sub)]
    if not blind:
        return
    listed = ", ".join(f"`{name}`" for name in blind)
    for target in ("openai", "anthropic", "mcp"):
        yield (
            spec.name,
            target,
            "warning",
            f"{listed}: a free-form mapping; the model sees an object with no keys or value "
            "types, and guesses what to put in it",
            "declare the keys with a pydantic model or TypedDict, or list them in the "
            "parameter's description",
        )


def _free_form(schema: Any) -> bool:
    if not isinstance(schema, Mapping):
        return False
    branches = schema.get("anyOf")
    if isinstance(branches, list):
        return any(_free_form(branch) for branch in branches)
    if "object" not in json_types(schema) or schema.get("properties"):
        return False
    extra = schema.get("additionalProperties", True)
    return extra is True or (isinstance(extra, Mapping) and not extra)


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
