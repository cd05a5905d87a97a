"""The model-visible schema of a tool, from a plain Python function or a hand-written JSON Schema.

``function_schema`` reads a signature and its docstring through pydantic and returns a clean,
provider-friendly JSON Schema: ``$defs`` inlined (OpenAI and Anthropic handle ``$ref`` poorly;
only recursive models keep a ``$ref``), no pydantic ``title`` noise, ``enum`` for ``Literal`` and
``Enum``, ``default`` declared for defaulted parameters, and ``additionalProperties: false`` on
every object that declares its properties. A ``ToolContext`` parameter is injected by the runtime
and never appears in the schema.

Decisions:

- An un-annotated parameter accepts any JSON value (as in pydantic and pydantic-ai); its schema
  has no ``type`` and ``check_exports`` points it out.
- ``Optional[X] = None`` accepts ``null`` explicitly (``anyOf`` with ``{"type": "null"}``); a
  parameter annotated ``X = None`` does not, and the preflight drops a ``null`` sent for it.
- A free-form mapping (``dict`` or ``dict[str, X]``) keeps its ``additionalProperties`` value
  schema: closing it would make it useless. ``check_exports`` flags it for OpenAI strict mode.
- ``*args`` and ``**kwargs`` are refused: a model sends only named arguments the schema declares.
"""

from __future__ import annotations

import functools
import inspect
import types
import typing
import warnings
from collections.abc import Callable
from dataclasses import dataclass, is_dataclass
from typing import Annotated, Any, Union

import typing_extensions
from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError, create_model
from pydantic.fields import FieldInfo
from pydantic.json_schema import PydanticJsonSchemaWarning
from pydantic_core import PydanticUndefined

from workbench.context import ToolContext
from workbench.declare._docstrings import parse_docstring
from workbench.preflight import clean_schema, draft_2020_12

Bind = Callable[[dict[str, Any]], tuple[list[Any], dict[str, Any]]]


@dataclass(frozen=True)
class FunctionSchema:
    """What a function declares to a model, and how to call it with the model's arguments."""

    description: str
    input_schema: dict[str, Any]
    output_schema: dict[str, Any] | None
    context_param: str | None
    params: tuple[str, ...]
    bind: Bind
    warnings: tuple[str, ...] = ()
    """What the declaration could not honour (it still declares the tool)."""


class BindError(ValueError):
    """An argument passed the JSON Schema but not its Python type (e.g. a custom validator).

    ``field`` is the dotted argument path, ready for an ``invalid_args`` envelope.
    """

    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field = field


# --- function → schema --------------------------------------------------------------------------


@dataclass(frozen=True)
class _Param:
    name: str
    positional_only: bool
    convert: Callable[[Any], Any]
    # The value to pass when the argument is absent and Python's own default cannot apply: a
    # `Field(...)` default, or a positional-only default before a later positional argument.
    fallback: Callable[[], Any] | None


def function_schema(fn: Callable[..., Any], *, description: str | None = None) -> FunctionSchema:
    """Declare ``fn`` as a tool: its description, model-visible schemas and argument binder.

    The description is ``description`` when given, else the docstring's summary. Parameter
    descriptions come from the docstring (Google, numpy or Sphinx) unless an
    ``Annotated[..., Field(description=...)]`` gives one, which wins. Raises ``TypeError``
    listing every problem with the declaration at once.
    """
    problems: list[str] = []
    notes: list[str] = []
    signature = _signature(fn, problems, notes)
    doc = parse_docstring(inspect.getdoc(_target(fn)))
    fields: dict[str, Any] = {}
    params: list[_Param] = []
    context_param: str | None = None
    for parameter in signature.parameters.values() if signature else ():
        if parameter.kind in (parameter.VAR_POSITIONAL, parameter.VAR_KEYWORD):
            stars = "*" if parameter.kind is parameter.VAR_POSITIONAL else "**"
            problems.append(
                f"`{stars}{parameter.name}`: a model sends only named arguments the schema "
                "declares; give each one its own parameter"
            )
            continue
        annotation = (
            Any if parameter.annotation is inspect.Parameter.empty else parameter.annotation
        )
        if _is_context(annotation):
            if context_param is not None:
                problems.append(f"`{parameter.name}`: only one ToolContext parameter is allowed")
            context_param = parameter.name
            continue
        declared = _declare(parameter, annotation, doc.params.get(parameter.name), problems)
        if declared is not None:
            fields[f"p{len(fields)}"] = declared[0]
            params.append(declared[1])
    output_schema = _output_schema(signature, problems) if signature else None
    input_schema = _input_schema(fields, problems) if not problems else {}
    if problems:
        listed = "\n".join(f"  - {problem}" for problem in problems)
        raise TypeError(f"cannot declare {_qualname(fn)} as a tool:\n{listed}")
    return FunctionSchema(
        description=doc.summary if description is None else description,
        input_schema=input_schema,
        output_schema=output_schema,
        context_param=context_param,
        params=tuple(param.name for param in params),
        bind=_binder(tuple(params)),
        warnings=tuple(notes),
    )


def _qualname(fn: Callable[..., Any]) -> str:
    return f"`{getattr(fn, '__qualname__', None) or getattr(fn, '__name__', repr(fn))}`"


def _signature(
    fn: Callable[..., Any], problems: list[str], notes: list[str]
) -> inspect.Signature | None:
    try:
        plain = inspect.signature(fn)
    except (TypeError, ValueError) as exc:
        problems.append(f"its signature cannot be read: {exc}")
        return None
    try:
        return inspect.signature(fn, eval_str=True)
    except Exception:  # resolve one annotation at a time below, to name each that fails
        pass  # (each failure is named below, as a problem or a note)
    namespace = getattr(_target(fn), "__globals__", {})
    resolved = []
    for parameter in plain.parameters.values():
        annotation = parameter.annotation
        if isinstance(annotation, str):
            try:
                annotation = eval(annotation, namespace)  # what eval_str=True does, per parameter
            except Exception as exc:
                problems.append(
                    f"`{parameter.name}`: annotation {parameter.annotation!r} cannot be resolved "
                    f"({type(exc).__name__}: {exc}); annotations resolve in the function's module"
                )
                annotation = Any
        resolved.append(parameter.replace(annotation=annotation))
    returned = plain.return_annotation
    if isinstance(returned, str):
        try:
            returned = eval(returned, namespace)
        except Exception as exc:  # an unresolvable return type only costs the output schema
            notes.append(
                f"return annotation {returned!r} cannot be resolved ({type(exc).__name__}: "
                f"{exc}), so the tool declares no output schema; annotations resolve in the "
                "function's module: define the type at module level"
            )
            returned = inspect.Signature.empty
    return plain.replace(parameters=resolved, return_annotation=returned)


def _target(fn: Callable[..., Any]) -> Callable[..., Any]:
    """The function whose globals and docstring describe ``fn`` (through partials and wraps)."""
    while isinstance(fn, functools.partial):
        fn = fn.func
    unwrapped: Callable[..., Any] = inspect.unwrap(fn)
    return unwrapped


def _is_context(annotation: Any) -> bool:
    if typing.get_origin(annotation) is Annotated:
        return _is_context(typing.get_args(annotation)[0])
    if annotation is ToolContext:
        return True
    if typing.get_origin(annotation) in (Union, types.UnionType):
        others = [a for a in typing.get_args(annotation) if a is not type(None)]
        return others == [ToolContext]
    return False


def _declare(
    parameter: inspect.Parameter, annotation: Any, doc: str | None, problems: list[str]
) -> tuple[tuple[Any, FieldInfo], _Param] | None:
    default = parameter.default
    if isinstance(annotation, str):
        problems.append(
            f"`{parameter.name}`: annotation {annotation!r} is a forward reference that cannot "
            "be resolved; define the type before the tool"
        )
        return None
    if isinstance(default, FieldInfo):
        annotation = Annotated[annotation, default]
    try:
        adapter = TypeAdapter(annotation)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", PydanticJsonSchemaWarning)
            adapter.json_schema()
    except Exception as exc:
        problems.append(
            f"`{parameter.name}`: type {_type_name(annotation)} has no JSON Schema "
            f"({_first_line(exc)})"
        )
        return None
    described = any(
        isinstance(meta, FieldInfo) and meta.description for meta in _metadata(annotation)
    )
    field = _field(default, alias=parameter.name, description=None if described else doc)
    param = _Param(
        name=parameter.name,
        positional_only=parameter.kind is parameter.POSITIONAL_ONLY,
        convert=_converter(annotation, adapter),
        fallback=_fallback(default, parameter.kind is parameter.POSITIONAL_ONLY),
    )
    return (annotation, field), param


def _field(default: Any, *, alias: str, description: str | None) -> FieldInfo:
    # Passing description=None would count as set and erase an Annotated Field's description.
    extra: dict[str, Any] = {"alias": alias}
    if description:
        extra["description"] = description
    if isinstance(default, FieldInfo) and default.default_factory is not None:
        extra["default_factory"] = default.default_factory
    elif isinstance(default, FieldInfo):
        extra["default"] = default.default
    elif default is not inspect.Parameter.empty:
        extra["default"] = default
    field: FieldInfo = Field(**extra)
    return field


def _fallback(default: Any, positional_only: bool) -> Callable[[], Any] | None:
    if isinstance(default, FieldInfo):
        if default.default_factory is not None:
            return typing.cast(Callable[[], Any], default.default_factory)
        if default.default is not PydanticUndefined:
            value = default.default
            return lambda: value
        return None
    if default is inspect.Parameter.empty or not positional_only:
        return None
    return lambda: default


def _metadata(annotation: Any) -> tuple[Any, ...]:
    if typing.get_origin(annotation) is Annotated:
        return tuple(typing.get_args(annotation)[1:])
    return ()


def _input_schema(fields: dict[str, Any], problems: list[str]) -> dict[str, Any]:
    try:
        model = create_model("Arguments", __config__=ConfigDict(extra="forbid"), **fields)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", PydanticJsonSchemaWarning)
            raw = model.model_json_schema(by_alias=True)
    except Exception as exc:
        problems.append(f"its parameters have no JSON Schema ({_first_line(exc)})")
        return {}
    schema = clean_schema(raw)
    schema.setdefault("properties", {})
    return schema


def _output_schema(signature: inspect.Signature, problems: list[str]) -> dict[str, Any] | None:
    annotation = signature.return_annotation
    while typing.get_origin(annotation) is Annotated:
        annotation = typing.get_args(annotation)[0]
    structured = isinstance(annotation, type) and (
        issubclass(annotation, BaseModel)
        or is_dataclass(annotation)
        or typing_extensions.is_typeddict(annotation)
    )
    if not structured:
        return None
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", PydanticJsonSchemaWarning)
            raw = TypeAdapter(annotation).json_schema(mode="serialization")
    except Exception as exc:
        problems.append(f"return type {_type_name(annotation)} has no JSON Schema ({exc})")
        return None
    return clean_schema(raw)


def _type_name(annotation: Any) -> str:
    return getattr(annotation, "__name__", None) or repr(annotation)


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


# --- JSON arguments → Python call ---------------------------------------------------------------


def _identity(value: Any) -> Any:
    return value


def _to_int(value: Any) -> Any:
    # JSON Schema counts 3.0 as an integer; the function was promised an int.
    return int(value) if type(value) is float else value


def _to_float(value: Any) -> Any:
    return float(value) if type(value) is int else value


_PASS_THROUGH: dict[Any, Callable[[Any], Any]] = {
    Any: _identity,
    object: _identity,
    str: _identity,
    bool: _identity,
    int: _to_int,
    float: _to_float,
}


def _converter(annotation: Any, adapter: TypeAdapter[Any]) -> Callable[[Any], Any]:
    """A JSON value → the annotated Python value; plain scalars skip pydantic on the hot path."""
    direct = _PASS_THROUGH.get(annotation)
    if direct is not None:
        return direct
    if typing.get_origin(annotation) in (Union, types.UnionType):
        args = [a for a in typing.get_args(annotation) if a is not type(None)]
        inner = _PASS_THROUGH.get(args[0]) if len(args) == 1 else None
        if inner is not None:
            return lambda value: None if value is None else inner(value)
    return adapter.validate_python


def _binder(params: tuple[_Param, ...]) -> Bind:
    def bind(arguments: dict[str, Any]) -> tuple[list[Any], dict[str, Any]]:
        positional: list[Any] = []
        keyword: dict[str, Any] = {}
        for param in params:
            if param.name in arguments:
                value = _convert(param, arguments[param.name])
            elif param.fallback is not None:
                value = param.fallback()
            elif param.positional_only:
                raise BindError(param.name, f"Missing required argument `{param.name}`.")
            else:
                continue
            if param.positional_only:
                positional.append(value)
            else:
                keyword[param.name] = value
        return positional, keyword

    return bind


def _convert(param: _Param, value: Any) -> Any:
    try:
        return param.convert(value)
    except ValidationError as exc:
        first = exc.errors()[0]
        path = "".join(
            f"[{part}]" if isinstance(part, int) else f".{part}" for part in first["loc"]
        )
        field = f"{param.name}{path}"
        raise BindError(field, f"Argument `{field}` is invalid: {first['msg']}.") from exc


def schema_from_raw(input_schema: dict[str, Any]) -> dict[str, Any]:
    """Check a hand-written input schema and return it unchanged.

    It must be a valid JSON Schema (Draft 2020-12) whose top level is ``{"type": "object"}``;
    otherwise ``TypeError`` says what is wrong. ``additionalProperties`` is not forced here:
    ``check_exports`` points out an open schema instead of silently changing it.
    """
    if not isinstance(input_schema, dict):
        raise TypeError(f"an input schema must be a dict, not {type(input_schema).__name__}")
    check_schema = draft_2020_12().check_schema  # jsonschema is heavy: imported on first use
    from jsonschema.exceptions import SchemaError

    try:
        check_schema(input_schema)
    except SchemaError as exc:
        where = "/".join(str(part) for part in exc.path) or "the top level"
        raise TypeError(f"invalid input schema at {where}: {exc.message}") from None
    if input_schema.get("type") != "object":
        raise TypeError(
            'an input schema must describe an object of arguments: {"type": "object", '
            f'"properties": ...}}, not type {input_schema.get("type")!r}'
        )
    return input_schema
