"""JSON text of plain data for hot paths: ``json.dumps`` makes a new C encoder on every call,
the functions made here make theirs once."""

from __future__ import annotations

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
