"""Provider tool lists (OpenAI, Anthropic, MCP validated by the official ``mcp`` package) and the
check_exports table: one row per problem, an empty table when all is well."""

from __future__ import annotations

from typing import Any

import mcp.types
import pandas as pd
import pytest
from pydantic import BaseModel

from workbench.declare._exports import (
    check_exports,
    dialect_verdicts,
    export_tool,
    export_tools,
    location,
)
from workbench.declare._schema import function_schema
from workbench.declare._spec import ToolSpec


class Match(BaseModel):
    path: str
    line: int


def search_files(pattern: str, limit: int = 10) -> Match:
    """Find files matching a glob pattern.

    Args:
        pattern: Glob such as "*.py".
        limit: Most matches to return.
    """
    return Match(path="", line=0)


def spec_of(fn: Any, **meta: Any) -> ToolSpec:
    schema = function_schema(fn)
    return ToolSpec(
        name=meta.pop("name", fn.__name__),
        description=schema.description,
        input_schema=schema.input_schema,
        output_schema=schema.output_schema,
        **meta,
    )


SPEC = spec_of(search_files, read_only=True, idempotent=True)


def raw_spec(input_schema: dict[str, Any], **fields: Any) -> ToolSpec:
    return ToolSpec(
        name=fields.pop("name", "raw_tool"),
        description=fields.pop("description", "A hand-written tool."),
        input_schema=input_schema,
        **fields,
    )


CLOSED = {
    "type": "object",
    "properties": {"q": {"type": "string", "description": "The query."}},
    "required": ["q"],
    "additionalProperties": False,
}


# --- shapes -------------------------------------------------------------------------------------


def test_openai_export_is_the_chat_completions_function_shape():
    assert export_tool(SPEC, "openai") == {
        "type": "function",
        "function": {
            "name": "search_files",
            "description": "Find files matching a glob pattern.",
            "parameters": SPEC.input_schema,
        },
    }


def test_anthropic_export_is_name_description_input_schema():
    assert export_tool(SPEC, "anthropic") == {
        "name": "search_files",
        "description": "Find files matching a glob pattern.",
        "input_schema": SPEC.input_schema,
    }


def test_mcp_export_carries_schemas_and_safety_annotations_and_validates_with_mcp():
    exported = export_tool(SPEC, "mcp")
    assert exported["inputSchema"] == SPEC.input_schema
    assert exported["outputSchema"] == SPEC.output_schema
    assert exported["annotations"] == {
        "readOnlyHint": True,
        "destructiveHint": False,
        "idempotentHint": True,
        "openWorldHint": False,
    }
    tool = mcp.types.Tool.model_validate(exported)
    assert tool.name == "search_files"
    assert tool.input_schema == SPEC.input_schema
    assert tool.annotations is not None and tool.annotations.read_only_hint is True
    assert tool.annotations.destructive_hint is False
    assert tool.model_dump(by_alias=True, exclude_none=True) == exported


def test_mcp_export_omits_output_schema_when_there_is_none():
    exported = export_tool(raw_spec(CLOSED), "mcp")
    assert "outputSchema" not in exported
    mcp.types.Tool.model_validate(exported)


def test_mcp_export_wraps_a_non_object_output_schema_in_result():
    spec = raw_spec(CLOSED, output_schema={"type": "array", "items": {"type": "string"}})
    exported = export_tool(spec, "mcp")
    assert exported["outputSchema"] == {
        "type": "object",
        "properties": {"result": {"type": "array", "items": {"type": "string"}}},
        "required": ["result"],
        "additionalProperties": False,
    }
    assert mcp.types.Tool.model_validate(exported).output_schema == exported["outputSchema"]


@pytest.mark.parametrize("target", ["openai", "openai-strict", "anthropic", "gemini", "mcp"])
def test_exports_are_copies_that_never_change_the_spec(target):
    exported = export_tool(SPEC, target)
    schema = (
        exported.get("function", {}).get("parameters")
        or exported.get("parameters")
        or exported.get("input_schema", exported.get("inputSchema"))
    )
    schema["properties"]["pattern"]["description"] = "changed"
    assert SPEC.input_schema["properties"]["pattern"]["description"] == 'Glob such as "*.py".'


def test_export_tools_keeps_order_and_refuses_unknown_targets():
    other = raw_spec(CLOSED)
    assert [t["name"] for t in export_tools([SPEC, other], "anthropic")] == [
        "search_files",
        "raw_tool",
    ]
    with pytest.raises(ValueError, match="unknown export target"):
        export_tool(SPEC, "cohere")  # type: ignore[arg-type]


# --- check_exports ------------------------------------------------------------------------------


STRUCTURED_OUTSIDE_BUDGET = (
    "mcp",
    "warning",
    "clients that prefer structured content hand their model the whole result as "
    "structuredContent, outside the receipt budget; only clients that read the text get the "
    "receipt (a cut call's card and row say how much more)",
)


def problems(frame: pd.DataFrame) -> list[tuple[str, str, str]]:
    return list(zip(frame["target"], frame["severity"], frame["problem"], strict=True))


def test_a_clean_tool_gives_an_empty_table_with_the_columns():
    def lookup(key: str, exact: bool) -> None:
        """Look a key up.

        Args:
            key: The key.
            exact: Match exactly.
        """

    frame = check_exports([spec_of(lookup), raw_spec(CLOSED)])
    assert list(frame.columns) == ["tool", "target", "severity", "problem", "fix"]
    assert frame.empty


def test_no_specs_give_an_empty_table():
    assert check_exports([]).empty


def test_a_dotted_name_is_fine_for_mcp_but_refused_by_the_model_apis():
    frame = check_exports([raw_spec(CLOSED, name="files.search")])
    assert set(zip(frame["target"], frame["severity"], strict=True)) == {
        ("openai", "error"),
        ("openai-strict", "error"),
        ("anthropic", "error"),
    }
    assert frame["problem"].str.contains("valid for MCP").all()
    assert (frame["tool"] == "files.search").all()


def test_a_name_with_spaces_is_outside_mcp_advice_too():
    frame = check_exports([raw_spec(CLOSED, name="search files")])
    assert set(frame["target"]) == {"openai", "openai-strict", "anthropic", "gemini", "mcp"}
    assert frame.loc[frame["target"] == "mcp", "severity"].tolist() == ["warning"]


def test_a_top_level_that_is_not_an_object_is_an_error_for_every_target():
    frame = check_exports([raw_spec({"type": "array", "items": {"type": "string"}})])
    errors = frame[frame["severity"] == "error"]
    assert sorted(errors["target"]) == ["anthropic", "gemini", "mcp", "openai", "openai-strict"]
    assert errors["problem"].str.contains("not an object|an object at the top level").all()


def test_a_top_level_any_of_is_an_error_for_the_model_apis():
    schema = {**CLOSED, "anyOf": [{"required": ["q"]}]}
    frame = check_exports([raw_spec(schema)])
    rows = frame[frame["problem"].str.contains("top level uses anyOf")]
    assert sorted(rows["target"]) == ["anthropic", "gemini", "openai"]
    strict = frame[frame["target"] == "openai-strict"]["problem"]
    assert strict.str.startswith("strict mode refuses anyOf/oneOf at the top level").any()


def test_an_invalid_schema_is_reported_not_raised():
    frame = check_exports([raw_spec({"type": "object", "properties": {"q": {"type": "strng"}}})])
    assert problems(frame) == [("all", "error", frame["problem"].iloc[0])]
    assert frame["problem"].iloc[0].startswith("input schema is invalid")


def test_missing_tool_and_parameter_descriptions_are_warnings():
    def bare(query: str) -> None: ...

    frame = check_exports([spec_of(bare)])
    assert problems(frame) == [
        ("all", "warning", "tool has no description; the model must guess when to call it"),
        ("all", "warning", "parameter `query` has no description"),
    ]


def test_an_untyped_parameter_is_a_warning():
    schema = {**CLOSED, "properties": {"q": {"description": "Anything."}}}
    frame = check_exports([raw_spec(schema)])
    assert problems(frame) == [
        ("all", "warning", "parameter `q` has no type; the model may send anything"),
        (
            "openai-strict",
            "error",
            "`q` has no type; strict mode needs one on every value; the tool goes out with "
            "strict: false",
        ),
    ]


def test_optional_properties_become_nullable_in_strict_mode_and_that_is_one_warning():
    frame = check_exports([SPEC])
    assert problems(frame) == [
        (
            "openai-strict",
            "warning",
            "optional arguments `limit` become required and nullable; defaults move into the "
            "descriptions (the model sends null to leave one out)",
        ),
        STRUCTURED_OUTSIDE_BUDGET,
    ]


def test_a_free_form_mapping_is_a_strict_refusal_and_a_gemini_string():
    def tag(labels: dict[str, str]) -> None:
        """Tag.

        Args:
            labels: Labels to set.
        """

    frame = check_exports([spec_of(tag)])
    assert problems(frame) == [
        (
            "openai-strict",
            "error",
            "`labels` is a free-form mapping; strict mode needs every object closed with its "
            "keys declared; the tool goes out with strict: false",
        ),
        (
            "gemini",
            "warning",
            "free-form mapping `labels`: Gemini objects are only their declared properties, so "
            "it is sent as a JSON string (the preflight parses it)",
        ),
    ]


def test_a_mapping_of_anything_is_invisible_to_the_model_apis():
    def note(extra: dict[str, Any]) -> None:
        """Note.

        Args:
            extra: Anything.
        """

    frame = check_exports([spec_of(note)], targets=["openai", "anthropic", "mcp"])
    assert sorted(frame["target"]) == ["anthropic", "mcp", "openai"]
    assert frame["problem"].str.startswith("`extra`: a free-form mapping; the model sees").all()


def test_a_hand_written_open_schema_is_pointed_out_for_the_preflight():
    schema = {k: v for k, v in CLOSED.items() if k != "additionalProperties"}
    frame = check_exports([raw_spec(schema)])
    assert [target for target, _s, _p in problems(frame)] == ["all"]
    assert "preflight cannot refuse" in frame["problem"].iloc[0]
    strict = export_tool(raw_spec(schema), "openai-strict")["function"]
    assert strict["strict"] is True
    assert strict["parameters"]["additionalProperties"] is False


def test_unsupported_keywords_are_dialect_warnings_grouped_per_keyword():
    schema = {
        "type": "object",
        "properties": {
            "q": {"type": "string", "minLength": 1, "description": "Q."},
            "tags": {
                "type": "array",
                "items": {"type": "string", "minLength": 2},
                "uniqueItems": True,
                "description": "Tags.",
            },
            "day": {"type": "integer", "multipleOf": 7, "description": "Day."},
        },
        "required": ["q", "tags", "day"],
        "additionalProperties": False,
    }
    rows = problems(check_exports([raw_spec(schema)]))
    moved = "moves into the description, the preflight still enforces it"
    assert rows == [
        ("openai-strict", "warning", f"strict mode has no `minLength` (at q, tags[]); it {moved}"),
        ("openai-strict", "warning", f"strict mode has no `uniqueItems` (at tags); it {moved}"),
        ("gemini", "warning", f"Gemini has no `uniqueItems` (at tags); it {moved}"),
        ("gemini", "warning", f"Gemini has no `multipleOf` (at day); it {moved}"),
    ]


def test_targets_narrow_the_table():
    frame = check_exports([SPEC, raw_spec(CLOSED, name="files.search")], targets=["mcp"])
    assert problems(frame) == [STRUCTURED_OUTSIDE_BUDGET]
    assert frame["tool"].tolist() == ["search_files"]


def test_every_tool_with_an_output_schema_says_structured_clients_see_it_whole():
    counted = {"type": "object", "properties": {"n": {"type": "integer"}}}
    frame = check_exports([SPEC, raw_spec(CLOSED, name="counted", output_schema=counted)], ["mcp"])
    assert frame["tool"].tolist() == ["search_files", "counted"]
    assert problems(frame) == [STRUCTURED_OUTSIDE_BUDGET] * 2
    assert "as each client sees it" in frame["fix"].iloc[0]
    text_only = check_exports([raw_spec(CLOSED)], targets=["mcp"])
    assert text_only.empty


def test_dialect_verdicts_is_a_tool_by_provider_table():
    def tag(labels: dict[str, str]) -> None:
        """Tag.

        Args:
            labels: Labels to set.
        """

    verdicts = dialect_verdicts([SPEC, spec_of(tag), raw_spec(CLOSED, name="files.search")])
    assert list(verdicts.columns) == ["openai", "openai-strict", "anthropic", "gemini", "mcp"]
    assert verdicts.index.name == "tool"
    assert verdicts.loc["search_files"].tolist() == ["ok", "changed", "ok", "ok", "changed"]
    assert verdicts.loc["tag"].tolist() == ["ok", "refused", "ok", "changed", "ok"]
    assert verdicts.loc["files.search"].tolist() == ["refused", "refused", "refused", "ok", "ok"]
    narrow = dialect_verdicts([SPEC], targets=["gemini"])
    assert narrow.to_dict() == {"gemini": {"search_files": "ok"}}


def test_a_non_object_output_schema_is_an_mcp_warning():
    frame = check_exports([raw_spec(CLOSED, output_schema={"type": "string"})])
    assert problems(frame) == [
        STRUCTURED_OUTSIDE_BUDGET,
        (
            "mcp",
            "warning",
            'output schema is not an object; the MCP export wraps it as {"result": ...}',
        ),
    ]


def test_a_broken_spec_is_a_row_not_a_crash():
    nameless = raw_spec(CLOSED)
    object.__setattr__(nameless, "name", None)
    schemaless = raw_spec(CLOSED)
    object.__setattr__(schemaless, "input_schema", None)
    frame = check_exports([nameless, schemaless, raw_spec(CLOSED)])
    assert frame["severity"].tolist() == ["error", "error"]
    assert frame["problem"].iloc[0].startswith("could not be checked (TypeError")
    assert frame["problem"].iloc[1].startswith("input schema is invalid")


@pytest.mark.parametrize(
    ("path", "text"),
    [
        ((), "the top level"),
        (("properties", "filters", "properties", "limit"), "filters.limit"),
        (("properties", "tags", "items"), "tags[]"),
        (("properties", "maybe", "anyOf", "0", "properties", "x"), "maybe.x"),
        (("properties", "labels", "additionalProperties"), "labels.*"),
        (("$defs", "Node", "properties", "name"), "$defs.Node.name"),
    ],
)
def test_locations_read_as_argument_paths(path, text):
    assert location(path) == text


def test_the_registry_exports_every_dialect_and_gives_the_verdict_table():
    from workbench import Registry

    tools = Registry(history=":memory:")
    tools.register(search_files)
    assert [tools.export(t)[0]["function"]["strict"] for t in ("openai-strict",)] == [True]
    assert tools.export("gemini")[0]["parameters"]["properties"]["limit"]["default"] == 10
    assert tools.dialect_verdicts().loc["search_files", "openai-strict"] == "changed"
    assert tools.dialect_verdicts().loc["search_files", "gemini"] == "ok"
