"""Cheap detection on wire strings, for code that must tell success from failure without a model.

Every function here accepts anything (a string, bytes, a dict, garbage) and never raises. They
recognise wire envelopes, canonical records, the legacy nested error shape and the legacy
``[REJECTED]`` / ``[TIMEOUT]`` prefixes.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, TypeVar

from workbench.envelope._wire import is_canonical, nested_error, parse_object, split_legacy

_T = TypeVar("_T")


def _never_raises(
    fallback: Callable[[object], _T],
) -> Callable[[Callable[[object], _T]], Callable[[object], _T]]:
    """Whatever the input does (an ``__eq__`` or ``__str__`` that raises, nesting deep enough
    for ``RecursionError``), the helper answers ``fallback(data)`` instead of raising."""

    def decorate(function: Callable[[object], _T]) -> Callable[[object], _T]:
        @functools.wraps(function)
        def safe(data: object) -> _T:
            try:
                return function(data)
            except Exception:  # the documented promise: a detector answers, it never raises
                return fallback(data)

        return safe

    return decorate


def _no(_: object) -> bool:
    return False


def _nothing(_: object) -> Any:
    return None


def _as_text(data: object) -> str:
    if isinstance(data, str):
        return data
    return f"<{type(data).__name__} that cannot be shown as text>"


@_never_raises(_no)
def is_error(data: object) -> bool:
    """True for a failure envelope in any known shape, including legacy prefixes.

    Examples:
        >>> is_error('{"ok": false, "kind": "timeout", "message": "took too long"}')
        True
        >>> is_error("[TIMEOUT] took too long"), is_error("not json at all")
        (True, False)
    """
    if isinstance(data, str) and split_legacy(data) is not None:
        return True
    obj = parse_object(data)
    if obj is None:
        return False
    if is_canonical(obj):
        return bool(obj["status"] == "error")
    return obj.get("ok") is False or nested_error(obj) is not None


@_never_raises(_no)
def is_success(data: object) -> bool:
    """True for a success envelope in any known shape; garbage is neither success nor error.

    Examples:
        >>> is_success('{"ok": true, "tool": "add", "result": 3}'), is_success("{oops")
        (True, False)
    """
    obj = parse_object(data)
    if obj is None:
        return False
    if is_canonical(obj):
        return bool(obj["status"] == "success")
    return obj.get("ok") is True


@_never_raises(_nothing)
def success_payload(data: object) -> Any:
    """The ``result`` of a success envelope, or None for anything else.

    Examples:
        >>> success_payload('{"ok": true, "tool": "add", "result": 3}')
        3
    """
    obj = parse_object(data)
    if obj is None or not is_success(obj):
        return None
    return obj.get("result")


@_never_raises(_as_text)
def failure_message(data: object) -> str:
    """The ``message`` of a failure envelope; for anything else, the input itself as text.

    Examples:
        >>> failure_message('{"ok": false, "kind": "not_found", "message": "no such file"}')
        'no such file'
    """
    if isinstance(data, str):
        legacy = split_legacy(data)
        if legacy is not None:
            return legacy[1]
    obj = parse_object(data)
    if obj is not None and is_error(obj):
        if is_canonical(obj):
            error = obj.get("error")
            message = error.get("message") if isinstance(error, dict) else None
        else:
            inner = nested_error(obj)
            message = (inner or obj).get("message")
        if isinstance(message, str):
            return message
    if isinstance(data, str):
        return data
    if isinstance(data, bytes | bytearray):
        return data.decode("utf-8", "replace")
    return "" if data is None else str(data)
