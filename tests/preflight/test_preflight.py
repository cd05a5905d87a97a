"""The seed 000 preflight: every coercion and its refusal twin, nested objects, validation
messages a model can act on, and fuzzing that it never raises."""

from __future__ import annotations

import copy
import json
from typing import Any, Literal

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator
from pydantic import BaseModel, Field

import workbench as wb
from tests.envelope.support import json_values
from workbench.declare._schema import function_schema
from workbench.preflight._preflight import DROPPED, Coercion, Preflight, PreflightResult


class Window(BaseModel):
    limit: int = 5
    exact: bool = False


class Filters(BaseModel):
    window: Window
    kinds: list[Literal["file", "directory"]] = []
    note: str = ""


def write_note(
    content: str,
    timeout: int = 30,
    ratio: float = 0.5,
    force: bool = False,
    scope: Literal["pinned", "all"] = "all",
    packages: list[str] | None = None,
    ids: list[int] = Field(default_factory=list),  # noqa: B008
    filters: Filters | None = None,
    description: str = "",
    retries: int = None,  # type: ignore[assignment]  # noqa: RUF013
    maybe: int | None = None,
) -> None:
    """Write a note.

    Args:
        content: The note's text.
        timeout: Seconds to wait.
    """


SCHEMA = function_schema(write_note).input_schema
preflight = Preflight(SCHEMA, tool_name="write_note")
validator = Draft202012Validator(SCHEMA)


def accepted(raw: object) -> PreflightResult:
    result = preflight(raw)
    assert result.ok, result.error and result.error.error.message
    assert result.error is None and isinstance(result.arguments, dict)
    return result


def refused(raw: object) -> wb.ToolError:
    result = preflight(raw)
    assert not result.ok and result.arguments is None
    assert result.error is not None and result.error.error is not None
    assert result.error.status == "error"
    assert result.error.tool_name == "write_note"
    assert result.error.error.kind == wb.ErrorKind.INVALID_ARGS
    assert result.error.error.retryable is True
    return result.error.error


def rules(result: PreflightResult) -> list[tuple[str, str]]:
    return [(c.field, c.rule) for c in result.coercions]


def with_content(**arguments: Any) -> dict[str, Any]:
    return {"content": "hello", **arguments}


# --- scalar coercions and their refusal twins ---------------------------------------------------


@pytest.mark.parametrize(("text", "number"), [("15", 15), (" 15 ", 15), ("-3", -3), ("3.0", 3)])
def test_string_encoded_integers_become_integers(text, number):
    result = accepted(with_content(timeout=text))
    assert result.arguments == with_content(timeout=number)
    assert type(result.arguments["timeout"]) is int
    assert result.coercions == (Coercion("timeout", "string_to_integer", text, number),)


@pytest.mark.parametrize("text", ["3.5", "abc", "1_000", "٣", "0x10", "1e400", "", "15 apples"])
def test_strings_that_are_not_integers_are_refused_for_integers(text):
    error = refused({"content": "x", "ids": [text]})
    assert error.field == "ids[0]"
    assert error.expected == "integer"


def test_a_boolean_is_not_an_integer():
    error = refused(with_content(timeout=True))
    assert error.field == "timeout"
    assert error.message == "Argument `timeout` must be an integer, got boolean true."
    assert error.expected == "integer, e.g. 30"


@pytest.mark.parametrize(
    ("text", "number"), [("3.14", 3.14), ("2", 2), ("-0.5", -0.5), ("1e3", 1000.0), (".5", 0.5)]
)
def test_string_encoded_numbers_become_numbers(text, number):
    result = accepted(with_content(ratio=text))
    assert result.arguments["ratio"] == number
    assert rules(result) == [("ratio", "string_to_number")]


@pytest.mark.parametrize("text", ["nan", "inf", "-Infinity", "3.14abc", "1,5", "1e999"])
def test_strings_that_are_not_finite_numbers_are_refused_for_numbers(text):
    assert refused(with_content(ratio=text)).field == "ratio"


@pytest.mark.parametrize("text", ["true", "TRUE", " yes ", "1", "on", "Yes"])
def test_true_forms_become_true(text):
    result = accepted(with_content(force=text))
    assert result.arguments["force"] is True
    assert rules(result) == [("force", "string_to_boolean")]


@pytest.mark.parametrize("text", ["false", "False", "no", "0", "OFF", " no"])
def test_false_forms_become_false(text):
    assert accepted(with_content(force=text)).arguments["force"] is False


@pytest.mark.parametrize("value", ["maybe", "tru", "2", 1, 0, [True]])
def test_other_values_are_refused_for_booleans(value):
    error = refused(with_content(force=value))
    assert error.field == "force"
    assert error.expected == "boolean, e.g. false"


# --- JSON-encoded arrays and objects ------------------------------------------------------------


def test_a_json_encoded_array_becomes_an_array():
    result = accepted(with_content(packages='["a", "b"]'))
    assert result.arguments["packages"] == ["a", "b"]
    assert rules(result) == [("packages", "json_string_to_array")]


def test_items_of_a_json_encoded_array_are_coerced_too():
    result = accepted(with_content(ids='[1, "2"]'))
    assert result.arguments["ids"] == [1, 2]
    assert rules(result) == [("ids", "json_string_to_array"), ("ids[1]", "string_to_integer")]


@pytest.mark.parametrize("text", ["a,b", "a", '{"a": 1}', "[1,", "null"])
def test_a_bare_or_non_array_string_is_refused_for_an_array(text):
    error = refused(with_content(packages=text))
    assert error.field == "packages"
    assert error.expected == "array of string or null"


def test_a_json_encoded_object_becomes_an_object_and_is_coerced_inside():
    encoded = json.dumps({"window": {"limit": "7"}, "kinds": '["File"]'})
    result = accepted(with_content(filters=encoded))
    assert result.arguments["filters"] == {"window": {"limit": 7}, "kinds": ["file"]}
    assert rules(result) == [
        ("filters", "json_string_to_object"),
        ("filters.window.limit", "string_to_integer"),
        ("filters.kinds", "json_string_to_array"),
        ("filters.kinds[0]", "enum_case"),
    ]


@pytest.mark.parametrize("text", ["[1]", "window", '"{}"'])
def test_a_string_that_is_not_an_encoded_object_is_refused_for_an_object(text):
    assert refused(with_content(filters=text)).field == "filters"


# --- never further than the schema asks ---------------------------------------------------------


@pytest.mark.parametrize("text", ['{"a": 1}', "[1, 2]", "15", "true", "null", "  "])
def test_a_json_looking_string_for_a_string_parameter_stays_a_string(text):
    result = accepted({"content": text})
    assert result.arguments == {"content": text}
    assert result.coercions == ()


@pytest.mark.parametrize("value", [5, 1.5, True, ["a"], {"a": 1}])
def test_non_strings_for_a_string_parameter_are_refused(value):
    error = refused({"content": value})
    assert error.field == "content"
    assert error.message.startswith("Argument `content` must be a string, got ")


def test_numbers_inside_a_string_array_are_refused_not_stringified():
    assert refused(with_content(packages=[1])).field == "packages[0]"


# --- empty fillers and nulls --------------------------------------------------------------------


@pytest.mark.parametrize("filler", ["", " ", "\n\t"])
def test_empty_fillers_for_optional_parameters_are_dropped(filler):
    raw = with_content(description=filler, timeout=filler, packages=filler, filters=filler)
    result = accepted(raw)
    assert result.arguments == with_content()
    assert rules(result) == [
        ("description", "dropped_empty_optional"),
        ("timeout", "dropped_empty_optional"),
        ("packages", "dropped_empty_optional"),
        ("filters", "dropped_empty_optional"),
    ]
    assert all(c.after is DROPPED for c in result.coercions)


def test_a_required_parameter_keeps_its_empty_value():
    result = accepted({"content": ""})
    assert result.arguments == {"content": ""}
    assert result.coercions == ()


def test_a_null_for_an_optional_parameter_that_refuses_null_is_dropped():
    result = accepted(with_content(retries=None, timeout=None))
    assert result.arguments == with_content()
    assert rules(result) == [
        ("retries", "dropped_null_optional"),
        ("timeout", "dropped_null_optional"),
    ]


def test_a_null_for_a_nullable_optional_parameter_is_kept():
    result = accepted(with_content(maybe=None, filters=None))
    assert result.arguments == with_content(maybe=None, filters=None)
    assert result.coercions == ()


def test_a_null_for_a_required_parameter_is_refused():
    error = refused({"content": None})
    assert error.field == "content"
    assert error.message == "Argument `content` must be a string, got null."


def test_fillers_inside_nested_objects_follow_the_same_rules():
    raw = with_content(filters={"window": {"limit": "", "exact": None}, "note": " "})
    result = accepted(raw)
    assert result.arguments["filters"] == {"window": {}}
    assert [field for field, _rule in rules(result)] == [
        "filters.window.limit",
        "filters.window.exact",
        "filters.note",
    ]


def test_a_required_nested_object_keeps_its_empty_value_and_is_refused():
    error = refused(with_content(filters={"window": ""}))
    assert error.field == "filters.window"


# --- enums --------------------------------------------------------------------------------------


@pytest.mark.parametrize("text", ["Pinned", "PINNED", " pinned ", "pInNeD"])
def test_enum_values_are_case_normalised_to_the_declared_form(text):
    result = accepted(with_content(scope=text))
    assert result.arguments["scope"] == "pinned"
    assert result.coercions == (Coercion("scope", "enum_case", text, "pinned"),)


def test_an_enum_miss_is_refused_listing_the_values():
    error = refused(with_content(scope="everything"))
    assert error.field == "scope"
    assert error.expected == 'one of "pinned", "all"'
    assert error.message == 'Argument `scope` must be one of "pinned", "all"; got "everything".'


def test_ambiguous_case_folds_are_left_to_the_validator():
    schema = {"type": "object", "properties": {"unit": {"type": "string", "enum": ["MB", "Mb"]}}}
    check = Preflight(schema, tool_name="t")
    assert check({"unit": "Mb"}).arguments == {"unit": "Mb"}
    assert not check({"unit": "mb"}).ok


def test_integer_enums_coerce_strings_first():
    schema = {"type": "object", "properties": {"level": {"type": "integer", "enum": [1, 2, 3]}}}
    check = Preflight(schema, tool_name="t")
    assert check({"level": "2"}).arguments == {"level": 2}
    assert check({"level": "4"}).error is not None


# --- the arguments object itself ----------------------------------------------------------------


def test_arguments_wrapped_in_properties_are_unwrapped():
    result = accepted({"properties": {"content": "x", "timeout": "5"}})
    assert result.arguments == {"content": "x", "timeout": 5}
    assert rules(result) == [("", "unwrapped_properties"), ("timeout", "string_to_integer")]


def test_a_properties_wrapper_without_a_matching_key_is_not_unwrapped():
    error = refused({"properties": {"colour": "red"}})
    assert error.field == "content"  # missing first, then the unknown `properties`


def test_a_declared_properties_field_is_never_unwrapped():
    schema = {
        "type": "object",
        "properties": {"properties": {"type": "object"}, "name": {"type": "string"}},
        "additionalProperties": False,
    }
    result = Preflight(schema, tool_name="t")({"properties": {"name": "x"}})
    assert result.arguments == {"properties": {"name": "x"}}
    assert result.coercions == ()


def test_arguments_as_a_json_string_are_parsed_and_recorded():
    raw = '{"content": "x", "timeout": "5"}'
    result = accepted(raw)
    assert result.arguments == {"content": "x", "timeout": 5}
    assert rules(result)[0] == ("", "parsed_json_arguments")
    assert str(result.coercions[0]) == "arguments: JSON string parsed into an object"


@pytest.mark.parametrize("raw", ['{"content": "x"', "", "{'content': 'x'}", '{"a": NaN}', "nul"])
def test_malformed_json_arguments_are_refused_never_read_as_empty(raw):
    error = refused(raw)
    assert error.field is None
    assert error.message.startswith("Arguments are not valid JSON")
    assert error.expected == "a JSON object of arguments"


@pytest.mark.parametrize(
    ("raw", "kind"), [("[1]", "array"), ('"x"', "string"), ([], "array"), (5, "integer")]
)
def test_arguments_that_are_not_an_object_are_refused(raw, kind):
    error = refused(raw)
    assert error.message == f"Arguments must be a JSON object, got {kind}."


def test_none_and_json_null_mean_no_arguments():
    check = Preflight({"type": "object", "properties": {}}, tool_name="t")
    assert check(None).arguments == {}
    assert check("null").arguments == {}
    assert check(b'{"a": 1}').arguments == {"a": 1}


def test_non_string_argument_names_are_refused():
    assert refused({"content": "x", 1: 2}).message == "Argument names must be strings, got 1."


def test_the_callers_arguments_are_never_mutated():
    raw = with_content(timeout="5", description="", filters={"window": {"limit": "3"}})
    before = copy.deepcopy(raw)
    accepted(raw)
    assert raw == before


# --- validation messages ------------------------------------------------------------------------


def test_an_unknown_argument_names_itself_and_what_the_tool_accepts():
    check = Preflight(
        {
            "type": "object",
            "properties": {"color": {"type": "string"}, "size": {"type": "integer"}},
            "additionalProperties": False,
        },
        tool_name="paint",
    )
    error = check({"colour": "red"}).error
    assert error is not None and error.error is not None
    assert error.error.field == "colour"
    assert error.error.message == "Unknown argument `colour`; this tool accepts: `color`, `size`."
    assert error.error.expected == "one of: color, size"


def test_a_missing_required_argument_names_itself_and_its_type():
    error = refused({})
    assert error.field == "content"
    assert error.message == "Missing required argument `content` (string)."


def test_missing_beats_unknown_beats_wrong_type_deterministically():
    assert refused({"timeout": "x", "colour": 1}).field == "content"
    assert refused({"content": "x", "timeout": "x", "colour": 1}).field == "colour"
    assert refused({"content": "x", "timeout": "x"}).field == "timeout"


def test_unknown_and_missing_keys_at_depth_have_dotted_fields():
    unknown = refused(with_content(filters={"window": {"limit": 1, "limt": 2}}))
    assert unknown.field == "filters.window.limt"
    assert unknown.message == (
        "Unknown argument `filters.window.limt`; `filters.window` accepts: `limit`, `exact`."
    )
    missing = refused(with_content(filters={"kinds": ["file"]}))
    assert missing.field == "filters.window"
    assert missing.message == "Missing required argument `filters.window` (object)."


def test_expected_carries_an_example_from_the_schema():
    schema = {
        "type": "object",
        "properties": {"path": {"type": "string", "examples": ["src/app.py"]}},
        "required": ["path"],
    }
    error = Preflight(schema, tool_name="t")({}).error
    assert error is not None and error.error is not None
    assert error.error.expected == 'string, e.g. "src/app.py"'


def test_constraint_failures_name_the_constraint_and_never_echo_huge_values():
    schema = {
        "type": "object",
        "properties": {"name": {"type": "string", "maxLength": 10}, "n": {"minimum": 1}},
    }
    check = Preflight(schema, tool_name="t")
    error = check({"name": "x" * 100_000}).error
    assert error is not None and error.error is not None
    assert error.error.message.startswith("Argument `name` must be at most 10 characters long")
    assert len(error.error.message) < 200
    low = check({"n": 0}).error
    assert low is not None and low.error is not None
    assert low.error.message == "Argument `n` must be at least 1; got 0."


def test_hand_written_refs_defs_and_all_of_are_followed_for_coercion():
    schema = {
        "type": "object",
        "$defs": {"Count": {"type": "integer"}, "Box": {"type": "object", "properties": {
            "size": {"$ref": "#/$defs/Count"}}, "additionalProperties": False}},
        "properties": {
            "count": {"$ref": "#/$defs/Count"},
            "box": {"allOf": [{"$ref": "#/$defs/Box"}], "description": "A box."},
            "boxes": {"type": "array", "items": {"$ref": "#/$defs/Box"}},
        },
        "additionalProperties": False,
    }  # fmt: skip
    check = Preflight(schema, tool_name="t")
    result = check({"count": "1", "box": {"size": "2"}, "boxes": '[{"size": "3"}]'})
    assert result.arguments == {"count": 1, "box": {"size": 2}, "boxes": [{"size": 3}]}
    error = check({"boxes": [{"size": 1, "colour": "red"}]}).error
    assert error is not None and error.error is not None
    assert error.error.field == "boxes[0].colour"


def test_a_schema_without_additional_properties_false_lets_unknown_keys_through():
    check = Preflight({"type": "object", "properties": {"a": {"type": "string"}}}, tool_name="t")
    assert check({"a": "x", "b": 1}).arguments == {"a": "x", "b": 1}


def test_formats_are_annotations_not_assertions():
    schema = {"type": "object", "properties": {"when": {"type": "string", "format": "date"}}}
    assert Preflight(schema, tool_name="t")({"when": "not a date"}).ok


class Tree(BaseModel):
    size: int
    children: list[Tree] = []


def test_recursive_schemas_coerce_at_every_level():
    def grow(tree: Tree) -> None: ...

    check = Preflight(function_schema(grow).input_schema, tool_name="grow")
    result = check({"tree": {"size": "1", "children": [{"size": "2", "children": []}]}})
    assert result.arguments == {"tree": {"size": 1, "children": [{"size": 2, "children": []}]}}
    assert rules(result) == [
        ("tree.size", "string_to_integer"),
        ("tree.children[0].size", "string_to_integer"),
    ]


# --- the record of coercions --------------------------------------------------------------------


def test_coercions_read_like_what_happened():
    assert str(Coercion("limit", "string_to_integer", "5", 5)) == 'limit: "5" → 5'
    dropped = Coercion("description", "dropped_empty_optional", "", DROPPED)
    assert str(dropped) == 'description: "" dropped (empty optional)'
    null = Coercion("retries", "dropped_null_optional", None, DROPPED)
    assert str(null) == "retries: null dropped (null for an optional argument)"
    assert repr(DROPPED) == "DROPPED"


def test_a_refusal_keeps_the_coercions_made_before_it():
    result = preflight({"content": "x", "timeout": "5", "scope": "nowhere"})
    assert not result.ok
    assert rules(result) == [("timeout", "string_to_integer")]


# --- properties ---------------------------------------------------------------------------------

argument_values = st.one_of(
    json_values,
    st.sampled_from(["15", "3.5", "true", "no", "", " ", "Pinned", "[1]", '{"window": {}}']),
)
argument_dicts = st.dictionaries(
    st.sampled_from([*SCHEMA["properties"], "properties", "colour"]) | st.text(max_size=8),
    argument_values,
    max_size=6,
)


def assert_well_formed(result: PreflightResult) -> None:
    assert isinstance(result, PreflightResult)
    if result.ok:
        assert isinstance(result.arguments, dict)
        assert validator.is_valid(result.arguments)
    else:
        assert result.arguments is None and result.error is not None
        assert result.error.error is not None
        assert result.error.error.kind == wb.ErrorKind.INVALID_ARGS
        assert result.error.tool_name == "write_note"
        # the fail-closed net is for inputs we did not foresee, never for JSON
        assert not result.error.error.message.startswith("Arguments could not be checked")


@settings(max_examples=400, suppress_health_check=[HealthCheck.too_slow])
@given(json_values)
def test_any_json_value_gives_arguments_or_an_invalid_args_envelope(raw):
    assert_well_formed(preflight(raw))


@settings(max_examples=400, suppress_health_check=[HealthCheck.too_slow])
@given(argument_dicts)
def test_any_argument_dict_gives_valid_arguments_or_an_invalid_args_envelope(raw):
    assert_well_formed(preflight(raw))
    assert_well_formed(preflight(json.dumps(raw)))
    assert_well_formed(preflight({"properties": raw}))


@given(st.text())
def test_any_string_gives_arguments_or_an_invalid_args_envelope(raw):
    assert_well_formed(preflight(raw))


@given(st.one_of(st.builds(object), st.sets(st.integers()), st.binary(), st.complex_numbers()))
def test_non_json_python_values_are_refused_without_raising(raw):
    result = preflight(raw)
    assert isinstance(result, PreflightResult)
    assert result.ok == (isinstance(raw, bytes) and result.arguments is not None)


def test_deeply_nested_input_fails_closed():
    deep = "[" * 100_000 + "]" * 100_000
    result = preflight(deep)
    assert not result.ok and result.error is not None


@settings(max_examples=200)
@given(
    st.fixed_dictionaries(
        {"content": st.text()},
        optional={
            "timeout": st.integers(),
            "ratio": st.floats(allow_nan=False, allow_infinity=False),
            "force": st.booleans(),
            "scope": st.sampled_from(["pinned", "all"]),
            "packages": st.lists(st.text(min_size=1).filter(str.strip)) | st.none(),
            "maybe": st.integers() | st.none(),
        },
    )
)
def test_already_valid_arguments_pass_unchanged(raw):
    result = accepted(raw)
    assert result.arguments == raw
    assert result.coercions == ()


def test_boolean_subschemas_compile_and_validate():
    schema = {
        "type": "object",
        "properties": {"a": True, "b": False, "c": {"allOf": [True]}, "d": {"items": True}},
    }
    check = Preflight(schema, tool_name="t")
    assert check({"a": [1], "c": "x", "d": "[1]"}).arguments == {"a": [1], "c": "x", "d": "[1]"}
    error = check({"b": 1}).error
    assert error is not None and error.error is not None
    # jsonschema reports a false subschema without its path, so only the message can say why
    assert error.error.message == "Arguments are invalid: False schema does not allow 1; got 1."


class _NoValidator:
    def iter_errors(self, instance: object) -> list[object]:
        raise AssertionError("the full validator ran on the hot path")


def test_valid_and_simply_coerced_flat_arguments_skip_the_full_validator():
    def search(pattern: str, limit: int = 10, scope: Literal["a", "b"] = "a") -> None: ...

    check = Preflight(function_schema(search).input_schema, tool_name="search")
    object.__setattr__(check, "_validator", _NoValidator())
    assert check({"pattern": "*.py", "limit": "5", "scope": "B"}).arguments == {
        "pattern": "*.py",
        "limit": 5,
        "scope": "b",
    }
    assert check({"pattern": "*.py"}).ok
    refused_here = check({"pattern": 5}).error
    assert refused_here is not None and refused_here.error is not None
    # a refusal does consult the validator (here the stand-in, which the fail-closed net catches)
    assert refused_here.error.message == "Arguments could not be checked (AssertionError)."


def test_a_missing_argument_sent_under_another_name_is_named_too():
    check = Preflight(
        {
            "type": "object",
            "properties": {"path": {"type": "string"}},
            "required": ["path"],
            "additionalProperties": False,
        },
        tool_name="file_read",
    )
    error = check({"file": "README.md"}).error.error
    assert error.field == "path"
    assert error.message == (
        "Missing required argument `path` (string). "
        "The unknown argument `file` was sent instead; rename it to `path`."
    )
