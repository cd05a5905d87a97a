"""The history row of one call, defined once: ``CallRecord``.

The writer, the SQLite columns, the decoder, the journal and the DataFrame all read their field
names and kinds from this one class. Scalars get SQL columns of their own (SQL can filter on
them); the structured rest is stored as one JSON document per call.

Every value a call can hold is storable: ``plain_json`` turns anything (lone surrogates, bytes,
NaN, integers too long to print, nesting past any limit, objects with no JSON form, cycles) into
JSON text that encodes as UTF-8, naming each change in a warning. No value can erase a row.
"""

from __future__ import annotations

import dataclasses
import json
import math
import re
from collections.abc import Mapping
from dataclasses import field
from itertools import accumulate
from typing import Any, Literal

from workbench._json_text import dumps_made_once, exact_fast_dumps
from workbench.envelope import escape_surrogates

ColumnKind = Literal["text", "bool", "real", "integer", "json"]

MAX_DEPTH = 100
"""Deepest nesting kept in a stored record; deeper parts are cut and named."""

REPR_LIMIT = 200
"""Longest ``repr`` kept for an object with no JSON form."""


TEXT: Mapping[str, ColumnKind] = {"kind": "text"}
BOOL: Mapping[str, ColumnKind] = {"kind": "bool"}
REAL: Mapping[str, ColumnKind] = {"kind": "real"}
INTEGER: Mapping[str, ColumnKind] = {"kind": "integer"}
JSON: Mapping[str, ColumnKind] = {"kind": "json"}


@dataclasses.dataclass(slots=True)
class CallRecord:
    """One call as the history keeps it. ``call_id`` is workbench's own id (the key); an id a
    model sent is ``model_call_id``. The field order is the DataFrame's column order."""

    call_id: str = field(default="", metadata=TEXT)
    tool: str = field(default="", metadata=TEXT)
    family: str | None = field(default=None, metadata=TEXT)
    state: str | None = field(default=None, metadata=TEXT)
    status: str | None = field(default=None, metadata=TEXT)
    kind: str | None = field(default=None, metadata=TEXT)
    retryable: bool | None = field(default=None, metadata=BOOL)
    summary_text: str | None = field(default=None, metadata=TEXT)
    elapsed_ms: float | None = field(default=None, metadata=REAL)
    queued_ms: float | None = field(default=None, metadata=REAL)
    queued_at: float | None = field(default=None, metadata=REAL)
    started_at: float | None = field(default=None, metadata=REAL)
    ended_at: float | None = field(default=None, metadata=REAL)
    receipt_chars: int | None = field(default=None, metadata=INTEGER)
    truncated: bool | None = field(default=None, metadata=BOOL)
    killed_by: str | None = field(default=None, metadata=TEXT)
    terminated: bool | None = field(default=None, metadata=BOOL)
    denied: bool | None = field(default=None, metadata=BOOL)
    timed_out: bool | None = field(default=None, metadata=BOOL)
    injected: bool | None = field(default=None, metadata=BOOL)
    dry_run: bool | None = field(default=None, metadata=BOOL)
    executed_by: str | None = field(default=None, metadata=TEXT)
    model_call_id: str | None = field(default=None, metadata=TEXT)
    parent_call_id: str | None = field(default=None, metadata=TEXT)
    run_id: str | None = field(default=None, metadata=TEXT)
    message_id: str | None = field(default=None, metadata=TEXT)
    raw_args: Any = field(default=None, metadata=JSON)
    arguments: Any = field(default=None, metadata=JSON)
    coercions: list[str] = field(default_factory=list, metadata=JSON)
    events: list[dict[str, Any]] = field(default_factory=list, metadata=JSON)
    canonical: dict[str, Any] | None = field(default=None, metadata=JSON)
    wire: str | None = field(default=None, metadata=JSON)
    receipt: str = field(default="", metadata=JSON)
    artifacts: list[str] = field(default_factory=list, metadata=JSON)
    warnings: list[str] = field(default_factory=list, metadata=JSON)

    def to_dict(self) -> dict[str, Any]:
        """The record as a plain dict, fields in column order (no copying of nested values)."""
        return {name: getattr(self, name) for name in FIELDS}

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any]) -> CallRecord:
        """A record from a dict such as ``to_dict`` gives; unknown keys are ignored."""
        return cls(**{name: data[name] for name in FIELDS if name in data})


FIELDS: dict[str, ColumnKind] = {
    spec.name: spec.metadata["kind"] for spec in dataclasses.fields(CallRecord)
}
"""Every field of a record and how it is stored, in column order."""

SCALARS: tuple[str, ...] = tuple(name for name, kind in FIELDS.items() if kind != "json")
"""Fields with an SQL column of their own."""

DETAIL: tuple[str, ...] = tuple(name for name, kind in FIELDS.items() if kind == "json")
"""Fields stored together as the row's JSON document."""


# ── values that JSON and UTF-8 cannot hold as they are ──────────────────────────────────────


def clean_text(value: str, warnings: list[str], where: str) -> str:
    """``escape_surrogates``, adding a warning when something was escaped."""
    escaped = escape_surrogates(value)
    if escaped is not value:
        _warn(warnings, f"{where}: lone surrogates stored escaped as \\uXXXX text")
    return escaped


def _warn(warnings: list[str], message: str) -> None:
    if message not in warnings:
        warnings.append(message)


_STRING_LITERAL = re.compile(r'"(?:[^"\\]|\\.)*"')
_NOT_BRACKET = re.compile(r"[^\[\]{}]+")
_STEP = {"[": 1, "{": 1, "]": -1, "}": -1}


def _json_depth(text: str) -> int:
    brackets = _NOT_BRACKET.sub("", _STRING_LITERAL.sub("", text))
    return max(accumulate(map(_STEP.__getitem__, brackets)), default=0)


_encode_plain = dumps_made_once(allow_nan=False)
"""``json.dumps(value, ensure_ascii=False, allow_nan=False)``, its encoder made once. A cycle ends
in RecursionError instead of being looked for in every container: ``plain_json`` catches it and
walks the value carefully."""


def plain_json(value: Any, warnings: list[str], where: str = "value") -> str:
    """``value`` as JSON text that always encodes as UTF-8 and reads back with ``json.loads``.

    Plain data is written as is. Anything else is stored in a clear, bounded form and named in
    ``warnings``: lone surrogates escaped, bytes decoded with ``\\xNN`` escapes, NaN and
    infinities as the strings ``"NaN"``/``"Infinity"``, integers too long to print as their
    size, nesting past ``MAX_DEPTH`` cut, cycles and objects with no JSON form as a short
    ``repr``. Never raises.
    """
    try:
        text = exact_fast_dumps(value)
        if text is None:
            text = _encode_plain(value)
            if not text.isascii():
                text.encode("utf-8")
    except (ValueError, TypeError, RecursionError, UnicodeEncodeError, OverflowError):
        pass  # not plain data: the careful walk below says what it changed
    else:
        if text.count("[") + text.count("{") <= MAX_DEPTH or _json_depth(text) <= MAX_DEPTH:
            return text
    try:
        return json.dumps(_plain(value, warnings, where, 0, set()), ensure_ascii=False)
    except Exception as exc:  # the walk builds plain data only; this is a last resort
        _warn(warnings, f"{where}: could not be stored ({type(exc).__name__})")
        return json.dumps(None)


def _plain(value: Any, warnings: list[str], where: str, depth: int, path: set[int]) -> Any:
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, str):
        return clean_text(value, warnings, where)
    if isinstance(value, int):
        return _plain_int(value, warnings, where)
    if isinstance(value, float):
        if math.isfinite(value):
            return value
        _warn(warnings, f"{where}: NaN or infinity stored as a string")
        return "NaN" if math.isnan(value) else ("Infinity" if value > 0 else "-Infinity")
    if isinstance(value, bytes | bytearray | memoryview):
        _warn(warnings, f"{where}: bytes stored as text (invalid UTF-8 escaped as \\xNN)")
        return bytes(value).decode("utf-8", "backslashreplace")
    if depth >= MAX_DEPTH:
        _warn(warnings, f"{where}: nesting deeper than {MAX_DEPTH} levels was cut")
        return f"<cut: nested deeper than {MAX_DEPTH} levels>"
    if isinstance(value, Mapping | list | tuple | set | frozenset):
        if id(value) in path:
            _warn(warnings, f"{where}: a value that contains itself was cut")
            return "<cut: contains itself>"
        path.add(id(value))
        try:
            if isinstance(value, Mapping):
                return {
                    _plain_key(key, warnings, where): _plain(item, warnings, where, depth + 1, path)
                    for key, item in list(value.items())
                }
            return [_plain(item, warnings, where, depth + 1, path) for item in list(value)]
        finally:
            path.discard(id(value))
    return _plain_object(value, warnings, where, depth, path)


def _plain_int(value: int, warnings: list[str], where: str) -> Any:
    # JSON itself has no integer limit and Python reads long ones back exactly; only an integer
    # too long for Python to print (past ``sys.get_int_max_str_digits()``) is replaced.
    try:
        str(value)
    except ValueError:
        _warn(warnings, f"{where}: an integer too long to write was replaced by its size")
        return f"<integer of {value.bit_length()} bits>"
    return int(value)


def _plain_key(key: Any, warnings: list[str], where: str) -> str:
    if isinstance(key, str):
        return clean_text(key, warnings, where)
    if key is None or isinstance(key, bool | int | float):
        return json.dumps(_plain(key, warnings, where, 0, set()))
    _warn(warnings, f"{where}: a key that is not a string stored as its repr")
    return _bounded_repr(key)


def _plain_object(value: Any, warnings: list[str], where: str, depth: int, path: set[int]) -> Any:
    import pydantic_core

    try:
        converted = pydantic_core.to_jsonable_python(value)
    except Exception:
        converted = None
    else:
        if converted is not value and not isinstance(converted, type(value)):
            return _plain(converted, warnings, where, depth, path)
    _warn(warnings, f"{where}: an object with no JSON form stored as its repr")
    return _bounded_repr(value)


def _bounded_repr(value: Any) -> str:
    try:
        text = repr(value)
    except Exception as exc:
        text = f"<{type(value).__name__} whose repr failed: {type(exc).__name__}>"
    text = escape_surrogates(text)
    return text if len(text) <= REPR_LIMIT else text[: REPR_LIMIT - 1] + "…"
