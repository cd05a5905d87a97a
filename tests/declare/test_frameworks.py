"""Tools written for LangChain and inspect_ai, registered as they are: the schema the model sees
is the framework's own (compared with what the framework itself sends), the body is the
framework's invoke path, sync or async, and the call is an ordinary workbench call: preflight,
history, receipt, error envelope, Terminate."""

from __future__ import annotations

import asyncio
import threading
import time

import pytest

import workbench as wb


def lc_search(query: str, limit: int = 3) -> str:
    """Search the notes.

    Args:
        query: What to look for.
        limit: The most results.
    """
    return ", ".join(f"{query}-{n}" for n in range(limit))


def test_a_langchain_tool_keeps_langchains_schema_and_runs_through_invoke(tmp_path):
    from langchain_core.tools import StructuredTool
    from langchain_core.utils.function_calling import convert_to_openai_tool

    made = StructuredTool.from_function(lc_search, parse_docstring=True)
    tools = wb.Registry(history=tmp_path / "h.sqlite")
    registered = tools.register(made)
    sent = convert_to_openai_tool(made)["function"]
    assert registered.spec.name == "lc_search"
    assert registered.spec.input_schema == sent["parameters"]
    assert registered.spec.description == sent["description"]
    envelope = tools.invoke("lc_search", {"query": "tide", "limit": "2"}).wait(30)
    assert envelope.ok and envelope.result == "tide-0, tide-1"
    # The preflight stands in front of it: a string "2" was coerced, a missing query refused.
    refused = tools.invoke("lc_search", {"limit": 1}).wait(30)
    assert refused.error is not None and refused.error.kind.value == "invalid_args"
    assert tools.history.get(envelope.call_id)["tool"] == "lc_search"
    tools.history.close()


def test_an_async_langchain_tool_runs_through_ainvoke_and_a_failure_is_an_envelope(tmp_path):
    from langchain_core.tools import tool

    ran_on: list[str] = []

    @tool
    async def lookup(key: str) -> str:
        """Look a key up."""
        ran_on.append("ainvoke")
        await asyncio.sleep(0)
        if key == "missing":
            raise KeyError(key)
        return key.upper()

    tools = wb.Registry(history=":memory:")
    tools.register(lookup)
    assert tools.invoke("lookup", {"key": "abc"}).wait(30).result == "ABC"
    failed = tools.invoke("lookup", {"key": "missing"}).wait(30)
    assert failed.error is not None and "missing" in failed.error.message
    assert ran_on == ["ainvoke", "ainvoke"]


def test_an_inspect_ai_tool_keeps_inspects_schema_and_is_awaited(tmp_path):
    from inspect_ai.tool import ToolDef, tool

    @tool
    def add():
        async def execute(a: int, b: int = 1) -> int:
            """Add two numbers.

            Args:
                a: The first number.
                b: The second number.
            """
            return a + b

        return execute

    made = add()
    tools = wb.Registry(history=":memory:")
    registered = tools.register(made, name="inspect_add", read_only=True)
    assert registered.spec.input_schema == ToolDef(made).parameters.model_dump(exclude_none=True)
    assert registered.spec.name == "inspect_add" and registered.spec.read_only
    assert tools.invoke("inspect_add", {"a": 2, "b": 3}).wait(30).result == 5


def test_a_long_langchain_tool_is_terminated_like_any_call():
    from langchain_core.tools import StructuredTool

    def slow(seconds: float) -> str:
        """Sleep, in small steps."""
        for _ in range(int(seconds * 20)):
            time.sleep(0.05)
        return "woke"

    tools = wb.Registry(history=":memory:", terminate_grace=0.5)
    tools.register(StructuredTool.from_function(slow))
    call = tools.invoke("slow", {"seconds": 3})
    threading.Timer(0.5, call.terminate).start()  # the person's click, while the cell waits
    envelope = call.wait(30)
    assert envelope.killed_by == "user" and envelope.result is None


def test_anything_else_is_refused_naming_what_is_taken():
    taken = r"LangChain BaseTool .* pydantic-ai Tool, .* smolagents Tool"
    with pytest.raises(TypeError, match=taken):
        wb.declare.from_framework(object())
    assert not wb.declare.is_framework_tool(lc_search)  # a plain function stays a function


def test_a_tool_brought_in_keeps_its_function_for_the_other_frameworks_views():
    from langchain_core.tools import BaseTool, StructuredTool

    made = StructuredTool.from_function(lc_search, parse_docstring=True)
    tools = wb.Registry(history=":memory:")
    assert tools.register(made).declared_from is lc_search
    assert wb.declare.framework_views(made) == wb.declare.framework_views(lc_search)

    class Echo(BaseTool):  # a tool written as a class keeps no function
        name: str = "echo"
        description: str = "Echo the text."

        def _run(self, text: str) -> str:
            return text

    echo = Echo()
    assert tools.register(echo).declared_from is None
    with pytest.raises(TypeError, match="keeps no function"):
        wb.declare.framework_views(echo)


def test_a_pydantic_ai_tool_keeps_its_tool_def_and_runs_through_its_validator(tmp_path):
    from pydantic_ai import RunContext, Tool

    made = Tool(lc_search)
    tools = wb.Registry(history=tmp_path / "h.sqlite")
    registered = tools.register(made)
    assert registered.spec.input_schema == made.tool_def.parameters_json_schema
    assert registered.spec.description == made.tool_def.description
    assert registered.declared_from is lc_search
    envelope = tools.invoke("lc_search", {"query": "tide", "limit": "2"}).wait(30)
    assert envelope.ok and envelope.result == "tide-0, tide-1"
    assert tools.history.get(envelope.call_id)["tool"] == "lc_search"
    tools.history.close()

    def with_context(ctx, query: str) -> str:
        """Needs the agent's run."""
        return query

    # given as an object: this module's annotations are strings, read in its globals
    with_context.__annotations__["ctx"] = RunContext[None]

    with pytest.raises(TypeError, match="takes a RunContext"):
        wb.declare.from_framework(Tool(with_context))


def test_an_openai_agents_tool_runs_through_on_invoke_tool_with_the_json_text():
    from agents import function_tool

    seen: list[str] = []

    @function_tool
    async def lookup(key: str) -> str:
        """Look a key up.

        Args:
            key: The key.
        """
        seen.append(key)
        if key == "missing":
            raise KeyError(key)
        return key.upper()

    tools = wb.Registry(history=":memory:")
    registered = tools.register(lookup)
    assert registered.spec.input_schema == lookup.params_json_schema  # strict: closed, required
    assert registered.spec.input_schema["additionalProperties"] is False
    assert tools.invoke("lookup", {"key": "abc"}).wait(30).result == "ABC"
    # openai-agents answers a failing body itself, with the text its model would read
    failed = tools.invoke("lookup", {"key": "missing"}).wait(30)
    assert failed.ok and "error occurred while running the tool" in str(failed.result)
    assert seen == ["abc", "missing"]


def test_a_smolagents_tool_keeps_its_schema_and_is_called_as_its_agent_calls_it():
    from smolagents import tool
    from smolagents.models import get_tool_json_schema

    made = tool(lc_search)
    tools = wb.Registry(history=":memory:")
    registered = tools.register(made, name="smol_search")
    assert registered.spec.input_schema == get_tool_json_schema(made)["function"]["parameters"]
    assert registered.declared_from is made.forward
    assert tools.invoke("smol_search", {"query": "tide", "limit": 2}).wait(30).result == (
        "tide-0, tide-1"
    )
    assert wb.declare.is_framework_tool(made)
