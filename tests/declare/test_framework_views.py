"""``wb.declare.framework_views(fn)``: what each framework would send a model for one plain
function, each made by that framework's own code here (compared with calling the framework
directly), the differences from workbench's named in words, a refusal in the framework's own
words, a framework that is not installed named with its extra, and the side-by-side HTML escaped.
"""

from __future__ import annotations

import json
import subprocess
import sys

import workbench as wb
from workbench.tokens import count_tokens


def search(query: str, limit: int = 10, case_sensitive: bool = False) -> list[str]:
    """Search the notes.

    Args:
        query: What to look for.
        limit: The most results to return.
    """
    return []


def no_docstring(a: int) -> int:
    return a


def described(query: str, limit: int = 10) -> list[str]:
    """Search the notes.

    Args:
        query: What to look for.
        limit: The most results to return.
    """
    return []


def test_each_view_is_what_the_framework_itself_sends():
    from agents import function_tool
    from inspect_ai.tool import ToolDef
    from langchain_core.tools import StructuredTool
    from langchain_core.utils.function_calling import convert_to_openai_tool
    from mcp.server.mcpserver.tools import Tool
    from pydantic_ai import Tool as PydanticAITool
    from smolagents import tool as smolagents_tool
    from smolagents.models import get_tool_json_schema

    views = wb.declare.framework_views(search)
    assert [v.framework for v in views] == [
        "workbench",
        "LangChain",
        "LangChain (parse_docstring)",
        "inspect_ai",
        "openai-agents",
        "openai-agents (strict_mode=False)",
        "pydantic-ai",
        "smolagents",
        "MCP SDK",
    ]
    assert (
        views.of("LangChain").sent
        == convert_to_openai_tool(StructuredTool.from_function(search))["function"]
    )
    parsed = convert_to_openai_tool(StructuredTool.from_function(search, parse_docstring=True))
    assert views.of("LangChain (parse_docstring)").sent == parsed["function"]
    inspected = ToolDef(search)
    assert views.of("inspect_ai").parameters == inspected.parameters.model_dump(exclude_none=True)
    assert views.of("MCP SDK").parameters == Tool.from_function(search).parameters
    for label, strict in (("openai-agents", True), ("openai-agents (strict_mode=False)", False)):
        agents = function_tool(search, strict_mode=strict)
        view = views.of(label)
        assert (view.name, view.description, view.parameters) == (
            agents.name,
            agents.description,
            agents.params_json_schema,
        )
    made = PydanticAITool(search).tool_def
    assert views.of("pydantic-ai").sent == {
        "name": made.name,
        "description": made.description,
        "parameters": made.parameters_json_schema,
    }
    # smolagents refuses `search` (below); a function it takes is sent as its agent sends it
    assert (
        wb.declare.framework_views(described).of("smolagents").sent
        == (get_tool_json_schema(smolagents_tool(described))["function"])
    )
    ours = views.of("workbench")
    assert ours.name == "search" and ours.description == "Search the notes."
    assert ours.parameters == wb.Registry(history=":memory:").tool(search).spec.input_schema


def test_the_differences_from_workbenchs_view_are_named_in_words():
    views = wb.declare.framework_views(search)
    said = views.differences
    assert "LangChain drops the description of `limit`" in said
    assert "LangChain drops the description of `query`" in said
    assert (
        "LangChain sends the whole docstring as the description, its Args section included" in said
    )
    assert "MCP SDK keeps `title` keys" in said
    # openai-agents' default strict mode makes every parameter required; without it, a model
    # may send arguments the function does not take.
    assert "openai-agents makes `limit` required" in said
    assert "openai-agents makes `case_sensitive` required" in said
    loose = views.of("openai-agents (strict_mode=False)").differences
    assert not any("required" in line for line in loose)
    assert any("no `additionalProperties: false`" in line for line in loose)
    # Asked to parse the docstring, LangChain keeps every description workbench sends.
    parsed = views.of("LangChain (parse_docstring)").differences
    assert not any("description" in line for line in parsed)
    assert views.of("workbench").differences == ()
    # Every sentence names its framework first.
    assert all(line.startswith(view.framework) for view in views for line in view.differences)


def test_smolagents_sends_no_default_and_allows_null_for_a_parameter_that_has_one():
    said = wb.declare.framework_views(described).of("smolagents").differences
    assert "smolagents drops the default of `limit`" in said
    assert "smolagents allows `null` for `limit`" in said


def test_a_framework_that_refuses_the_function_says_why_in_its_own_words():
    refused = wb.declare.framework_views(search).of("smolagents")
    assert refused.sent is None and refused.refused is not None
    assert "no description for the argument 'case_sensitive'" in refused.refused
    views = wb.declare.framework_views(no_docstring)
    refused = views.of("LangChain")
    assert refused.sent is None and refused.differences == ()
    assert refused.refused is not None and "must have a docstring" in refused.refused
    assert views.of("MCP SDK").sent is not None  # the others still make their tool


def test_a_framework_not_installed_is_named_with_the_extra_that_brings_it():
    code = (
        "import sys, json\n"
        "sys.modules['langchain_core'] = None  # as if LangChain were not installed\n"
        "sys.modules['agents'] = None  # and openai-agents\n"
        "sys.modules['pydantic_ai'] = sys.modules['smolagents'] = None\n"
        "import workbench as wb\n"
        "def add(a: int) -> int:\n"
        "    '''Add.'''\n"
        "    return a\n"
        "views = wb.declare.framework_views(add)\n"
        "print(json.dumps([[v.framework, v.unavailable] for v in views]))\n"
    )
    ran = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert ran.returncode == 0, ran.stderr
    unavailable = dict(json.loads(ran.stdout))
    assert unavailable["workbench"] is None and unavailable["MCP SDK"] is None
    assert "pip install 'tool-workbench[langchain]'" in unavailable["LangChain"]
    assert "pip install 'tool-workbench[agents]'" in unavailable["openai-agents"]
    assert "pip install 'tool-workbench[pydantic-ai]'" in unavailable["pydantic-ai"]
    assert "pip install 'tool-workbench[smolagents]'" in unavailable["smolagents"]


def test_the_side_by_side_view_escapes_what_the_function_says():
    def shout(text: str) -> str:
        """<script>alert(1)</script> Repeat the text.

        Args:
            text: <b>the</b> text.
        """
        return text

    html = wb.declare.framework_views(shout)._repr_html_()
    assert "<script>" not in html and "&lt;script&gt;" in html
    assert "<b>the</b>" not in html
    assert html.count("wb-framework-view'") == len(wb.declare.framework_views(shout))


def test_a_workbench_tool_is_read_through_the_function_it_was_declared_from():
    tools = wb.Registry(history=":memory:")
    declared = tools.tool(search)
    assert wb.declare.framework_views(declared) == wb.declare.framework_views(search)


def test_when_workbench_refuses_the_function_no_framework_is_compared_with_another():
    def splat(*values: int) -> int:
        """Sum the values."""
        return sum(values)

    views = wb.declare.framework_views(splat)
    assert "`*values`" in (views.of("workbench").refused or "")  # workbench refuses *args
    assert views.of("LangChain").sent is not None  # LangChain takes it
    assert views.differences == []  # and nothing is compared with LangChain in its place


def test_each_schema_shows_what_it_costs_in_tokens():
    views = wb.declare.framework_views(described)
    drawn = views._repr_html_()
    for view in views:
        cost = view.tokens()
        if view.sent is None:
            assert cost is None
            continue
        compact = json.dumps(view.sent, ensure_ascii=False, separators=(",", ":"))
        assert cost == count_tokens(compact) and cost.exact
        assert f"<div class='wb-framework-cost'>{cost}</div>" in drawn
    assert len({view.tokens() for view in views if view.sent is not None}) > 1
