"""A registered tool: its declaration plus how to run it.

``@tools.tool`` returns a ``Tool``. Calling it like the function it wraps runs the plain function
(no runtime); ``tool.invoke(args)`` runs it the way a model would, through the registry.
"""

from __future__ import annotations

import inspect
import warnings
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Literal, Protocol

from workbench._html import esc, pretty_json
from workbench.context import ToolContext
from workbench.declare._schema import function_schema, schema_from_raw
from workbench.declare._spec import DeclareWarning, ToolSpec
from workbench.preflight import Preflight, draft_2020_12

if TYPE_CHECKING:
    from jsonschema import Draft202012Validator


ToolKind = Literal["function", "coroutine", "generator", "async_generator", "custom"]
Binder = Callable[[dict[str, Any]], tuple[list[Any], dict[str, Any]]]
Planner = Callable[..., Any]


def kind_of(fn: Callable[..., Any]) -> ToolKind:
    """How a body runs: on the loop (coroutine, async generator) or in a worker thread."""
    if inspect.isasyncgenfunction(fn):
        return "async_generator"
    if inspect.iscoroutinefunction(fn):
        return "coroutine"
    if inspect.isgeneratorfunction(fn):
        return "generator"
    return "function"


def origin_of(fn: Callable[..., Any] | None) -> tuple[str, str] | None:
    """Where a function was defined (module, qualified name): re-running a notebook cell
    redefines a function with the same origin, which the registry treats as a replacement."""
    if fn is None:
        return None
    return (getattr(fn, "__module__", "") or "", getattr(fn, "__qualname__", "") or "")


class Invoker(Protocol):
    """What a tool needs of the registry it belongs to: invoking by name."""

    @property
    def invoke(self) -> Callable[..., Any]:
        """``invoke(name, arguments)``: start a call of the registry's tool ``name``."""
        ...


class Tool:
    """A tool as the registry holds it: spec, body, argument binding and preflight."""

    def __init__(
        self,
        spec: ToolSpec,
        *,
        fn: Callable[..., Any] | None,
        kind: ToolKind,
        bind: Binder,
        context_param: str | None,
        registry: Invoker | None = None,
    ) -> None:
        self.spec = spec
        self.fn = fn
        self.kind = kind
        self.bind = bind
        self.context_param = context_param
        self.registry = registry
        self.preflight = Preflight(spec.input_schema, tool_name=spec.name)
        self.planner: Planner | None = None
        self.origin = origin_of(fn)
        self.declared_from: Callable[..., Any] | None = None
        """The plain function the tool was declared from (its schema read from it), if any."""
        self._output_validator: Draft202012Validator | None = None

    @property
    def name(self) -> str:
        """The model-visible name."""
        return self.spec.name

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        """Call the wrapped function directly, as plain Python."""
        if self.fn is None:
            raise TypeError(f"{self.name} is a custom tool: the person supplies its result")
        return self.fn(*args, **kwargs)

    def invoke(self, args: Any = None, **options: Any) -> Any:
        """Invoke through the registry, exactly as a model's call would run; returns the
        ``Call`` at once."""
        if self.registry is None:
            raise RuntimeError(f"{self.name} is not registered")
        return self.registry.invoke(self.name, args, **options)

    def dry_run(self, planner: Planner) -> Planner:
        """Decorate the function that plans a call without side effects (a dry run).

        It receives the coerced arguments (and a ToolContext if it asks for one) and returns
        the plan: any JSON value or an envelope.
        """
        self.planner = planner
        return planner

    def output_problem(self, result: Any) -> str | None:
        """Why ``result`` does not match the output schema, or None when it does (or none is
        declared)."""
        spec = self.spec
        # An MCP server's result was checked against its own schema by the SDK's client, and
        # its envelope holds the receipt beside that structured content, not the value itself.
        if not spec.output_schema or spec.ownership == "mcp":
            return None
        if self._output_validator is None:
            # Compiled on the first result, not when the tool is declared: jsonschema costs
            # seconds to import, which a registry (a served one too) would pay to start.
            self._output_validator = draft_2020_12()(spec.output_schema)
        from jsonschema.exceptions import best_match  # loaded with the validator

        error = best_match(self._output_validator.iter_errors(result))
        if error is None:
            return None
        where = "/".join(str(part) for part in error.absolute_path)
        return f"{error.message}" + (f" (at {where})" if where else "")

    def __repr__(self) -> str:
        return f"<Tool {self.name} ({self.kind}, {self.spec.family})>"

    def _repr_mimebundle_(self, **_: Any) -> dict[str, str]:
        spec = self.spec
        badges = " ".join(
            f"<span class='wb-badge'>{esc(key)}</span>"
            for key, value in spec.metadata().items()
            if value is True
        )
        html = (
            f"<div class='wb-tool'><b>{esc(spec.name)}</b> {badges}"
            f"<div>{esc(spec.description)}</div>"
            f"<pre>{esc(pretty_json(spec.input_schema))}</pre></div>"
        )
        text = f"{spec.name}: {spec.description}\n{pretty_json(spec.input_schema)}"
        return {"text/plain": text, "text/html": html}


def tool_from_function(
    fn: Callable[..., Any],
    *,
    name: str,
    description: str | None,
    meta: dict[str, Any],
) -> Tool:
    """Build a Tool from a Python function: schema from its signature and docstring."""
    schema = function_schema(fn, description=description)
    for note in schema.warnings:
        warnings.warn(f"{name}: {note}", DeclareWarning, stacklevel=4)
    kind: ToolKind = "custom" if meta.get("ownership") == "custom" else kind_of(fn)
    meta = _with_defaults(meta, kind)
    spec = ToolSpec(
        name=name,
        description=schema.description,
        input_schema=schema.input_schema,
        output_schema=meta.pop("output_schema", None) or schema.output_schema,
        declare_warnings=schema.warnings,
        **meta,
    )
    made = Tool(
        spec,
        fn=None if kind == "custom" else fn,
        kind=kind,
        bind=schema.bind,
        context_param=schema.context_param,
    )
    made.declared_from = fn
    return made


def tool_from_schema(
    handler: Callable[..., Any] | None,
    *,
    name: str,
    description: str,
    input_schema: dict[str, Any],
    meta: dict[str, Any],
) -> Tool:
    """Build a Tool from a hand-written JSON Schema; the handler receives the arguments dict
    (and a ToolContext as a second argument when it declares one)."""
    schema = schema_from_raw(input_schema)
    custom = meta.get("ownership") == "custom" or handler is None
    if custom:
        meta = {**meta, "ownership": meta.get("ownership") or "custom"}
    kind: ToolKind = "custom" if custom else kind_of(handler)  # type: ignore[arg-type]
    meta = _with_defaults(meta, kind)
    wants_context = handler is not None and _wants_context(handler)
    spec = ToolSpec(name=name, description=description, input_schema=schema, **meta)
    return Tool(
        spec,
        fn=None if custom else handler,
        kind=kind,
        bind=lambda arguments: ([arguments], {}),
        context_param="__positional__" if wants_context else None,
    )


def _with_defaults(meta: dict[str, Any], kind: ToolKind) -> dict[str, Any]:
    """The metadata with its defaults that depend on the body (generators stream), after
    checking the family a tool claims."""
    _check_family(meta)
    if "streaming" in meta:
        return meta
    return {**meta, "streaming": kind in ("generator", "async_generator")}


def _check_family(meta: dict[str, Any]) -> None:
    from workbench.families import FAMILIES

    family = meta.get("family", "json")
    internal = ("failure", "compacted")  # families the runtime assigns, never a tool
    if family not in FAMILIES or family in internal:
        known = ", ".join(sorted(name for name in FAMILIES if name not in internal))
        raise ValueError(f"unknown family {family!r}; a tool's family is one of: {known}")


def _wants_context(handler: Callable[..., Any]) -> bool:
    try:
        parameters = list(inspect.signature(handler).parameters.values())
    except (TypeError, ValueError):
        return False
    if len(parameters) >= 2:
        annotation = parameters[1].annotation
        return annotation in (ToolContext, "ToolContext", "wb.ToolContext") or parameters[
            1
        ].name in (
            "ctx",
            "context",
        )
    return False
