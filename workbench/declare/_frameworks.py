"""Tools written for another framework, brought in as they are.

``from_framework(obj)`` makes a workbench tool of a LangChain tool (a ``BaseTool``, such as a
``StructuredTool`` or one made with ``@tool``) or an inspect_ai tool (what an ``@tool`` factory
returns). The model-visible schema is the one that framework sends, read from its own objects
(LangChain's ``convert_to_openai_tool``, inspect_ai's ``ToolDef``), never rebuilt here; the body
is the framework's own invoke path (``ainvoke`` for a LangChain tool with a coroutine, ``invoke``
otherwise; inspect_ai's coroutine awaited), so the call is a card like any other: preflight,
Terminate, approval, history and receipt. An MCP SDK server's tools come in through
``wb.mcp.connect(server, tools=...)``, in process.

``Registry.register(obj)`` takes such an object too. The tool keeps the function the framework
made it of (``declared_from``), so ``framework_views`` shows what the other frameworks would make
of that function.
"""

from __future__ import annotations

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


def _langchain(obj: Any, name: str | None, meta: dict[str, Any]) -> Tool:
    sent_name, description, parameters = sent_by_langchain(obj)
    handler: Callable[..., Any]
    if getattr(obj, "coroutine", None) is not None:

        async def handler(arguments: dict[str, Any]) -> Any:
            return await obj.ainvoke(arguments)

    else:

        def handler(arguments: dict[str, Any]) -> Any:
            return obj.invoke(arguments)

    return tool_from_schema(
        handler,
        name=check_name(name or sent_name),
        description=description or "",
        input_schema=parameters or {"type": "object", "properties": {}},
        meta=meta,
    )


def _inspect(obj: Any, name: str | None, meta: dict[str, Any]) -> Tool:
    sent_name, description, parameters = sent_by_inspect(obj)

    async def handler(arguments: dict[str, Any]) -> Any:
        return await obj(**arguments)  # the tool's own coroutine, as inspect_ai awaits it

    return tool_from_schema(
        handler,
        name=check_name(name or sent_name),
        description=description or "",
        input_schema=parameters,
        meta=meta,
    )


ADAPTERS: tuple[
    tuple[Callable[[Any], bool], Callable[[Any, str | None, dict[str, Any]], Tool]], ...
]
ADAPTERS = ((is_langchain_tool, _langchain), (is_inspect_tool, _inspect))


def function_of(obj: Any) -> Callable[..., Any] | None:
    """The plain function a framework's tool was made of, where it keeps one (a LangChain
    ``StructuredTool``'s ``func`` or ``coroutine``; an inspect_ai tool is its function), else
    None (a ``BaseTool`` subclass written as a class has none)."""
    if is_inspect_tool(obj):
        return obj  # type: ignore[no-any-return]
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
        "LangChain BaseTool (StructuredTool, @tool) or an inspect_ai tool (what an @tool "
        "factory returns); an MCP server's tools come in with wb.mcp.connect(server, tools=...)"
    )


__all__ = ["from_framework", "is_framework_tool"]
