"""``framework_views`` of six kinds of function equals what each framework itself makes of them:
docstring styles, defaults, an enum, a nested pydantic model, ``*args``/``**kwargs``, and one a
framework refuses. Each framework is asked directly here, the way its own agent asks it."""

from __future__ import annotations

import enum
from collections.abc import Callable
from typing import Any, Literal

import pytest
from pydantic import BaseModel, Field

import workbench as wb


class Colour(enum.Enum):
    RED = "red"
    GREEN = "green"


class Address(BaseModel):
    street: str = Field(description="Street and number.")
    city: str


def google_style(path: str, recursive: bool = False) -> list[str]:
    """List a directory.

    Args:
        path: The directory to list.
        recursive: Descend into subdirectories.
    """
    return []


def sphinx_style(path: str, depth: int = 2) -> list[str]:
    """List a directory.

    :param path: The directory to list.
    :param depth: How deep to go.
    """
    return []


def with_defaults(
    query: str, limit: int = 10, language: str | None = None, tags: list[str] | None = None
) -> list[str]:
    """Search the notes.

    Args:
        query: What to look for.
        limit: The most results.
        language: Only notes in this language.
        tags: Only notes with every tag.
    """
    return []


def with_enums(colour: Colour, mode: Literal["fast", "exact"] = "fast") -> str:
    """Paint.

    Args:
        colour: The paint.
        mode: How carefully.
    """
    return colour.value


def with_a_model(name: str, address: Address) -> str:
    """Send a letter.

    Args:
        name: Who to send it to.
        address: Where they live.
    """
    return name


def with_star_args(*paths: str, **options: str) -> str:
    """Join paths.

    Args:
        paths: The parts.
        options: Extra options.
    """
    return "/".join(paths)


SAMPLES = (google_style, sphinx_style, with_defaults, with_enums, with_a_model, with_star_args)


def by_langchain(parse_docstring: bool) -> Callable[[Callable[..., Any]], dict[str, Any]]:
    def make(fn: Callable[..., Any]) -> dict[str, Any]:
        from langchain_core.tools import StructuredTool
        from langchain_core.utils.function_calling import convert_to_openai_tool

        made = StructuredTool.from_function(fn, parse_docstring=parse_docstring)
        sent = convert_to_openai_tool(made)["function"]
        described = sent.get("description")
        return {"name": sent["name"], "description": described, "parameters": sent["parameters"]}

    return make


def by_inspect(fn: Callable[..., Any]) -> dict[str, Any]:
    from inspect_ai.tool import ToolDef

    made = ToolDef(fn)
    parameters = made.parameters.model_dump(exclude_none=True)
    return {"name": made.name, "description": made.description, "parameters": parameters}


def by_agents(strict: bool) -> Callable[[Callable[..., Any]], dict[str, Any]]:
    def make(fn: Callable[..., Any]) -> dict[str, Any]:
        from agents import function_tool

        made = function_tool(fn, strict_mode=strict)
        return {
            "name": made.name,
            "description": made.description,
            "parameters": made.params_json_schema,
        }

    return make


def by_pydantic_ai(fn: Callable[..., Any]) -> dict[str, Any]:
    from pydantic_ai import Tool

    made = Tool(fn).tool_def
    return {
        "name": made.name,
        "description": made.description,
        "parameters": made.parameters_json_schema,
    }


def by_smolagents(fn: Callable[..., Any]) -> dict[str, Any]:
    from smolagents import tool
    from smolagents.models import get_tool_json_schema

    return get_tool_json_schema(tool(fn))["function"]  # type: ignore[no-any-return]


def by_mcp_sdk(fn: Callable[..., Any]) -> dict[str, Any]:
    from mcp.server.mcpserver.tools import Tool

    made = Tool.from_function(fn)
    return {"name": made.name, "description": made.description, "parameters": made.parameters}


OWN = {
    "LangChain": by_langchain(parse_docstring=False),
    "LangChain (parse_docstring)": by_langchain(parse_docstring=True),
    "inspect_ai": by_inspect,
    "openai-agents": by_agents(strict=True),
    "openai-agents (strict_mode=False)": by_agents(strict=False),
    "pydantic-ai": by_pydantic_ai,
    "smolagents": by_smolagents,
    "MCP SDK": by_mcp_sdk,
}


def own_answer(label: str, fn: Callable[..., Any]) -> tuple[str, Any]:
    """What the framework itself makes of ``fn``: ("sent", its tool) or ("refused", its
    exception's type and words)."""
    try:
        return "sent", OWN[label](fn)
    except Exception as exc:
        return "refused", f"{type(exc).__name__}: {exc}"


@pytest.fixture(scope="module")
def views() -> dict[str, wb.declare.FrameworkViews]:
    return {fn.__name__: wb.declare.framework_views(fn) for fn in SAMPLES}


def test_every_framework_is_asked_of_every_sample(views):
    for found in views.values():
        assert [view.framework for view in found][1:] == list(OWN)


@pytest.mark.parametrize("label", list(OWN))
@pytest.mark.parametrize("sample", SAMPLES, ids=lambda fn: fn.__name__)
def test_each_view_of_each_sample_is_the_frameworks_own(views, sample, label):
    view = views[sample.__name__].of(label)
    how, answer = own_answer(label, sample)
    if how == "refused":
        assert view.sent is None and view.refused == answer
    else:
        assert view.refused is None and view.sent == answer


def test_the_samples_show_what_sets_the_frameworks_apart(views):
    """What these six bring out, named in words or refused in the framework's own."""
    refused = {
        (name, view.framework): view.refused
        for name, found in views.items()
        for view in found
        if view.refused
    }
    assert "no description for the argument 'path'" in refused["sphinx_style", "smolagents"]
    assert "`*paths`" in refused["with_star_args", "workbench"]
    assert "cannot use a strict schema" in refused["with_star_args", "openai-agents"]
    # workbench refused it: nothing to compare the others with
    assert views["with_star_args"].differences == []
    said = views["with_enums"].differences
    assert "pydantic-ai sends the schema of `colour` as a `$ref` to #/$defs/Colour" in said
    assert "smolagents types `colour` as object (workbench: string)" in said
    assert "openai-agents makes `language` required" in views["with_defaults"].differences
    assert "LangChain (parse_docstring) drops the description of `path`" in (
        views["sphinx_style"].differences  # it reads Google-style Args only
    )
