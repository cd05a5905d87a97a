"""Generated schemas (hand-written shapes included: type lists, enums of mixed values, const,
oneOf/allOf, $ref to $defs, to the root and to nothing, prefixItems, open objects) through both
dialect converters: they never raise; whatever strict mode accepts is a fixpoint of both SDK
strict transformers; every Gemini declaration round-trips through google-genai unchanged."""

from __future__ import annotations

import copy
from typing import Any

import jsonschema
from google.genai import types as genai
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from openai.lib._pydantic import _ensure_strict_json_schema

from workbench.declare._exports import check_exports, export_tool
from workbench.declare._spec import ToolSpec

SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-5, 5),
    st.floats(allow_nan=False, allow_infinity=False, width=32),
    st.text(max_size=3),
)
TYPES = st.sampled_from(["string", "integer", "number", "boolean", "array", "object", "null"])
LEAVES = st.fixed_dictionaries(
    {},
    optional={
        "type": st.one_of(TYPES, st.lists(TYPES, min_size=1, max_size=3, unique=True)),
        "enum": st.lists(SCALARS, min_size=1, max_size=3),
        "const": SCALARS,
        "default": SCALARS,
        "description": st.text(max_size=5),
        "format": st.sampled_from(["date", "path", "int32", "uuid"]),
        "minLength": st.integers(0, 3),
        "exclusiveMinimum": st.integers(0, 3),
        "$ref": st.sampled_from(["#/$defs/A", "#/$defs/missing", "#"]),
        "examples": st.lists(SCALARS, max_size=2),
    },
)


def _branches(children: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    names = st.sampled_from(["a", "b", "c"])
    return st.one_of(
        st.fixed_dictionaries(
            {
                "type": st.just("object"),
                "properties": st.dictionaries(names, children, max_size=3),
            },
            optional={
                "required": st.lists(st.sampled_from(["a", "b", "x"]), unique=True),
                "additionalProperties": st.one_of(st.booleans(), children),
            },
        ),
        st.fixed_dictionaries(
            {"type": st.just("array"), "items": children},
            optional={"prefixItems": st.lists(children, max_size=2)},
        ),
        st.fixed_dictionaries({"anyOf": st.lists(children, min_size=1, max_size=3)}),
        st.fixed_dictionaries({"oneOf": st.lists(children, min_size=1, max_size=3)}),
        st.fixed_dictionaries({"allOf": st.lists(children, min_size=1, max_size=2)}),
    )


SCHEMAS = st.recursive(LEAVES, _branches, max_leaves=10)


@st.composite
def tool_schemas(draw: st.DrawFn) -> dict[str, Any]:
    root: dict[str, Any] = {
        "type": "object",
        "properties": {"p": draw(SCHEMAS), "q": draw(SCHEMAS)},
        "required": draw(st.lists(st.sampled_from(["p", "q"]), unique=True)),
        "additionalProperties": False,
    }
    definition = draw(st.one_of(st.none(), SCHEMAS))
    if definition is not None:
        root["$defs"] = {"A": definition}
    return root


@settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
@given(tool_schemas())
def test_the_converters_keep_their_promises_for_any_schema(schema):
    try:
        jsonschema.Draft202012Validator.check_schema(schema)
    except jsonschema.SchemaError:
        return
    spec = ToolSpec(name="generated", input_schema=schema)
    rows = check_exports([spec])
    assert not rows["problem"].str.startswith("could not be checked").any(), rows.to_dict()

    strict = export_tool(spec, "openai-strict")["function"]
    refused = rows[(rows["target"] == "openai-strict") & (rows["severity"] == "error")]
    assert strict["strict"] is refused.empty
    if strict["strict"]:
        parameters = strict["parameters"]
        from agents.strict_schema import ensure_strict_json_schema  # a second of collection

        root = copy.deepcopy(parameters)
        assert _ensure_strict_json_schema(root, path=(), root=root) == parameters
        assert ensure_strict_json_schema(copy.deepcopy(parameters)) == parameters
    declaration = export_tool(spec, "gemini")
    dumped = genai.FunctionDeclaration.model_validate(declaration).model_dump(
        by_alias=True, exclude_none=True, mode="json"
    )
    assert dumped == declaration
