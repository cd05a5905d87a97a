"""The check on every stored row: a CRC-32 of its values, appended to its JSON document.

``seal`` adds it as a row is written; ``check`` says whether a row read back (by SQLite, or
from loose pages by the salvage) still holds exactly those values, so a value changed on disk
never passes for the original. ``with_warnings`` gives a document more warnings (its old check
dropped, to be sealed again).
"""

from __future__ import annotations

import contextlib
import functools
import json
import operator
import re
import zlib
from collections.abc import Callable, Sequence
from typing import Any, Literal

from workbench.history.row._record import plain_json

_CHECK_KEY = ', "check": '
_WHOLE_NUMBERS = frozenset({"integer", "bool"})


def _canonical(kind: str, value: Any) -> bytes:
    """The value as SQLite will give it back from a column of ``kind`` (its type affinity
    applied), so a row checks the same before it is written and after it is read."""
    if value is None:
        return b"n"
    if isinstance(value, str):
        number = _number(value) if kind != "text" else None
        if number is None:
            return b"s" + value.encode("utf-8", "surrogatepass")
        value = number
    if isinstance(value, bytes):
        return b"b" + value
    if kind == "text":
        if isinstance(value, bool | int):
            return b"s%d" % value
        # SQLite's "%!.15g": at least one digit after the point, and no negative zero.
        mantissa, e, exponent = f"{value + 0.0:.15g}".partition("e")
        if mantissa.lstrip("-").isdigit():
            mantissa += ".0"
        return b"s" + f"{mantissa}{e}{exponent}".encode()
    if kind == "real":
        try:
            return b"f" + float(value).hex().encode()
        except OverflowError:
            return b"s%d" % value
    if isinstance(value, float):
        if value.is_integer() and abs(value) < 2**63:
            return b"i%d" % int(value)
        return b"f" + value.hex().encode()
    return b"i%d" % int(value)


_INTEGER = re.compile(r"\s*[+-]?\d+\s*")
_REAL = re.compile(r"\s*[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?\s*")


def _number(text: str) -> int | float | None:
    """The number a numeric column turns ``text`` into, as SQLite does; None if it stays text."""
    if _INTEGER.fullmatch(text) and -(2**63) <= int(text) < 2**63:
        return int(text)
    if _REAL.fullmatch(text):
        return float(text)
    return None


def digest(kinds: Sequence[str], scalars: Sequence[Any], document: str) -> int:
    """CRC-32 of a row's scalar values (read as columns of ``kinds``) and its JSON document."""
    # Each value as ``_canonical`` has it, run together without lengths: the check is against
    # damage on disk, not against forgery. A row whose values all pair commonly with their
    # columns is written by its plan (below) in one format; UTF-8 encodes a text the same whole
    # or in pieces. Any other row takes ``_canonical`` value by value.
    plan = _plan(tuple(kinds), tuple(map(type, scalars)))
    if plan is None:
        return _digest_of(kinds, scalars, document)
    template, pick, reals = plan
    values = list(pick(scalars))
    for slot in reals:
        values[slot] = values[slot].hex()
    scalar_crc = zlib.crc32((template % tuple(values)).encode("utf-8", "surrogatepass"))
    return zlib.crc32(document.encode("utf-8", "surrogatepass"), scalar_crc)


_Plan = tuple[str, Callable[[Sequence[Any]], Sequence[Any]], tuple[int, ...]]


@functools.lru_cache(maxsize=256)
def _plan(kinds: tuple[str, ...], types: tuple[type, ...]) -> _Plan | None:
    """How to write the values of a row with these column kinds and value types, as
    ``_canonical`` would: a %-format, the function that picks the values it takes (every one
    but the empty ones), and which of those are reals, written in hex; None when some value
    needs ``_canonical`` itself."""
    if len(kinds) != len(types):
        return None
    pieces: list[str] = []
    taken: list[int] = []
    reals: list[int] = []
    for index, (kind, kind_of) in enumerate(zip(kinds, types, strict=True)):
        if kind_of is type(None):
            pieces.append("n")
            continue
        if kind_of is str and kind == "text":
            pieces.append("s%s")
        elif (kind_of is int or kind_of is bool) and kind in _WHOLE_NUMBERS:
            pieces.append("i%d")
        elif kind_of is float and kind == "real":
            pieces.append("f%s")
            reals.append(len(taken))
        else:
            return None
        taken.append(index)
    return "\0".join(pieces), picker(taken), tuple(reals)


def picker(indexes: list[int]) -> Callable[[Sequence[Any]], Sequence[Any]]:
    """A function that picks the values at ``indexes`` out of a row, as a sequence."""
    if not indexes:
        return lambda row: ()
    if len(indexes) == 1:
        only = indexes[0]
        return lambda row: (row[only],)
    return operator.itemgetter(*indexes)


def _digest_of(kinds: Sequence[str], scalars: Sequence[Any], document: str) -> int:
    """``digest`` by its definition: every value through ``_canonical``."""
    parts = [_canonical(kind, value) for kind, value in zip(kinds, scalars, strict=True)]
    return zlib.crc32(document.encode("utf-8", "surrogatepass"), zlib.crc32(b"\0".join(parts)))


def seal(kinds: Sequence[str], scalars: Sequence[Any], document: str) -> str:
    """``document`` (a JSON object) with the check of the whole row added as its last key."""
    return f"{document[:-1]}{_CHECK_KEY}{digest(kinds, scalars, document)}}}"


CheckResult = Literal["ok", "changed", "unchecked"]


def check(kinds: Sequence[str], scalars: Sequence[Any], document: object) -> CheckResult:
    """Whether a row read back holds the values it was sealed with: "ok", "changed", or
    "unchecked" (a row written before rows carried a check, or one whose check is gone)."""
    opened = unsealed(document)
    if opened is None:
        return "unchecked"
    plain, stated = opened
    return "ok" if digest(kinds, scalars, plain) == stated else "changed"


def unsealed(document: object) -> tuple[str, int] | None:
    """A sealed document as it was before its check was added, and the check; or None."""
    if not isinstance(document, str) or not document.endswith("}"):
        return None
    at = document.rfind(_CHECK_KEY)
    stated = document[at + len(_CHECK_KEY) : -1] if at >= 0 else ""
    if not (stated.isascii() and stated.isdigit()):
        return None
    return document[:at] + "}", int(stated)


CHANGED = "its values do not match the check written with them: some were changed on disk"


def with_warnings(document: object, warnings: list[str]) -> str:
    """A row's JSON document with ``warnings`` added to its own (its old check dropped, to be
    sealed again); a document that is no longer a JSON object is kept whole as text beside
    them."""
    raw = document.decode("utf-8", "replace") if isinstance(document, bytes) else document
    detail: Any = None
    if isinstance(raw, str):
        opened = unsealed(raw)
        with contextlib.suppress(ValueError, RecursionError):  # kept as text just below
            detail = json.loads(raw if opened is None else opened[0])
    if not isinstance(detail, dict):
        detail = {"unreadable_record": raw if isinstance(raw, str) else None}
        warnings = [*warnings, "its record was not a JSON object; kept as unreadable_record"]
    earlier = detail.get("warnings")
    detail["warnings"] = [*(earlier if isinstance(earlier, list) else []), *warnings]
    return plain_json(detail, [])
