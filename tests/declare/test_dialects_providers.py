"""Gemini, Anthropic and MCP exports of every demo, built-in and adversarial tool, checked by each
provider SDK's own types (google-genai ``FunctionDeclaration``/``Schema``, anthropic ``ToolParam``,
``mcp.types.Tool``), offline. A round trip through the SDK's model must give the export back
unchanged: nothing the SDK would drop or rename."""

from __future__ import annotations

import json
from typing import Any

import mcp.types
import pytest
from google.genai import types as genai
from pydantic import TypeAdapter

from tests.declare import support as dialect_tools
from workbench.declare._exports import check_exports, export_tool
from workbench.declare._gemini import RECURSION_DEPTH
from workbench.mcp import demo

DEMO = demo.registry()
ADVERSARIAL = dialect_tools.registry()
ALL = [(DEMO, name) for name in DEMO.names()] + [(ADVERSARIAL, n) for n in ADVERSARIAL.names()]
IDS = [name for _registry, name in ALL]


def gemini(name: str) -> dict[str, Any]:
    return export_tool(ADVERSARIAL.spec(name), "gemini")


def keys_anywhere(value: Any) -> set[str]:
    if isinstance(value, dict):
        return set(value).union(*(keys_anywhere(v) for v in value.values()))
    if isinstance(value, list):
        return set().union(*(keys_anywhere(v) for v in value))
    return set()


@pytest.mark.parametrize(("registry", "name"), ALL, ids=IDS)
def test_gemini_export_round_trips_through_google_genai_unchanged(registry, name):
    exported = export_tool(registry.spec(name), "gemini")
    declaration = genai.FunctionDeclaration.model_validate(exported)
    dumped = declaration.model_dump(by_alias=True, exclude_none=True, mode="json")
    assert dumped == exported
    assert not keys_anywhere(exported) & {"$ref", "$defs", "ref", "defs", "additionalProperties"}
    assert declaration.parameters_json_schema is None


@pytest.mark.parametrize(("registry", "name"), ALL, ids=IDS)
def test_anthropic_export_is_a_valid_tool_param(registry, name):
    from anthropic.types import ToolParam  # here: a second of every test process's collection

    spec = registry.spec(name)
    exported = export_tool(spec, "anthropic")
    assert set(exported) <= ToolParam.__optional_keys__ | ToolParam.__required_keys__
    assert TypeAdapter(ToolParam).validate_python(exported) == exported
    assert exported["input_schema"]["type"] == "object"
    assert exported["input_schema"] == spec.input_schema


@pytest.mark.parametrize(("registry", "name"), ALL, ids=IDS)
def test_mcp_export_round_trips_through_mcp_types_tool(registry, name):
    exported = export_tool(registry.spec(name), "mcp")
    tool = mcp.types.Tool.model_validate(exported)
    assert tool.model_dump(by_alias=True, exclude_none=True) == exported


def test_the_round_trip_can_fail_on_a_keyword_gemini_lacks():
    with pytest.raises(ValueError, match="exclusiveMinimum"):
        genai.Schema.model_validate({"type": "NUMBER", "exclusiveMinimum": 0})
    schema = DEMO.spec("shell_exec").input_schema
    assert "exclusiveMinimum" in json.dumps(schema)
    exported = export_tool(DEMO.spec("shell_exec"), "gemini")
    timeout = exported["parameters"]["properties"]["timeout"]
    assert timeout["nullable"] is True
    assert timeout["description"].endswith("(exclusiveMinimum: 0)")


def test_nested_models_are_inlined_and_optional_lists_nullable():
    properties = gemini("nested")["parameters"]["properties"]
    assert properties["origin"] == {
        "type": "OBJECT",
        "properties": {"x": {"type": "NUMBER"}, "y": {"type": "NUMBER", "default": 0.0}},
        "required": ["x"],
        "description": "Where to start.",
    }
    assert properties["path"]["type"] == "ARRAY"
    assert properties["path"]["nullable"] is True
    assert properties["path"]["items"]["properties"]["x"] == {"type": "NUMBER"}


def test_a_recursive_model_is_inlined_a_bounded_number_of_levels_and_reported():
    tree = gemini("recursive")["parameters"]["properties"]["tree"]
    depth = 0
    while "children" in tree["properties"]:
        tree = tree["properties"]["children"]["items"]
        depth += 1
    assert depth == RECURSION_DEPTH
    assert tree["properties"] == {"name": {"type": "STRING"}}
    rows = check_exports([ADVERSARIAL.spec("recursive")], targets=["gemini"])
    assert rows["problem"].tolist() == [
        f"recursive `Node` is inlined {RECURSION_DEPTH} levels deep (Gemini has no $ref); "
        "deeper `tree.children[].children[].children[].children[]` left out"
    ]


def test_enums_use_gemini_enum_format_and_integer_literals_become_strings():
    properties = gemini("enums")["parameters"]["properties"]
    assert properties["color"] == {
        "type": "STRING",
        "format": "enum",
        "enum": ["red", "green"],
        "description": "The colour.",
    }
    assert properties["level"]["type"] == "INTEGER"
    assert properties["level"]["enum"] == ["1", "2", "3"]
    # a Gemini model answers an INTEGER enum with an integer, which the preflight takes as is
    assert ADVERSARIAL.preflight("enums", {"color": "red", "level": 2}).ok


def test_unions_become_any_of_and_a_free_form_mapping_a_json_string_the_preflight_parses():
    shape = gemini("union")["parameters"]["properties"]["shape"]
    assert [branch["properties"]["kind"]["enum"] for branch in shape["anyOf"]] == [
        ["circle"],
        ["square"],
    ]
    value = gemini("union")["parameters"]["properties"]["value"]
    assert value["anyOf"] == [{"type": "INTEGER"}, {"type": "STRING"}]
    meta = gemini("mapping")["parameters"]["properties"]["meta"]
    assert meta == {
        "type": "STRING",
        "description": "Anything at all. (a JSON object, as a string)",
    }
    result = ADVERSARIAL.preflight("mapping", {"meta": '{"a": [1, 2]}', "labels": '{"k": "v"}'})
    assert result.ok, result.error
    assert result.arguments == {"meta": {"a": [1, 2]}, "labels": {"k": "v"}}


def test_defaults_of_every_json_type_survive_where_gemini_can_carry_them():
    properties = gemini("defaults")["parameters"]["properties"]
    assert {name: prop.get("default") for name, prop in properties.items()} == {
        "text": "x",
        "count": 3,
        "ratio": 0.5,
        "flag": False,
        "nothing": None,  # Gemini's Schema cannot carry a null default
        "items": [1, 2],
        "point": {"x": 1.0, "y": 0.0},
    }


def test_a_tool_without_arguments_declares_no_parameters():
    assert gemini("no_arguments") == {"name": "no_arguments", "description": "Takes nothing."}


def test_one_of_and_tuples_are_reported_for_gemini():
    rows = check_exports([ADVERSARIAL.spec("hand_written")], targets=["gemini"])
    problems = " | ".join(rows["problem"])
    assert "oneOf becomes anyOf for Gemini (at target)" in problems
    assert "Gemini has no `prefixItems` (at pair)" in problems
    assert "minLength" not in problems  # Gemini takes minLength


def test_gemini_names_allow_dots_and_colons_but_must_start_with_a_letter():
    spec = ADVERSARIAL.spec("no_arguments")
    assert check_exports([spec.model_copy(update={"name": "ns:tool.v2"})], ["gemini"]).empty
    rows = check_exports([spec.model_copy(update={"name": "2fast"})], ["gemini"])
    assert rows["severity"].tolist() == ["error"]
