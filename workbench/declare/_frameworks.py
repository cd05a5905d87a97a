"""Tools written for another framework, brought in as they are.

``from_framework(obj)`` makes a workbench tool of a LangChain tool (a ``BaseTool``, such as a
``StructuredTool`` or one made with ``@tool``), an inspect_ai tool (what an ``@tool`` factory
returns), a pydantic-ai ``Tool``, an openai-agents ``FunctionTool`` or a smolagents ``Tool``.
The model-visible schema is the one that framework sends, read from its own objects
(LangChain's ``convert_to_openai_tool``, inspect_ai's ``ToolDef``, pydantic-ai's ``tool_def``,
openai-agents' ``params_json_schema``, smolagents' ``get_tool_json_schema``), never rebuilt
here; the body is the framework's own invoke path (``ainvoke`` for a LangChain tool with a
coroutine, ``invoke`` otherwise; inspect_ai's coroutine awaited; pydantic-ai's validator and
call; openai-agents' ``on_invoke_tool`` with the arguments' JSON text; smolagents' ``Tool``
called), so the call is a card like any other: preflight,
Terminate, approval, history and receipt. An MCP SDK server's tools come in through
``wb.mcp.connect(server, tools=...)``, in process.

``Registry.register(obj)`` takes such an object too. The tool keeps the function the framework
made it of (``declared_from``), so ``framework_views`` shows what the other frameworks would make
of that function.
"""

from __future__ import annotations

import inspect
import json
from collections.abc import Callable
from typing import Any

from workbench.declare._names import check_name
from workbench.declare._tool import Tool, tool_from_schema


def _made_by(obj: Any, package: str) -> bool:
    """True when ``obj``'s class, or one it derives from, is defined in ``package``; nothing
    is imported to ask."""
    return any(cls.__module__.split(".")[0] == package for cls in type(obj).__mro__)


def is_langchain_tool(obj: Any) -> bool:
    """True for a LangChain ``BaseTool`` (``StructuredTool``, ``@tool``, a toolkit's tools)."""
    return _made_by(obj, "langchain_core") and hasattr(obj, "ainvoke") and hasattr(obj, "name")


def is_inspect_tool(obj: Any) -> bool:
    """True for an inspect_ai tool: what an ``@tool`` factory returns."""
    info = getattr(obj, "__registry_info__", None)
    return callable(obj) and getattr(info, "type", None) == "tool"


Sent = tuple[str, str | None, dict[str, Any]]
"""What a framework sends a model of one of its tools: its name, description and argument schema."""


def sent_by_langchain(obj: Any) -> Sent:
    """What LangChain sends a model of its tool ``obj`` (``convert_to_openai_tool``)."""
    from langchain_core.utils.function_calling import convert_to_openai_tool

    sent = convert_to_openai_tool(obj)["function"]
    return sent["name"], sent.get("description"), sent.get("parameters", {})


def sent_by_inspect(obj: Any) -> Sent:
    """What inspect_ai sends a model of its tool ``obj`` (its ``ToolDef``)."""
    from inspect_ai.tool import ToolDef

    made = ToolDef(obj)
    return made.name, made.description, made.parameters.model_dump(exclude_none=True)


def _brought_in(
    handler: Callable[..., Any], sent: Sent, name: str | None, meta: dict[str, Any]
) -> Tool:
    """The workbench tool of a framework's: its body ``handler``, the schema it ``sent``."""
    sent_name, description, parameters = sent
    return tool_from_schema(
        handler,
        name=check_name(name or sent_name),
        description=description or "",
        input_schema=parameters or {"type": "object", "properties": {}},
        meta=meta,
    )


def _langchain(obj: Any, name: str | None, meta: dict[str, Any]) -> Tool:
    handler: Callable[..., Any]
    if getattr(obj, "coroutine", None) is not None:

        async def handler(arguments: dict[str, Any]) -> Any:
            return await obj.ainvoke(arguments)

    else:

        def handler(arguments: dict[str, Any]) -> Any:
            return obj.invoke(arguments)

    return _brought_in(handler, sent_by_langchain(obj), name, meta)


def _inspect(obj: Any, name: str | None, meta: dict[str, Any]) -> Tool:

    async def handler(arguments: dict[str, Any]) -> Any:
        return await obj(**arguments)  # the tool's own coroutine, as inspect_ai awaits it

    return _brought_in(handler, sent_by_inspect(obj), name, meta)


def is_pydantic_ai_tool(obj: Any) -> bool:
    """True for a pydantic-ai ``Tool`` (one given to an ``Agent``, or a toolset's)."""
    return _made_by(obj, "pydantic_ai") and hasattr(obj, "tool_def") and hasattr(obj, "function")


def is_openai_agents_tool(obj: Any) -> bool:
    """True for an openai-agents ``FunctionTool`` (what ``@function_tool`` makes)."""
    return _made_by(obj, "agents") and hasattr(obj, "on_invoke_tool")


def is_smolagents_tool(obj: Any) -> bool:
    """True for a smolagents ``Tool`` (what ``@tool`` makes, or a ``Tool`` subclass)."""
    return _made_by(obj, "smolagents") and hasattr(obj, "inputs") and hasattr(obj, "forward")


def _pydantic_ai(obj: Any, name: str | None, meta: dict[str, Any]) -> Tool:
    made = obj.tool_def
    schema = obj.function_schema
    if schema.takes_ctx:
        raise TypeError(
            f"pydantic-ai tool {made.name!r} takes a RunContext, which only a pydantic-ai agent's "
            "run gives: declare its function without the context to run it here"
        )

    async def handler(arguments: dict[str, Any]) -> Any:
        # pydantic-ai's own path: its validator, then its call (awaited, or in its thread)
        validated = schema.validator.validate_python(arguments)
        return await schema.call(validated, None)

    return _brought_in(
        handler, (made.name, made.description, made.parameters_json_schema), name, meta
    )


def _openai_agents(obj: Any, name: str | None, meta: dict[str, Any]) -> Tool:
    from agents.tool_context import ToolContext as AgentsToolContext

    async def handler(arguments: dict[str, Any], ctx: Any) -> Any:
        text = json.dumps(arguments)
        context = AgentsToolContext(
            context=None, tool_name=obj.name, tool_call_id=ctx.call_id, tool_arguments=text
        )
        # what an openai-agents run does: the JSON text of the arguments to on_invoke_tool,
        # whose own error handling answers a failing body with the text the model would read
        return await obj.on_invoke_tool(context, text)

    return _brought_in(handler, (obj.name, obj.description, obj.params_json_schema), name, meta)


def _smolagents(obj: Any, name: str | None, meta: dict[str, Any]) -> Tool:
    from smolagents.models import get_tool_json_schema

    sent = get_tool_json_schema(obj)["function"]

    def handler(arguments: dict[str, Any]) -> Any:
        return obj(**arguments)  # Tool.__call__, as a smolagents agent calls its tools

    return _brought_in(
        handler, (sent["name"], sent.get("description"), sent["parameters"]), name, meta
    )


ADAPTERS: tuple[
    tuple[Callable[[Any], bool], Callable[[Any, str | None, dict[str, Any]], Tool]], ...
]
ADAPTERS = (
    (is_langchain_tool, _langchain),
    (is_inspect_tool, _inspect),
    (is_pydantic_ai_tool, _pydantic_ai),
    (is_openai_agents_tool, _openai_agents),
    (is_smolagents_tool, _smolagents),
)


def function_of(obj: Any) -> Callable[..., Any] | None:
    """The plain function a framework's tool was made of, where it keeps one (a LangChain
    ``StructuredTool``'s ``func`` or ``coroutine``; an inspect_ai tool is its function), else
    None (a ``BaseTool`` subclass written as a class has none)."""
    if is_inspect_tool(obj):
        return obj  # type: ignore[no-any-return]
    if is_pydantic_ai_tool(obj):
        return obj.function  # type: ignore[no-any-return]
    if is_smolagents_tool(obj):  # @tool keeps the function as it is; a subclass has a method
        forward = obj.forward
        return forward if inspect.isfunction(forward) else None
    found = getattr(obj, "func", None) or getattr(obj, "coroutine", None)
    return found if callable(found) else None


def is_framework_tool(obj: Any) -> bool:
    """True when ``from_framework`` knows how to bring ``obj`` in."""
    return any(recognizes(obj) for recognizes, _ in ADAPTERS)


def from_framework(obj: Any, *, name: str | None = None, **meta: Any) -> Tool:
    """A workbench tool of ``obj``, a LangChain or inspect_ai tool, with the schema that
    framework sends and the framework's own invoke path as its body (``name`` renames it;
    ``meta`` is a tool's usual metadata: ``permission``, ``timeout``, ``read_only`` ...).
    ``TypeError`` for anything else, naming what is taken.

    Examples:
        >>> from langchain_core.tools import tool
        >>> @tool
        ... def shout(text: str) -> str:
        ...     '''Shout the text.'''
        ...     return text.upper()
        >>> made = from_framework(shout, read_only=True)
        >>> made.name, made.spec.input_schema["required"], made.spec.read_only
        ('shout', ['text'], True)
    """
    for recognizes, make in ADAPTERS:
        if recognizes(obj):
            tool = make(obj, name, dict(meta))
            tool.declared_from = function_of(obj)
            return tool
    raise TypeError(
        f"{type(obj).__name__} is not a tool of a framework workbench brings in: give a "
        "LangChain BaseTool (StructuredTool, @tool), an inspect_ai tool (what an @tool "
        "factory returns), a pydantic-ai Tool, an openai-agents FunctionTool or a smolagents "
        "Tool; an MCP server's tools come in with wb.mcp.connect(server, tools=...)"
    )


__all__ = ["from_framework", "is_framework_tool"]
