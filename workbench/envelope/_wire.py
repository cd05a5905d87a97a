"""The wire surface: the JSON string a model or a client reads, and every known shape read back.

Shapes read by ``from_wire``:

- a success ``{"ok": true, "tool", "result", "warnings"}``
- a failure ``{"ok": false, "kind", "message", "field", "expected", "tool", "retryable"}``
- a legacy nested failure ``{"ok": false, "error": {"kind", "message", "details"}}``
- a canonical record ``{"tool_name", "status", "summary_text", "result", "error"}``
- legacy strings starting ``[REJECTED]`` or ``[TIMEOUT]``
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from workbench.envelope._errors import ErrorKind, ToolError, as_kind, known_kind

if TYPE_CHECKING:
    from workbench.envelope._envelope import Envelope

LEGACY_PREFIXES: dict[str, ErrorKind] = {
    "[REJECTED]": ErrorKind.REJECTED,
    "[TIMEOUT]": ErrorKind.TIMEOUT,
}

_FAILURE_OPTIONAL = ("field", "expected", "details", "recovery_hint")


def to_wire(envelope: Envelope) -> str:
    """Serialise to the wire JSON string; optional keys are omitted when unset."""
    wire: dict[str, Any]
    if envelope.error is None:
        wire = {"ok": True}
        if envelope.tool_name:
            wire["tool"] = envelope.tool_name
        wire["result"] = envelope.result
        if envelope.warnings:
            wire["warnings"] = list(envelope.warnings)
    else:
        error = envelope.error
        wire = {"ok": False, "kind": error.kind.value, "message": error.message}
        for name in ("field", "expected"):
            value = getattr(error, name)
            if value is not None:
                wire[name] = value
        if envelope.tool_name:
            wire["tool"] = envelope.tool_name
        wire["retryable"] = error.retryable
        for name in ("details", "recovery_hint"):
            value = getattr(error, name)
            if value is not None:
                wire[name] = value
    if envelope.killed_by is not None:
        wire["killed_by"] = envelope.killed_by
    # Lone surrogates (a model's "\\ud800" decoded by json.loads) are written as JSON escapes:
    # the string stays valid UTF-8 and reads back to the same value.
    return escape_surrogates(json.dumps(wire, ensure_ascii=False))


def split_legacy(text: str) -> tuple[ErrorKind, str] | None:
    """For a legacy ``[REJECTED]`` / ``[TIMEOUT]`` string: the kind its prefix names and the
    message after it; None for any other text."""
    stripped = text.lstrip()
    for prefix, kind in LEGACY_PREFIXES.items():
        if stripped.startswith(prefix):
            return kind, stripped[len(prefix) :].strip()
    return None


def parse_object(data: object) -> dict[str, Any] | None:
    """``data`` as a JSON object, or None when it is not one. Never raises."""
    if isinstance(data, dict):
        return data
    if isinstance(data, bytes | bytearray):
        try:
            data = data.decode("utf-8")
        except UnicodeDecodeError:
            return None
    if not isinstance(data, str) or not data.strip().startswith("{"):
        return None
    try:
        parsed = json.loads(data)
    except (ValueError, RecursionError):
        return None
    return parsed if isinstance(parsed, dict) else None


def nested_error(obj: dict[str, Any]) -> dict[str, Any] | None:
    """The inner error of the legacy nested shape, when ``obj`` has that shape."""
    inner = obj.get("error")
    if (
        obj.get("ok", False) is False
        and "status" not in obj
        and isinstance(inner, dict)
        and (isinstance(inner.get("message"), str) or isinstance(inner.get("kind"), str))
    ):
        return inner
    return None


def is_canonical(obj: dict[str, Any]) -> bool:
    """True when ``obj`` looks like a canonical record."""
    return obj.get("status") in ("success", "error") and "tool_name" in obj


def read_wire(data: object) -> dict[str, Any]:
    """Read any known envelope shape into the fields of an Envelope; ``ValueError`` (with a
    message) for anything else, whatever the input. ``Envelope.from_wire`` builds on it."""
    try:
        return _from_wire(data)
    except ValueError:
        raise
    except Exception as exc:  # odd input (deep nesting, objects with odd str) still gets a message
        raise ValueError(f"not a tool envelope: {type(exc).__name__} while reading it") from None


def _from_wire(data: object) -> dict[str, Any]:
    if isinstance(data, str | bytes):
        text = data.decode("utf-8", "replace") if isinstance(data, bytes) else data
        legacy = split_legacy(text)
        if legacy is not None:
            kind, message = legacy
            return _failure(kind.value, message or kind.meaning)
    obj = parse_object(data)
    if obj is None:
        raise ValueError("not a tool envelope: expected a JSON object")
    if is_canonical(obj):
        return obj
    inner = nested_error(obj)
    if inner is not None:
        details = inner.get("details")
        return _failure(
            str(inner.get("kind") or "execution_error"),
            str(inner.get("message") or inner.get("kind") or "tool failed"),
            tool=_tool(obj),
            details=details if isinstance(details, dict) else None,
            retryable=inner.get("retryable"),
            recovery_hint=inner.get("recovery_hint"),
        )
    ok = obj.get("ok")
    if ok is True:
        warnings = obj.get("warnings") or []
        return {
            "tool_name": _tool(obj),
            "status": "success",
            "result": obj.get("result"),
            "warnings": tuple(str(w) for w in warnings) if isinstance(warnings, list) else (),
            "killed_by": obj.get("killed_by"),
        }
    if ok is False:
        return _failure(
            str(obj.get("kind") or "execution_error"),
            str(obj.get("message") or "tool failed"),
            tool=_tool(obj),
            retryable=obj.get("retryable"),
            killed_by=obj.get("killed_by"),
            **{name: obj.get(name) for name in _FAILURE_OPTIONAL},
        )
    raise ValueError("not a tool envelope: no 'ok', 'status' or nested 'error' key")


def _tool(obj: dict[str, Any]) -> str:
    tool = obj.get("tool")
    return tool if isinstance(tool, str) else ""


def _failure(
    kind: str,
    message: str,
    *,
    tool: str = "",
    killed_by: Any = None,
    **fields: Any,
) -> dict[str, Any]:
    details = fields.get("details")
    if not known_kind(kind):
        # A foreign kind is kept, not lost: the nearest known kind carries it in details.
        details = {**(details or {}), "original_kind": kind}
        kind = ErrorKind.EXECUTION_ERROR.value
    error = ToolError(
        kind=as_kind(kind),
        message=message,
        field=_str_or_none(fields.get("field")),
        expected=_str_or_none(fields.get("expected")),
        details=details if isinstance(details, dict) else None,
        recovery_hint=_str_or_none(fields.get("recovery_hint")),
        retryable=fields.get("retryable") if isinstance(fields.get("retryable"), bool) else None,
    )
    return {"tool_name": tool, "status": "error", "error": error, "killed_by": killed_by}


def _str_or_none(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def wire_schema() -> dict[str, Any]:
    """The JSON Schema every wire string workbench writes validates against.

    Examples:
        >>> schema = wire_schema()
        >>> schema["title"], [choice["$ref"] for choice in schema["oneOf"]]
        ('workbench wire envelope', ['#/$defs/success', '#/$defs/failure'])
        >>> schema["$defs"]["failure"]["required"]
        ['ok', 'kind', 'message', 'retryable']
    """
    from importlib.resources import files

    text = files("workbench").joinpath("schemas/wire.schema.json").read_text(encoding="utf-8")
    schema: dict[str, Any] = json.loads(text)
    return schema


def escape_surrogates(text: str) -> str:
    """``text`` with every lone surrogate written as the six characters ``\\udXXX``, so it
    encodes as UTF-8; text without surrogates comes back unchanged (the same object)."""
    if text.isascii():
        return text  # the common case, decided without encoding the text
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-8", "backslashreplace").decode("utf-8")
    return text
