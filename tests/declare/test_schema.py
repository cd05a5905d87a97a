"""Model-visible schemas from functions: types, defaults, enums, descriptions, hidden context,
closed objects at every depth, every declaration problem at once, and binding back to Python."""

from __future__ import annotations

import dataclasses
import enum
import functools
from typing import Annotated, Any, Literal, Optional

import pytest
from jsonschema import Draft202012Validator
from pydantic import AfterValidator, BaseModel, Field
from typing_extensions import TypedDict

import workbench as wb
from workbench.context._context import ToolContext
from workbench.declare._docstrings import parse_docstring
from workbench.declare._schema import BindError, function_schema, schema_from_raw
from workbench.preflight._json_schema import iter_subschemas, resolve, split_nullable


class Scope(enum.Enum):
    PINNED = "pinned"
    ALL = "all"


class Window(BaseModel):
    """A window of results."""

    limit: int = 5
    offset: int = 0


class Filters(BaseModel):
    window: Window
    tags: list[str] = []


class Tree(BaseModel):
    name: str
    children: list[Tree] = []


class Hit(TypedDict):
    path: str
    line: int


@dataclasses.dataclass
class Point:
    x: int
    y: int


def search_files(
    pattern: str,
    limit: int = 10,
    ctx: wb.ToolContext = None,  # type: ignore[assignment]
) -> dict[str, Any]:
    """Find files matching a glob pattern.

    Args:
        pattern: Glob such as "*.py".
        limit: Most matches to return.
    """
    return {}


def properties(fn: Any) -> dict[str, Any]:
    return function_schema(fn).input_schema["properties"]


# --- the shape of the schema --------------------------------------------------------------------


def test_design_example_schema_is_exactly_what_a_model_should_see():
    schema = function_schema(search_files)
    assert schema.description == "Find files matching a glob pattern."
    assert schema.input_schema == {
        "type": "object",
        "properties": {
            "pattern": {"type": "string", "description": 'Glob such as "*.py".'},
            "limit": {"type": "integer", "default": 10, "description": "Most matches to return."},
        },
        "required": ["pattern"],
        "additionalProperties": False,
    }
    assert schema.params == ("pattern", "limit")
    Draft202012Validator.check_schema(schema.input_schema)


@pytest.mark.parametrize(
    "annotation",
    [ToolContext, Optional[ToolContext], ToolContext | None, Annotated[ToolContext, "x"]],  # noqa: UP045
)
def test_a_tool_context_parameter_is_hidden_from_the_schema(annotation):
    def tool(query: str, ctx=None) -> None:
        """Search."""

    tool.__annotations__ = {"query": str, "ctx": annotation, "return": None}
    schema = function_schema(tool)
    assert schema.context_param == "ctx"
    assert schema.params == ("query",)
    assert "ctx" not in schema.input_schema["properties"]
    assert "ToolContext" not in repr(schema.input_schema)
    assert schema.bind({"query": "x"}) == ([], {"query": "x"})


def test_two_tool_context_parameters_are_a_declaration_problem():
    def tool(a: ToolContext, b: ToolContext) -> None: ...

    with pytest.raises(TypeError, match="only one ToolContext"):
        function_schema(tool)


def test_defaults_are_declared_and_required_lists_only_params_without_defaults():
    def tool(a: str, b: int = 3, c: bool = False, d: float = 0.5, e: list[str] | None = None):
        """T."""

    schema = function_schema(tool).input_schema
    assert schema["required"] == ["a"]
    props = schema["properties"]
    assert [props[name].get("default") for name in "bcde"] == [3, False, 0.5, None]
    assert "default" not in props["a"]


def test_literal_and_enum_give_enum_with_the_default_in_declared_form():
    def tool(
        mode: Literal["fast", "slow"] = "fast", scope: Scope = Scope.PINNED, one: Literal["x"] = "x"
    ):
        """T."""

    props = properties(tool)
    assert props["mode"] == {"type": "string", "enum": ["fast", "slow"], "default": "fast"}
    assert props["scope"] == {"type": "string", "enum": ["pinned", "all"], "default": "pinned"}
    assert props["one"]["enum"] == ["x"] and "const" not in props["one"]


def test_titles_are_removed_everywhere_but_a_property_named_title_survives():
    def tool(title: str, window: Window) -> None:
        """T."""

    schema = function_schema(tool).input_schema
    assert "title" in schema["properties"]
    for _path, node in iter_subschemas(schema):
        assert "title" not in node


def test_nested_models_are_inlined_and_closed_at_every_depth():
    def tool(filters: Filters, maybe: Window | None = None) -> None:
        """T."""

    schema = function_schema(tool).input_schema
    assert "$defs" not in schema and "$ref" not in repr(schema)
    filters = schema["properties"]["filters"]
    assert filters["additionalProperties"] is False
    assert filters["properties"]["window"]["additionalProperties"] is False
    assert filters["properties"]["window"]["description"] == "A window of results."
    maybe, nullable = split_nullable(schema["properties"]["maybe"], schema)
    assert nullable and maybe["additionalProperties"] is False
    objects = [n for _p, n in iter_subschemas(schema) if n.get("type") == "object"]
    assert len(objects) == 4
    assert all(n["additionalProperties"] is False for n in objects)


def test_typed_dicts_and_dataclasses_are_closed_objects_too():
    def tool(hit: Hit, point: Point) -> None:
        """T."""

    props = properties(tool)
    assert props["hit"]["required"] == ["path", "line"]
    assert props["hit"]["additionalProperties"] is False
    assert props["point"]["additionalProperties"] is False


def test_recursive_models_keep_one_ref_and_stay_valid():
    def tool(tree: Tree) -> None:
        """T."""

    schema = function_schema(tool).input_schema
    assert schema["properties"]["tree"]["properties"]["children"]["items"] == {
        "$ref": "#/$defs/Tree"
    }
    assert schema["$defs"]["Tree"]["additionalProperties"] is False
    Draft202012Validator.check_schema(schema)
    validator = Draft202012Validator(schema)
    assert validator.is_valid({"tree": {"name": "a", "children": [{"name": "b"}]}})
    assert not validator.is_valid({"tree": {"name": "a", "children": [{"name": "b", "x": 1}]}})


def test_free_form_mappings_keep_their_value_schema():
    def tool(labels: dict[str, int], anything: dict) -> None:  # type: ignore[type-arg]
        """T."""

    props = properties(tool)
    assert props["labels"]["additionalProperties"] == {"type": "integer"}
    assert props["anything"]["additionalProperties"] is True


def test_optional_with_none_default_accepts_null_but_a_plain_none_default_does_not():
    def tool(a: Optional[int] = None, b: int = None) -> None:  # type: ignore[assignment]  # noqa: RUF013, UP045
        """T."""

    schema = function_schema(tool).input_schema
    validator = Draft202012Validator(schema)
    assert validator.is_valid({"a": None})
    assert not validator.is_valid({"b": None})
    assert split_nullable(schema["properties"]["a"], schema) == (
        {"type": "integer", "default": None},
        True,
    )


def test_unannotated_parameters_accept_any_json_value():
    def tool(anything, count=3):  # type: ignore[no-untyped-def]
        """T."""

    props = properties(tool)
    assert props["anything"] == {}
    assert props["count"] == {"default": 3}


def test_tool_description_is_the_docstring_summary_unless_given():
    assert function_schema(search_files, description="Custom.").description == "Custom."

    def undocumented(x: int) -> None: ...

    assert function_schema(undocumented).description == ""


# --- descriptions -------------------------------------------------------------------------------


def test_google_docstring_descriptions_reach_each_parameter():
    def tool(path: str, depth: int = 1, *, hidden: bool = False) -> None:
        """Walk a tree.

        Longer explanation that stays.

        Args:
            path (str): Where to start.
            depth: How deep to go;
                zero means only the start.
            hidden: Include dotfiles.

        Returns:
            Nothing at all.

        Raises:
            ValueError: never.

        Example:
            tool("src")
        """

    schema = function_schema(tool)
    assert schema.description == (
        'Walk a tree.\n\nLonger explanation that stays.\n\nExample:\n    tool("src")'
    )
    props = schema.input_schema["properties"]
    assert props["path"]["description"] == "Where to start."
    assert props["depth"]["description"] == "How deep to go; zero means only the start."
    assert props["hidden"]["description"] == "Include dotfiles."


def test_numpy_docstring_descriptions_reach_each_parameter():
    def tool(path: str, depth: int = 1) -> None:
        """Walk a tree.

        Parameters
        ----------
        path : str
            Where to start.
        depth : int, optional
            How deep
            to go.

        Returns
        -------
        None
            Nothing.
        """

    schema = function_schema(tool)
    assert schema.description == "Walk a tree."
    props = schema.input_schema["properties"]
    assert props["path"]["description"] == "Where to start."
    assert props["depth"]["description"] == "How deep to go."


def test_sphinx_docstring_descriptions_reach_each_parameter():
    def tool(path: str, depth: int = 1) -> None:
        """Walk a tree.

        :param path: Where to start.
        :type path: str
        :param int depth: How deep
            to go.
        :returns: Nothing.
        :raises ValueError: never.
        """

    schema = function_schema(tool)
    assert schema.description == "Walk a tree."
    props = schema.input_schema["properties"]
    assert props["path"]["description"] == "Where to start."
    assert props["depth"]["description"] == "How deep to go."


def test_annotated_field_description_wins_over_the_docstring():
    def tool(
        path: Annotated[str, Field(description="From the field.")],
        depth: Annotated[int, Field(ge=0)] = 1,
    ) -> None:
        """Walk.

        Args:
            path: From the docstring.
            depth: Depth from the docstring.
        """

    props = properties(tool)
    assert props["path"]["description"] == "From the field."
    assert props["depth"] == {
        "type": "integer",
        "minimum": 0,
        "default": 1,
        "description": "Depth from the docstring.",
    }


def test_a_field_default_declares_description_and_default():
    def tool(limit: int = Field(5, description="How many.")) -> None:
        """T."""

    schema = function_schema(tool)
    assert schema.input_schema["properties"]["limit"] == {
        "type": "integer",
        "default": 5,
        "description": "How many.",
    }
    assert schema.bind({}) == ([], {"limit": 5})


def test_parse_docstring_of_nothing_is_empty():
    assert parse_docstring(None) == parse_docstring("   ") == parse_docstring("")
    assert parse_docstring(None).summary == "" and parse_docstring(None).params == {}


def test_parse_docstring_keeps_returns_and_plain_text():
    doc = parse_docstring("Just text.\n\nMore text.")
    assert doc.summary == "Just text.\n\nMore text." and doc.params == {} and doc.returns is None
    google = parse_docstring("Do.\n\nArgs:\n    x: An x.\n\nReturns:\n    The y.\n")
    assert google.returns == "The y." and google.params == {"x": "An x."}
    assert parse_docstring(":param x: An x.\n:returns: The y.").returns == "The y."


def test_parse_docstring_strips_stars_from_variadic_names():
    doc = parse_docstring("Do.\n\nArgs:\n    *args: Positional.\n    **kwargs: Named.\n")
    assert doc.params == {"args": "Positional.", "kwargs": "Named."}


# --- output schema ------------------------------------------------------------------------------


@pytest.mark.parametrize("returned", [Window, Hit, Point])
def test_structured_return_annotations_give_a_closed_output_schema(returned):
    def tool() -> None: ...

    tool.__annotations__ = {"return": returned}
    output = function_schema(tool).output_schema
    assert output is not None
    assert output["type"] == "object" and output["additionalProperties"] is False
    assert "title" not in output


@pytest.mark.parametrize("returned", [dict, str, int, list, None])
def test_unstructured_return_annotations_give_no_output_schema(returned):
    def tool() -> None: ...

    tool.__annotations__ = {"return": returned}
    assert function_schema(tool).output_schema is None


# --- declaration problems -----------------------------------------------------------------------


class Opaque:
    pass


def test_every_problem_with_a_declaration_is_reported_at_once():
    def tool(a: Opaque, *rest: int, b: Any = None, **extra: int) -> None:
        """T."""

    with pytest.raises(TypeError) as caught:
        function_schema(tool)
    message = str(caught.value)
    assert "`a`" in message and "Opaque" in message
    assert "`*rest`" in message
    assert "`**extra`" in message
    assert message.count("\n  - ") == 3


def test_an_unresolvable_forward_reference_is_a_declaration_problem():
    def tool(a: Missing) -> None:  # type: ignore[name-defined]  # noqa: F821
        """T."""

    with pytest.raises(TypeError, match=r"`a`.*cannot be resolved"):
        function_schema(tool)


# --- binding JSON arguments to Python -----------------------------------------------------------


def test_bind_converts_json_values_to_the_annotated_types():
    def tool(
        filters: Filters,
        scope: Scope,
        ids: tuple[int, ...],
        tags: set[str],
        ratio: float,
        count: int,
        hit: Hit,
        point: Point,
    ) -> None:
        """T."""

    args, kwargs = function_schema(tool).bind(
        {
            "filters": {"window": {"limit": 2}},
            "scope": "all",
            "ids": [1, 2],
            "tags": ["a", "a"],
            "ratio": 2,
            "count": 3.0,
            "hit": {"path": "p", "line": 1},
            "point": {"x": 1, "y": 2},
        }
    )
    assert args == []
    assert kwargs["filters"] == Filters(window=Window(limit=2))
    assert isinstance(kwargs["filters"].window, Window)
    assert kwargs["scope"] is Scope.ALL
    assert kwargs["ids"] == (1, 2)
    assert kwargs["tags"] == {"a"}
    assert kwargs["ratio"] == 2.0 and type(kwargs["ratio"]) is float
    assert kwargs["count"] == 3 and type(kwargs["count"]) is int
    assert kwargs["hit"] == {"path": "p", "line": 1}
    assert kwargs["point"] == Point(1, 2)


def test_bind_leaves_absent_arguments_to_python_defaults():
    def tool(a: str, b: int = 4, c: list[int] | None = None) -> None: ...

    assert function_schema(tool).bind({"a": "x"}) == ([], {"a": "x"})


def test_bind_passes_positional_only_parameters_positionally_filling_gaps():
    def tool(a: int, b: int = 2, /, c: int = 3) -> None: ...

    bind = function_schema(tool).bind
    assert bind({"a": 1}) == ([1, 2], {})
    assert bind({"a": 1, "c": 5}) == ([1, 2], {"c": 5})
    assert bind({"a": 1, "b": 7}) == ([1, 7], {})


def even(value: int) -> int:
    if value % 2:
        raise ValueError("must be even")
    return value


def test_bind_raises_a_bind_error_naming_the_field_for_python_only_rules():
    def tool(points: list[Annotated[int, AfterValidator(even)]]) -> None: ...

    bind = function_schema(tool).bind
    assert bind({"points": [2, 4]}) == ([], {"points": [2, 4]})
    with pytest.raises(BindError) as caught:
        bind({"points": [2, 3]})
    assert caught.value.field == "points[1]"
    assert "must be even" in str(caught.value)
    assert isinstance(caught.value, ValueError)


def test_private_and_shadowing_parameter_names_are_kept_as_written():
    def tool(_hidden: int, json: str, copy: bool = False) -> None: ...

    schema = function_schema(tool)
    assert list(schema.input_schema["properties"]) == ["_hidden", "json", "copy"]
    assert schema.bind({"_hidden": 1, "json": "x"}) == ([], {"_hidden": 1, "json": "x"})


def test_methods_lose_self():
    class Box:
        def put(self, item: str) -> None:
            """Put."""

    assert function_schema(Box().put).params == ("item",)


# --- hand-written schemas -----------------------------------------------------------------------


def test_schema_from_raw_returns_a_valid_object_schema_unchanged():
    raw = {"type": "object", "properties": {"x": {"type": "string"}}}
    assert schema_from_raw(raw) is raw
    assert "additionalProperties" not in raw


@pytest.mark.parametrize(
    ("raw", "match"),
    [
        ({"type": "array"}, "object of arguments"),
        ({"properties": {}}, "object of arguments"),
        ({"type": "object", "properties": {"x": {"type": "strng"}}}, "invalid input schema"),
        ([], "must be a dict"),
    ],
)
def test_schema_from_raw_refuses_non_object_and_invalid_schemas(raw, match):
    with pytest.raises(TypeError, match=match):
        schema_from_raw(raw)


def test_resolve_follows_refs_and_merges_siblings():
    root = {"$defs": {"A": {"type": "string", "description": "a"}}}
    assert resolve({"$ref": "#/$defs/A", "description": "b"}, root) == {
        "type": "string",
        "description": "b",
    }
    assert resolve({"allOf": [{"$ref": "#/$defs/A"}]}, root)["type"] == "string"
    assert resolve({"$ref": "#/$defs/Missing"}, root) == {"$ref": "#/$defs/Missing"}
    looping = {"$defs": {"L": {"$ref": "#/$defs/L"}}}
    assert resolve({"$ref": "#/$defs/L"}, looping) == {"$ref": "#/$defs/L"}


def test_partials_take_the_wrapped_functions_docstring_and_lose_bound_arguments():
    def greet(greeting: str, name: str) -> str:
        """Greet someone.

        Args:
            greeting: How to greet.
            name: Whom to greet.
        """
        return f"{greeting} {name}"

    schema = function_schema(functools.partial(greet, "hello"))
    assert schema.description == "Greet someone."
    assert schema.params == ("name",)
    assert schema.input_schema["properties"]["name"]["description"] == "Whom to greet."


def test_something_without_a_signature_is_a_declaration_problem():
    with pytest.raises(TypeError, match="signature cannot be read"):
        function_schema(42)  # type: ignore[arg-type]


def test_an_unresolvable_return_annotation_only_costs_the_output_schema():
    def tool(a: int, b: Missing) -> Missing:  # type: ignore[name-defined]  # noqa: F821
        """T."""

    with pytest.raises(TypeError) as caught:
        function_schema(tool)
    assert "`b`" in str(caught.value) and "`a`" not in str(caught.value)

    def fine(a: int) -> Missing:  # type: ignore[name-defined]  # noqa: F821
        """T."""

    assert function_schema(fine).output_schema is None
