"""JSON text of plain data for hot paths: ``json.dumps`` makes a new C encoder on every call,
the functions made here make theirs once."""

from __future__ import annotations

import importlib
import json
from collections.abc import Callable
from typing import Any


def _no_json_form(value: object) -> object:
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


def dumps_made_once(*, allow_nan: bool) -> Callable[[Any], str]:
    """``json.dumps(value, ensure_ascii=False, check_circular=False, allow_nan=allow_nan)`` as a
    function whose encoder is made once, here, instead of on every call.

    It keeps no state between calls, so any thread may share it. A value with no JSON form
    raises ``TypeError``, NaN and the infinities raise ``ValueError`` unless ``allow_nan``, and
    a cycle raises ``RecursionError`` (nothing looks for cycles in every container)."""
    make = getattr(json.encoder, "c_make_encoder", None)
    quote = getattr(json.encoder, "c_encode_basestring", None)
    if make is None or quote is None:  # a Python built without the _json accelerator
        encoder = json.JSONEncoder(ensure_ascii=False, allow_nan=allow_nan, check_circular=False)
        return encoder.encode
    chunks = make(None, _no_json_form, quote, None, ": ", ", ", False, False, allow_nan)

    def dumps(value: Any) -> str:
        return "".join(chunks(value, 0))

    return dumps


try:  # an optional accelerator: a C library several times faster at both ends
    _orjson: Any = importlib.import_module("orjson")
except ImportError:  # pragma: no cover - the stdlib encoder and decoder serve alone
    _orjson = None

CHECKED_TEXT_LIMIT = 1 << 20
"""Largest text (in bytes) the accelerated writer hands back: it proves its answer by reading
the text back, which holds a second copy of the value for a moment."""


def exact_fast_dumps(value: Any) -> str | None:
    """``value`` as compact JSON text by ``orjson``, when it is installed and the text reads back
    equal to ``value`` (so the standard encoder would have written the same data); None
    otherwise: orjson is missing, refuses the value (a key that is not a string, an integer past
    64 bits, a lone surrogate), writes something else for it (NaN as null, a tuple as a list, a
    date as a string) or the text is past ``CHECKED_TEXT_LIMIT``. Never raises."""
    if _orjson is None:
        return None
    try:
        text: bytes = _orjson.dumps(value)
        if len(text) > CHECKED_TEXT_LIMIT or _orjson.loads(text) != value:
            return None
    except (TypeError, ValueError, RecursionError):
        return None  # orjson's errors subclass these; the standard path decides
    return text.decode("utf-8")


_DIGITS = bytes(1 if ord("0") <= byte <= ord("9") else 0 for byte in range(256))
_LONG_NUMBER = b"\x01" * 19


def _has_long_number(text: str) -> bool:
    """True when ``text`` holds 19 ASCII digits in a row: perhaps an integer past 64 bits,
    which orjson would read as a real (a shorter one is always within 64 bits). Digits inside a
    string count too; they only cost the standard decoder's time. (A byte table finds them
    several times faster than a regular expression.)"""
    return _LONG_NUMBER in text.encode("utf-8", "surrogatepass").translate(_DIGITS)


def loads(text: str | bytes) -> Any:
    """``json.loads(text)``, by ``orjson`` where it is installed and reads the text (valid JSON
    with no number of 19 digits or more and no lone surrogate), else by the standard decoder,
    which also reads ``NaN``, long integers, lone surrogates and bytes: the same answer either
    way, and the standard decoder's errors."""
    if _orjson is not None and isinstance(text, str) and not _has_long_number(text):
        try:
            return _orjson.loads(text)
        except ValueError:
            pass  # not for orjson: the standard decoder reads it or says why not
    return json.loads(text)
