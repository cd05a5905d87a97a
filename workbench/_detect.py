"""Cheap detection on wire strings, for code that must tell success from failure without a model.

Every function here accepts anything (a string, bytes, a dict, garbage) and never raises. They
recognise seed 000's envelopes, seed 001 canonical records, seed 003's legacy nested error shape
and the legacy ``[REJECTED]`` / ``[TIMEOUT]`` prefixes.
"""

from __future__ import annotations

from typing import Any

from workbench._wire import is_canonical, nested_error, parse_object, split_legacy


def is_error(data: object) -> bool:
    """True for a failure envelope in any known shape, including legacy prefixes."""
    if isinstance(data, str) and split_legacy(data) is not None:
        return True
    obj = parse_object(data)
    if obj is None:
        return False
    if is_canonical(obj):
        return bool(obj["status"] == "error")
    return obj.get("ok") is False or nested_error(obj) is not None


def is_success(data: object) -> bool:
    """True for a success envelope in any known shape; garbage is neither success nor error."""
    obj = parse_object(data)
    if obj is None:
        return False
    if is_canonical(obj):
        return bool(obj["status"] == "success")
    return obj.get("ok") is True


def success_payload(data: object) -> Any:
    """The ``result`` of a success envelope, or None for anything else."""
    obj = parse_object(data)
    if obj is None or not is_success(obj):
        return None
    return obj.get("result")


def failure_message(data: object) -> str:
    """The ``message`` of a failure envelope; for anything else, the input itself as text."""
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
