"""JSON text of plain data for hot paths: ``json.dumps`` makes a new C encoder on every call,
the functions made here make theirs once."""

from __future__ import annotations

import importlib
import itertools
import json
from collections.abc import Callable
from typing import Any


def _no_json_form(value: object) -> object:
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


def _c_encoder(*, allow_nan: bool) -> Callable[[Any, int], list[str]] | None:
    """The standard library's C encoder, compact and ``ensure_ascii=False``, made once: it
    returns a value's JSON text as a list of pieces. None without the _json accelerator."""
    make = getattr(json.encoder, "c_make_encoder", None)
    quote = getattr(json.encoder, "c_encode_basestring", None)
    if make is None or quote is None:
        return None
    encoder: Callable[[Any, int], list[str]] = make(
        None, _no_json_form, quote, None, ": ", ", ", False, False, allow_nan
    )
    return encoder


def dumps_made_once(*, allow_nan: bool) -> Callable[[Any], str]:
    """``json.dumps(value, ensure_ascii=False, check_circular=False, allow_nan=allow_nan)`` as a
    function whose encoder is made once, here, instead of on every call.

    It keeps no state between calls, so any thread may share it. A value with no JSON form
    raises ``TypeError``, NaN and the infinities raise ``ValueError`` unless ``allow_nan``, and
    a cycle raises ``RecursionError`` (nothing looks for cycles in every container)."""
    chunks = _c_encoder(allow_nan=allow_nan)
    if chunks is None:  # a Python built without the _json accelerator
        encoder = json.JSONEncoder(ensure_ascii=False, allow_nan=allow_nan, check_circular=False)
        return encoder.encode

    def dumps(value: Any) -> str:
        return "".join(chunks(value, 0))

    return dumps


_pieces_of = _c_encoder(allow_nan=False)
_quoted: Callable[[str], str] | None = getattr(json.encoder, "c_encode_basestring", None)


def json_pieces(value: Any) -> list[str] | None:
    """``json.dumps(value, ensure_ascii=False, allow_nan=False)`` as pieces to be written one
    after another: a dict with string keys or a list is encoded item by item, so a huge string
    in it is one piece and never joined into a second copy (the encoder joins what it makes).
    None when ``value`` is not plain data (an object with no JSON form, NaN, a cycle, nesting
    past the recursion limit) or the standard library has no C encoder."""
    if _pieces_of is None or _quoted is None:
        return None
    try:
        pieces: list[str] = []
        if isinstance(value, dict) and all(type(key) is str for key in value):
            for key, item in value.items():
                pieces += [", " if pieces else "{", _quoted(key), ": ", _one(item)]
            return [*pieces, "}"] if pieces else ["{}"]
        if isinstance(value, list):
            for item in value:
                pieces += [", " if pieces else "[", _one(item)]
            return [*pieces, "]"] if pieces else ["[]"]
        return [_one(value)]
    except (TypeError, ValueError, RecursionError, OverflowError):
        return None


def _one(value: Any) -> str:
    if type(value) is str:
        return _quoted(value)  # type: ignore[misc]  # json_pieces checked it is there
    return "".join(_pieces_of(value, 0))  # type: ignore[misc]


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
    if _orjson is None or _surely_long(value):
        return None
    try:
        text: bytes = _orjson.dumps(value)
        if len(text) > CHECKED_TEXT_LIMIT or _orjson.loads(text) != value:
            return None
    except (TypeError, ValueError, RecursionError):
        return None  # orjson's errors subclass these; the standard path decides
    return text.decode("utf-8")


_LOOKED_AT = 64  # items of a container looked at, so the look stays cheap beside the encoding


def _surely_long(value: Any) -> bool:
    """True when a string or bytes at the top of ``value``, or among the first ``_LOOKED_AT``
    items one level into it, is past ``CHECKED_TEXT_LIMIT`` characters: orjson would be asked
    in vain, and would hold several copies of the text for a moment."""
    if isinstance(value, str | bytes):
        return len(value) > CHECKED_TEXT_LIMIT
    if isinstance(value, dict):
        inner: Any = value.values()
    elif isinstance(value, list | tuple):
        inner = value
    else:
        return False
    return any(
        isinstance(item, str | bytes) and len(item) > CHECKED_TEXT_LIMIT
        for item in itertools.islice(inner, _LOOKED_AT)
    )


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
