"""What each agent framework would send a model for one plain Python function, side by side.

The framework, not the tool's author, decides what the model sees: the same function becomes a
different tool in each. ``framework_views(fn)`` asks each framework installed here to make its
tool of ``fn`` with its own code (never rebuilt by workbench), reads back the name, description
and argument schema that framework sends, and names in words how each differs from workbench's
own: a description dropped, a parameter made required, ``null`` allowed, ``title`` keys kept, the
whole docstring sent. A framework that refuses the function says why in its own error text; one
not installed says what to install.

The frameworks: workbench, LangChain (``StructuredTool.from_function``, as it is and with
``parse_docstring=True``, read as ``convert_to_openai_tool`` sends it), inspect_ai (``ToolDef``),
openai-agents (``function_tool``, in its default strict mode and with ``strict_mode=False``),
pydantic-ai (``Tool(fn).tool_def``), smolagents (``@tool``, as ``get_tool_json_schema`` sends
it) and the MCP SDK (the tool an ``MCPServer`` lists).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from workbench import _extras
from workbench._html import esc, pretty_json
from workbench.declare._frameworks import (
    Sent,
    function_of,
    is_framework_tool,
    sent_by_inspect,
    sent_by_langchain,
)
from workbench.declare._schema import function_schema
from workbench.tokens import TokenCount, count_tokens


@dataclass(frozen=True)
class FrameworkView:
    """One framework's tool of a function: what it sends (``name``, ``description``,
    ``parameters``), or why it sent nothing (``refused``: the framework's own error text;
    ``unavailable``: what to install), and ``differences`` from workbench's view, in words."""

    framework: str
    name: str | None = None
    description: str | None = None
    parameters: dict[str, Any] | None = None
    refused: str | None = None
    unavailable: str | None = None
    differences: tuple[str, ...] = ()

    @property
    def sent(self) -> dict[str, Any] | None:
        """The tool as the framework hands it to a model (None when it made none)."""
        if self.parameters is None:
            return None
        return {"name": self.name, "description": self.description, "parameters": self.parameters}

    def tokens(self, family: str = "openai") -> TokenCount | None:
        """What the tool costs a model of ``family`` in tokens, counted on its compact JSON
        (name, description, parameters; a provider wraps it in a little more); None when the
        framework made none."""
        sent = self.sent
        if sent is None:
            return None
        return count_tokens(json.dumps(sent, ensure_ascii=False, separators=(",", ":")), family)


class FrameworkViews(list[FrameworkView]):
    """Every framework's view of one function, workbench's first; drawn side by side in a
    notebook, each column with the differences it names."""

    def of(self, framework: str) -> FrameworkView:
        """The view of ``framework`` (its label, e.g. ``"LangChain"``); KeyError if none."""
        for view in self:
            if view.framework == framework:
                return view
        raise KeyError(
            f"no view of {framework!r}; there are {', '.join(v.framework for v in self)}"
        )

    @property
    def differences(self) -> list[str]:
        """Every difference every framework's view names, in order."""
        return [line for view in self for line in view.differences]

    def _repr_html_(self) -> str:
        columns = []
        for view in self:
            if view.sent is not None:
                body = (
                    f"<div class='wb-framework-cost'>{esc(str(view.tokens()))}</div>"
                    f"<pre class='wb-json'>{esc(pretty_json(view.sent))}</pre>"
                )
            else:
                body = (
                    f"<div class='wb-warnings'>{esc(view.refused or view.unavailable or '')}</div>"
                )
            said = "".join(f"<li>{esc(line)}</li>" for line in view.differences)
            columns.append(
                f"<div class='wb-framework-view'><div class='wb-label'>{esc(view.framework)}</div>"
                f"{body}{f'<ul>{said}</ul>' if said else ''}</div>"
            )
        return (
            "<div class='wb-framework-views' style='display:flex;gap:12px;overflow-x:auto;"
            f"align-items:flex-start'>{''.join(columns)}</div>"
        )


def _workbench(fn: Callable[..., Any]) -> Sent:
    schema = function_schema(fn, description=None)
    return fn.__name__, schema.description, schema.input_schema


def _langchain(parse_docstring: bool) -> Callable[[Callable[..., Any]], Sent]:
    def make(fn: Callable[..., Any]) -> Sent:
        from langchain_core.tools import StructuredTool

        return sent_by_langchain(StructuredTool.from_function(fn, parse_docstring=parse_docstring))

    return make


def _openai_agents(strict: bool) -> Callable[[Callable[..., Any]], Sent]:
    def make(fn: Callable[..., Any]) -> Sent:
        from agents import function_tool  # openai-agents

        made = function_tool(fn, strict_mode=strict)
        return made.name, made.description, made.params_json_schema

    return make


def _pydantic_ai(fn: Callable[..., Any]) -> Sent:
    from pydantic_ai import Tool

    made = Tool(fn).tool_def  # the ToolDefinition a pydantic-ai agent hands its model
    return made.name, made.description, made.parameters_json_schema


def _smolagents(fn: Callable[..., Any]) -> Sent:
    from smolagents import tool
    from smolagents.models import get_tool_json_schema

    # What a ToolCallingAgent sends its model; ``tool`` refuses a function whose docstring
    # leaves an argument undescribed, and reads the function's source (a cell's, in a notebook).
    sent = get_tool_json_schema(tool(fn))["function"]
    return sent["name"], sent["description"], sent["parameters"]


def _mcp_sdk(fn: Callable[..., Any]) -> Sent:
    from mcp.server.mcpserver.tools import Tool

    made = Tool.from_function(fn)  # what an MCPServer lists as the tool's inputSchema
    return made.name, made.description, made.parameters


FRAMEWORKS: tuple[tuple[str, str, Callable[[Callable[..., Any]], Sent]], ...] = (
    ("workbench", "", _workbench),
    ("LangChain", "langchain", _langchain(parse_docstring=False)),
    ("LangChain (parse_docstring)", "langchain", _langchain(parse_docstring=True)),
    ("inspect_ai", "inspect", sent_by_inspect),  # ToolDef reads a plain function as it is
    # function_tool's default is strict mode, which makes every parameter required
    ("openai-agents", "agents", _openai_agents(strict=True)),
    ("openai-agents (strict_mode=False)", "agents", _openai_agents(strict=False)),
    ("pydantic-ai", "pydantic-ai", _pydantic_ai),
    ("smolagents", "smolagents", _smolagents),
    ("MCP SDK", "mcp", _mcp_sdk),
)
"""Each framework: its label, the extra that brings it, and how its tool of a function is made."""


def framework_views(fn: Callable[..., Any]) -> FrameworkViews:
    """What workbench and each framework would send a model for the plain function ``fn``
    (or the one a workbench ``Tool`` was declared from, or another framework's tool was made
    of), each made by that framework's own code, with the differences from workbench's named.

    Examples:
        >>> def search(query: str, limit: int = 10) -> list[str]:
        ...     '''Search the notes.
        ...
        ...     Args:
        ...         query: What to look for.
        ...         limit: The most results.
        ...     '''
        ...     return []
        >>> views = framework_views(search)
        >>> [view.framework for view in views]
        ... # doctest: +NORMALIZE_WHITESPACE
        ['workbench', 'LangChain', 'LangChain (parse_docstring)', 'inspect_ai', 'openai-agents',
         'openai-agents (strict_mode=False)', 'pydantic-ai', 'smolagents', 'MCP SDK']
        >>> "LangChain drops the description of `limit`" in views.differences
        True
        >>> views.of("MCP SDK").parameters["properties"]["limit"]["title"]
        'Limit'
    """
    declared = getattr(fn, "declared_from", None)  # a workbench Tool: the function behind it
    if declared is not None:
        fn = declared
    elif is_framework_tool(fn):  # another framework's tool: the function it was made of
        made_of = function_of(fn)
        if made_of is None:
            raise TypeError(f"{type(fn).__name__} keeps no function for the frameworks to read")
        fn = made_of
    views = FrameworkViews()
    ours: FrameworkView | None = None
    for label, extra, make in FRAMEWORKS:
        try:
            name, description, parameters = make(fn)
        except ModuleNotFoundError as exc:
            views.append(
                FrameworkView(
                    label, unavailable=f"{exc.name} is not installed: {_extras.install_hint(extra)}"
                )
            )
            continue
        except Exception as exc:  # the framework refuses the function: its words are the answer
            views.append(FrameworkView(label, refused=f"{type(exc).__name__}: {exc}"))
            continue
        view = FrameworkView(label, name, description, parameters)
        if label == "workbench":
            ours = view
        elif ours is not None:  # workbench refused it: nothing to compare with
            view = FrameworkView(
                label,
                name,
                description,
                parameters,
                differences=tuple(_differences(label, ours, view)),
            )
        views.append(view)
    return views


def _differences(label: str, ours: FrameworkView, theirs: FrameworkView) -> Iterator[str]:
    """How ``theirs`` differs from workbench's view, each a sentence naming ``label``."""
    yield from _description_differences(label, ours.description, theirs.description)
    mine, other = ours.parameters or {}, theirs.parameters or {}
    mine_props, other_props = mine.get("properties", {}), other.get("properties", {})
    mine_required, other_required = set(mine.get("required", [])), set(other.get("required", []))
    for name in mine_props:
        if name not in other_props:
            yield f"{label} leaves out `{name}`"
    for name in other_props:
        if name not in mine_props:
            yield f"{label} adds `{name}`"
    for name, schema in mine_props.items():
        if name not in other_props:
            continue
        sent, referred = _followed(other_props[name], other)
        schema, mine_referred = _followed(schema, mine)
        if referred and not mine_referred:
            yield f"{label} sends the schema of `{name}` as a `$ref` to {referred}"
        if schema.get("description") and not sent.get("description"):
            yield f"{label} drops the description of `{name}`"
        elif sent.get("description") and not schema.get("description"):
            yield f"{label} describes `{name}`, which workbench leaves undescribed"
        if name in other_required and name not in mine_required:
            yield f"{label} makes `{name}` required"
        elif name in mine_required and name not in other_required:
            yield f"{label} makes `{name}` optional"
        if _allows_null(sent) and not _allows_null(schema):
            yield f"{label} allows `null` for `{name}`"
        if "default" in schema and "default" not in sent:
            yield f"{label} drops the default of `{name}`"
        elif "default" in sent and sent.get("default") != schema.get("default"):
            yield f"{label} gives `{name}` the default {json.dumps(sent['default'])}"
        if _types(sent) != _types(schema) and _types(sent) - {"null"} != _types(schema):
            shown, mine_shown = _typed(sent), _typed(schema)
            yield f"{label} types `{name}` as {shown} (workbench: {mine_shown})"
    if _has_titles(other) and not _has_titles(mine):
        yield f"{label} keeps `title` keys"
    if mine.get("additionalProperties") is False and other.get("additionalProperties") is not False:
        yield (
            f"{label} lets the model send arguments the function does not take "
            "(no `additionalProperties: false`)"
        )


def _description_differences(label: str, ours: str | None, theirs: str | None) -> Iterator[str]:
    mine, other = " ".join((ours or "").split()), " ".join((theirs or "").split())
    if mine == other:
        return
    if not other:
        yield f"{label} sends no description"
    elif mine and other.startswith(mine) and "Args:" in other:
        yield f"{label} sends the whole docstring as the description, its Args section included"
    else:
        yield f"{label} describes the tool differently: {other[:120]!r}"


def _followed(schema: dict[str, Any], root: dict[str, Any]) -> tuple[dict[str, Any], str | None]:
    """``schema`` with a local ``$ref`` (``#/$defs/Name``, alone or as an ``allOf``'s one
    member) replaced by what it names in ``root``, and the reference followed (None if none)."""
    target = schema.get("$ref")
    if target is None and len(schema.get("allOf", []) or []) == 1:
        target = schema["allOf"][0].get("$ref")
    if not isinstance(target, str) or not target.startswith("#/"):
        return schema, None
    found: Any = root
    for part in target[2:].split("/"):
        found = found.get(part) if isinstance(found, dict) else None
    if not isinstance(found, dict):
        return schema, None
    rest = {key: value for key, value in schema.items() if key not in ("$ref", "allOf")}
    return {**found, **rest}, target


def _types(schema: dict[str, Any]) -> set[str]:
    found = schema.get("type")
    types = {found} if isinstance(found, str) else set(found or [])
    for option in schema.get("anyOf", []) or []:
        if isinstance(option, dict):
            types |= _types(option)
    return types


def _typed(schema: dict[str, Any]) -> str:
    return "/".join(sorted(_types(schema))) or "no type"


def _allows_null(schema: dict[str, Any]) -> bool:
    return "null" in _types(schema) or schema.get("nullable") is True  # OpenAPI's spelling


_VALUES = frozenset({"default", "examples", "enum", "const"})
"""Keywords whose values are data, not schemas: a ``title`` there is no title key."""


def _has_titles(schema: Any) -> bool:
    """True when ``schema`` or a schema inside it has a ``title`` keyword (a property named
    ``title`` is not one)."""
    if isinstance(schema, list):
        return any(_has_titles(value) for value in schema)
    if not isinstance(schema, dict):
        return False
    if isinstance(schema.get("title"), str):
        return True
    for key, value in schema.items():
        if key in ("properties", "$defs", "definitions") and isinstance(value, dict):
            if any(_has_titles(inner) for inner in value.values()):
                return True
        elif key not in _VALUES and _has_titles(value):
            return True
    return False


__all__ = ["FRAMEWORKS", "FrameworkView", "FrameworkViews", "framework_views"]
