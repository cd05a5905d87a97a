"""OpenAI dialects, checked by the openai SDK's own strict transformer, openai-agents'
``ensure_strict_json_schema`` and the SDK's tool-param types: every demo, built-in and adversarial
tool. And the other half of strict mode: the null fillers a strict model sends pass the preflight
and the tool gets its defaults."""

from __future__ import annotations

import copy
import functools
from typing import Any

import jsonschema
import pytest
from pydantic import TypeAdapter

from tests.declare import support as dialect_tools
from workbench.declare._exports import check_exports, export_tool
from workbench.mcp import demo
from workbench.preflight._json_schema import iter_subschemas
from workbench.preflight._resilience import baseline_arguments

DEMO = demo.registry()
ADVERSARIAL = dialect_tools.registry()
ALL = [(DEMO, name) for name in DEMO.names()] + [(ADVERSARIAL, n) for n in ADVERSARIAL.names()]
IDS = [name for _registry, name in ALL]
NOT_STRICT = {"mapping", "hand_written"}


# The SDKs are imported where they are used: each costs every test process a second or more
# of its collection.
@functools.cache
def tool_param() -> TypeAdapter[Any]:
    from openai.types.chat import ChatCompletionFunctionToolParam

    return TypeAdapter(ChatCompletionFunctionToolParam)


def openai_transform(schema: dict[str, Any]) -> dict[str, Any]:
    from openai.lib._pydantic import _ensure_strict_json_schema

    root = copy.deepcopy(schema)
    return _ensure_strict_json_schema(root, path=(), root=root)


def agents_transform(schema: dict[str, Any]) -> dict[str, Any]:
    from agents.strict_schema import ensure_strict_json_schema

    return ensure_strict_json_schema(copy.deepcopy(schema))


@pytest.mark.parametrize(("registry", "name"), ALL, ids=IDS)
def test_plain_openai_export_is_a_valid_sdk_tool_param(registry, name):
    exported = export_tool(registry.spec(name), "openai")
    assert tool_param().validate_python(exported) == exported
    assert exported["function"]["parameters"] == registry.spec(name).input_schema


@pytest.mark.parametrize(("registry", "name"), ALL, ids=IDS)
def test_strict_export_is_left_unchanged_by_both_sdk_transformers(registry, name):
    exported = export_tool(registry.spec(name), "openai-strict")
    assert tool_param().validate_python(exported) == exported
    function = exported["function"]
    if name in NOT_STRICT:
        assert function["strict"] is False
        return
    assert function["strict"] is True
    parameters = function["parameters"]
    assert openai_transform(parameters) == parameters
    assert agents_transform(parameters) == parameters
    jsonschema.Draft202012Validator.check_schema(parameters)


@pytest.mark.parametrize("name", sorted(NOT_STRICT))
def test_a_tool_that_cannot_be_strict_is_refused_by_the_sdk_too_and_reported(name):
    from agents.exceptions import UserError

    spec = ADVERSARIAL.spec(name)
    try:
        assert agents_transform(spec.input_schema) != spec.input_schema
    except UserError:
        pass  # refused outright: a free-form mapping
    assert export_tool(spec, "openai-strict")["function"]["parameters"] == spec.input_schema
    rows = check_exports([spec], targets=["openai-strict"])
    errors = rows[rows["severity"] == "error"]
    assert not errors.empty
    assert errors["problem"].str.endswith("the tool goes out with strict: false").all()


def test_the_sdk_transformers_do_change_the_plain_schemas_so_the_fixpoint_test_can_fail():
    changed = [
        name
        for registry, name in ALL
        if name not in NOT_STRICT
        and openai_transform(registry.spec(name).input_schema) != registry.spec(name).input_schema
    ]
    assert {"greet", "file_read", "defaults", "union", "recursive"} <= set(changed)


def test_strict_schemas_carry_no_defaults_and_say_them_in_descriptions():
    parameters = export_tool(ADVERSARIAL.spec("defaults"), "openai-strict")["function"][
        "parameters"
    ]
    assert not [path for path, node in iter_subschemas(parameters) if "default" in node]
    properties = parameters["properties"]
    assert properties["count"]["description"] == "An integer. (default: 3)"
    assert properties["items"]["description"] == "An array. (default: [1, 2])"
    assert properties["point"]["description"] == 'An object. (default: {"x": 1.0, "y": 0.0})'
    assert parameters["required"] == list(properties)


def test_optional_arguments_become_required_and_nullable():
    parameters = export_tool(ADVERSARIAL.spec("defaults"), "openai-strict")["function"][
        "parameters"
    ]
    validator = jsonschema.Draft202012Validator(parameters)
    assert validator.is_valid(dict.fromkeys(parameters["properties"]))
    assert not validator.is_valid({})
    assert parameters["properties"]["count"]["type"] == ["integer", "null"]


def test_keywords_strict_mode_lacks_move_into_the_description():
    spec = ADVERSARIAL.spec("constrained")
    properties = export_tool(spec, "openai-strict")["function"]["parameters"]["properties"]
    assert properties["code"]["description"] == "A short code. (maxLength: 5; minLength: 2)"
    assert "minLength" not in properties["code"]
    assert properties["where"]["description"] == 'A file path. (format: "path")'
    assert properties["size"]["exclusiveMinimum"] == 0
    rows = check_exports([spec], targets=["openai-strict"])
    problems = " | ".join(rows["problem"])
    assert "strict mode has no `minLength` (at code)" in problems
    assert "strict mode has no `format: path` (at where)" in problems
    assert "strict mode has no `uniqueItems` (at unique)" in problems


def with_null_fillers(value: Any, schema: dict[str, Any], root: dict[str, Any]) -> Any:
    """``value`` with ``null`` for every property a strict schema requires and it lacks, as a
    strict model sends it, at every depth."""
    if "$ref" in schema:
        schema = root["$defs"][schema["$ref"].rsplit("/", 1)[-1]]
    for branch in schema.get("anyOf", []):
        if "properties" in branch and isinstance(value, dict):
            return with_null_fillers(value, branch, root)
    if isinstance(value, dict) and "properties" in schema:
        return {
            key: with_null_fillers(value[key], sub, root) if key in value else None
            for key, sub in schema["properties"].items()
        }
    if isinstance(value, list) and "items" in schema:
        return [with_null_fillers(item, schema["items"], root) for item in value]
    return value


def strict_parameters(name: str) -> dict[str, Any]:
    return export_tool(ADVERSARIAL.spec(name), "openai-strict")["function"]["parameters"]


def strict_model_call(name: str) -> dict[str, Any]:
    """What a strict model sends for ``name``: the required arguments, and null for every
    optional one, nested optional fields included."""
    spec = ADVERSARIAL.spec(name)
    strict = export_tool(spec, "openai-strict")["function"]["parameters"]
    arguments = baseline_arguments(spec.input_schema)
    for key in strict["properties"]:
        arguments.setdefault(key, None)
    jsonschema.validate(arguments, strict)
    return arguments


def test_the_preflight_accepts_a_strict_models_null_fillers_and_the_tool_gets_its_defaults():
    arguments = strict_model_call("defaults")
    assert set(arguments.values()) == {None}
    envelope = ADVERSARIAL.invoke("defaults", arguments).wait(timeout=30)
    assert envelope.status == "success", envelope
    assert envelope.result == {
        "text": "x",
        "count": 3,
        "ratio": 0.5,
        "flag": False,
        "nothing": None,
        "items": [1, 2],
        "point": {"x": 1.0, "y": 0.0},
    }


@pytest.mark.parametrize(("registry", "name"), ALL, ids=IDS)
def test_every_strict_tool_takes_null_for_each_argument_left_out(registry, name):
    spec = registry.spec(name)
    function = export_tool(spec, "openai-strict")["function"]
    baseline = baseline_arguments(spec.input_schema)
    if not function["strict"] or not registry.preflight(name, baseline).ok:
        return  # a tool that is not strict gets no fillers; a baseline the preflight refuses
        # (a multipleOf the generator ignores) proves nothing here
    parameters = function["parameters"]
    fillers = {key: None for key in parameters["properties"] if key not in baseline}
    arguments = with_null_fillers({**baseline, **fillers}, parameters, parameters)
    jsonschema.validate(arguments, parameters)
    result = registry.preflight(name, arguments)
    assert result.ok, result.error
    kept_nulls = {key for key in fillers if key in (result.arguments or {})}
    properties = spec.input_schema["properties"]
    assert all("null" in str(properties[key]) for key in kept_nulls)  # only nullable ones


def test_null_fillers_inside_a_nested_model_are_dropped_too():
    arguments = {"origin": {"x": 2.0, "y": None}, "path": None}
    jsonschema.validate(arguments, strict_parameters("nested"))
    envelope = ADVERSARIAL.invoke("nested", arguments).wait(timeout=30)
    assert envelope.status == "success", envelope
    assert envelope.result == {"origin": {"x": 2.0, "y": 0.0}, "path": []}


def test_null_fillers_inside_a_union_branch_are_dropped():
    arguments = {"shape": {"kind": "circle", "radius": None}, "value": None}
    jsonschema.validate(arguments, strict_parameters("union"))
    result = ADVERSARIAL.preflight("union", arguments)
    assert result.ok, result.error
    assert result.arguments == {"shape": {"kind": "circle"}}
    envelope = ADVERSARIAL.invoke("union", arguments).wait(timeout=30)
    assert envelope.result == {"shape": {"kind": "circle", "radius": 1.0}, "value": 0}


def test_a_nullable_optional_with_a_real_default_is_pointed_out():
    def pick(limit: int | None = 5) -> None:
        """Pick.

        Args:
            limit: How many.
        """

    tools = dialect_tools.registry()
    tools.register(pick)
    rows = check_exports([tools.spec("pick")], targets=["openai-strict"])
    assert "for `limit` null is a value of its own" in " | ".join(rows["problem"])


def test_one_of_becomes_any_of_and_is_reported():
    spec = ADVERSARIAL.spec("hand_written")
    rows = check_exports([spec], targets=["openai-strict"])
    problems = list(rows["problem"])
    assert any(p.startswith("oneOf becomes anyOf in strict mode (at target)") for p in problems)
    assert any(p.startswith("strict mode has no `prefixItems` (at pair)") for p in problems)
