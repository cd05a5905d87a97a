"""The resilience matrix: generated from the schema, run through the preflight only, one row per
mistake with its outcome; and seed 000's "unknown properties are refused" check."""

from __future__ import annotations

from typing import Annotated, Any, Literal

import pandas as pd
import pytest
from pydantic import BaseModel, Field

from workbench.declare._schema import function_schema
from workbench.declare._spec import ToolSpec
from workbench.preflight._preflight import Preflight
from workbench.preflight._resilience import (
    COLUMNS,
    LONG_STRING_CHARS,
    baseline_arguments,
    mistakes,
    placeholder,
    refuses_unknown_properties,
    resilience_matrix,
)


class Window(BaseModel):
    limit: int = 5
    unit: Literal["lines", "bytes"] = "lines"


def read_file(
    path: str,
    window: Window,
    follow: bool = False,
    tags: list[str] | None = None,
    mode: Literal["text", "binary"] = "text",
    note: Annotated[str, Field(max_length=20)] = "",
) -> None:
    """Read a file."""


def spec_of(fn: Any) -> ToolSpec:
    schema = function_schema(fn)
    return ToolSpec(
        name=fn.__name__, description=schema.description, input_schema=schema.input_schema
    )


SPEC = spec_of(read_file)
PREFLIGHT = Preflight(SPEC.input_schema, tool_name="read_file")
MATRIX = resilience_matrix(SPEC, PREFLIGHT)


def row(case: str) -> pd.Series:
    rows = MATRIX[MATRIX["case"] == case]
    assert len(rows) == 1, f"no single row for {case}: {list(MATRIX['case'])}"
    return rows.iloc[0]


def test_columns_are_the_documented_ones_in_order():
    assert (
        list(MATRIX.columns)
        == list(COLUMNS)
        == [
            "case",
            "input",
            "outcome",
            "arguments",
            "coercions",
            "field",
            "expected",
            "message",
        ]
    )
    assert set(MATRIX["outcome"]) == {"accepted", "coerced", "refused"}
    assert MATRIX["case"].is_unique


def test_the_matrix_is_deterministic():
    again = resilience_matrix(SPEC, Preflight(SPEC.input_schema, tool_name="read_file"))
    assert again.to_dict("records") == MATRIX.to_dict("records")


def test_the_baseline_is_built_from_the_schema_and_accepted():
    baseline = row("baseline")
    assert baseline["input"] == {"path": "example", "window": {}}
    assert baseline["outcome"] == "accepted"
    assert baseline["arguments"] == baseline["input"]
    assert baseline["coercions"] == []
    assert baseline["field"] is None and baseline["message"] is None


def test_an_unknown_key_is_refused_naming_it():
    unknown = row("unknown_key")
    assert unknown["outcome"] == "refused"
    assert unknown["field"] == "unexpected_argument"
    assert unknown["arguments"] is None
    assert row("unknown_key:window")["field"] == "window.unexpected_argument"


@pytest.mark.parametrize("name", ["path", "window"])
def test_each_missing_required_argument_is_refused_naming_it(name):
    missing = row(f"missing:{name}")
    assert missing["outcome"] == "refused"
    assert missing["field"] == name
    assert missing["message"].startswith(f"Missing required argument `{name}`")


@pytest.mark.parametrize(
    ("case", "coercion"),
    [
        ("string_integer:window.limit", 'window.limit: "5" → 5'),
        ("string_boolean:follow", 'follow: "true" → true'),
        ("word_boolean:follow", 'follow: "No" → false'),
        ("json_array:tags", 'tags: "[\\"example\\"]" → ["example"]'),
        ("mixed_case_enum:mode", 'mode: "Text" → "text"'),
        ("mixed_case_enum:window.unit", 'window.unit: "Lines" → "lines"'),
        ("empty_filler:note", 'note: "" dropped (empty optional)'),
        ("null_optional:follow", "follow: null dropped (null for an optional argument)"),
        ("wrapped_properties", 'arguments: unwrapped from {"properties": ...}'),
        ("json_object:window", 'window: "{}" → {}'),
    ],
)
def test_the_mistakes_models_make_are_coerced_and_recorded(case, coercion):
    coerced = row(case)
    assert coerced["outcome"] == "coerced"
    assert coercion in coerced["coercions"]
    assert isinstance(coerced["arguments"], dict)


@pytest.mark.parametrize(
    ("case", "field"),
    [
        ("wrong_type:path", "path"),
        ("wrong_type:follow", "follow"),
        ("wrong_type:window.limit", "window.limit"),
        ("bare_string_array:tags", "tags"),
        ("not_in_enum:mode", "mode"),
        ("null_required:path", "path"),
        ("long_string:note", "note"),
        ("malformed_json_arguments", None),
        ("non_object_arguments", None),
        ("null_arguments", "path"),
    ],
)
def test_real_mistakes_are_refused_with_field_and_expected(case, field):
    refused = row(case)
    assert refused["outcome"] == "refused"
    assert refused["field"] == field
    assert refused["expected"] and refused["message"]


def test_long_strings_and_unicode_reach_a_plain_string_parameter_untouched():
    long = row("long_string:path")
    assert long["outcome"] == "accepted"
    assert len(long["arguments"]["path"]) == LONG_STRING_CHARS
    unicode = row("unicode:path")
    assert unicode["outcome"] == "accepted"
    assert unicode["arguments"]["path"] == unicode["input"]["path"]
    assert not unicode["input"]["path"].isascii()


def test_arguments_sent_as_a_json_string_are_accepted_without_a_note():
    # The form provider APIs carry arguments in (OpenAI's always): not a mistake forgiven.
    sent = row("json_string_arguments")
    assert (sent["outcome"], sent["coercions"]) == ("accepted", [])
    assert sent["arguments"] == row("baseline")["arguments"]


def test_a_nullable_optional_accepts_null_without_coercion():
    assert row("null_optional:tags")["outcome"] == "accepted"


def test_a_tool_without_parameters_still_gets_a_matrix():
    def ping() -> None:
        """Ping."""

    matrix = resilience_matrix(spec_of(ping), Preflight(spec_of(ping).input_schema, tool_name="p"))
    assert list(matrix["case"]) == [
        "baseline",
        "json_string_arguments",
        "malformed_json_arguments",
        "non_object_arguments",
        "null_arguments",
        "unknown_key",
    ]
    assert list(matrix["outcome"]) == [
        "accepted",
        "accepted",  # arguments as a JSON string: the wire's own form, nothing forgiven
        "refused",
        "refused",
        "accepted",
        "refused",
    ]


# --- the seed 000 matrix check ------------------------------------------------------------------


def test_function_tools_refuse_unknown_properties_at_every_declared_depth():
    assert refuses_unknown_properties(PREFLIGHT, baseline_arguments(SPEC.input_schema))
    assert refuses_unknown_properties(PREFLIGHT, {"path": "a", "window": {"limit": 2}})


def test_an_open_hand_written_schema_does_not_refuse_unknown_properties():
    schema = {"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]}
    assert not refuses_unknown_properties(Preflight(schema, tool_name="t"), {"q": "x"})


def test_an_open_nested_object_is_caught_too():
    schema = {
        "type": "object",
        "properties": {"box": {"type": "object", "properties": {"size": {"type": "integer"}}}},
        "additionalProperties": False,
    }
    preflight = Preflight(schema, tool_name="t")
    assert refuses_unknown_properties(preflight, {})
    assert not refuses_unknown_properties(preflight, {"box": {"size": 1}})


# --- baselines ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("schema", "value"),
    [
        ({"type": "string"}, "example"),
        ({"type": "string", "format": "date"}, "2024-01-31"),
        ({"type": "string", "minLength": 10}, "examplexxx"),
        ({"type": "string", "maxLength": 3}, "exa"),
        ({"type": "integer", "minimum": 5}, 5),
        ({"type": "integer", "exclusiveMaximum": 0}, -1),
        ({"type": "number"}, 1.5),
        ({"type": "boolean"}, True),
        ({"type": "array", "items": {"type": "integer"}, "minItems": 2}, [1, 1]),
        ({"type": "string", "default": "main"}, "main"),
        ({"type": "string", "examples": ["src/"]}, "src/"),
        ({"enum": ["b", "a"]}, "b"),
        ({"anyOf": [{"type": "integer"}, {"type": "null"}], "default": None}, 1),
        ({"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"]}, {"a": 1}),
    ],
)
def test_placeholders_follow_the_schema(schema, value):
    assert placeholder(schema, schema) == value


class Item(BaseModel):
    name: str
    qty: int


def test_baselines_of_varied_tools_are_accepted():
    def order(items: list[Item], when: str, express: bool, level: Literal[1, 2]) -> None: ...

    spec = spec_of(order)
    baseline = baseline_arguments(spec.input_schema)
    result = Preflight(spec.input_schema, tool_name="order")(baseline)
    assert result.ok and result.coercions == ()
    assert baseline == {
        "items": [{"name": "example", "qty": 1}],
        "when": "example",
        "express": True,
        "level": 1,
    }


def test_mistakes_start_with_the_baseline_and_cover_every_property():
    cases = mistakes(SPEC.input_schema)
    assert cases[0].name == "baseline"
    named = " ".join(case.name for case in cases)
    for name in ["path", "window", "follow", "tags", "mode", "note", "window.limit", "window.unit"]:
        assert f":{name} " in named + " "
