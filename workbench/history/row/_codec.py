"""How a history row is stored and read back: one value per scalar field (each an SQL column),
the rest as one JSON document, sealed with a check.

``encode`` never raises: a value JSON or UTF-8 cannot hold is stored in a clear, bounded form
and named in the row's warnings. ``decode`` never fails a read: a row whose document cannot be
read keeps its columns and says what was wrong with it.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import math
import operator
import secrets
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from workbench._json_text import loads
from workbench.envelope import Envelope
from workbench.history.row._check import CHANGED, check, picker, seal
from workbench.history.row._record import (
    DETAIL,
    FIELDS,
    SCALARS,
    CallRecord,
    clean_text,
    plain_json,
)

STORED = (*SCALARS, "record")
"""The stored columns of a row, in order: the scalar fields, then the JSON document."""
KINDS = {name: FIELDS[name] for name in SCALARS}
KIND_LIST = list(KINDS.values())
_SCALAR_VALUES = operator.attrgetter(*SCALARS)
_DETAIL_VALUES = operator.attrgetter(*DETAIL)


def encode(record: CallRecord) -> list[Any]:
    """The stored values of one record (its scalar columns, then its JSON document).

    Never raises: a value JSON or UTF-8 cannot hold is stored in a clear, bounded form and
    named in the record's warnings (see ``plain_json``).
    """
    problems: list[str] = []
    values: list[Any] = list(_SCALAR_VALUES(record))
    if not _stored_as_they_are(values):
        _clean_scalars(values, problems)
    detail = dict(zip(DETAIL, _DETAIL_VALUES(record), strict=True))
    detail["wire"] = None  # derived from "canonical" when read, exactly as the call derived it
    document = plain_json(detail, problems, "record")
    if problems:
        # Rare path: re-encode field by field so each warning names its field.
        problems = [p for p in problems if not p.startswith("record:")]
        parts = []
        for name, value in detail.items():
            if name == "warnings":
                continue
            parts.append(f"{json.dumps(name)}: {plain_json(value, problems, name)}")
        kept = [*_strings(record.warnings), *problems]
        parts.append(f'"warnings": {plain_json(kept, [], "warnings")}')
        document = "{" + ", ".join(parts) + "}"
    values.append(seal(KIND_LIST, values, document))
    return values


_SMALLEST, _PAST_LARGEST = -(1 << 63), 1 << 63
"""The integers SQLite stores: 64 bits."""


def _fits(value: int) -> bool:
    return _SMALLEST <= value < _PAST_LARGEST


def _stored_as_they_are(values: list[Any]) -> bool:
    """True when every value goes into its column unchanged (the common case, decided with
    one look at the row's types): empty, integers of 64 bits, ASCII text, finite reals."""
    pickers = _texts_reals_and_integers(tuple(map(type, values)))
    if pickers is None:
        return False
    strings, reals, integers = pickers
    return (
        "".join(strings(values)).isascii()
        and all(map(math.isfinite, reals(values)))
        and all(map(_fits, integers(values)))
    )


_Picker = Callable[[list[Any]], Sequence[Any]]


@functools.lru_cache(maxsize=256)
def _texts_reals_and_integers(types: tuple[type, ...]) -> tuple[_Picker, _Picker, _Picker] | None:
    """For rows with these value types: functions that pick their texts, their reals and
    their integers, or None when some value is of another type."""
    if not set(types) <= {type(None), int, bool, str, float}:
        return None
    return (
        picker([index for index, kind in enumerate(types) if kind is str]),
        picker([index for index, kind in enumerate(types) if kind is float]),
        picker([index for index, kind in enumerate(types) if kind is int]),
    )


def _clean_scalars(values: list[Any], problems: list[str]) -> None:
    """Each value in a form its column keeps; what was changed is named in ``problems``."""
    for index, value in enumerate(values):
        kind = type(value)
        # Stored as they are, decided first: the common cases (no surrogate hides in ASCII).
        if value is None or kind is bool or (kind is str and value.isascii()):
            continue
        if kind is int:
            if not _fits(value):
                values[index] = _past_64_bits(value, SCALARS[index], problems)
            continue
        name = SCALARS[index]
        if isinstance(value, str):
            value = clean_text(value, problems, name)
        elif not isinstance(value, int | float):
            problems.append(f"{name}: a {type(value).__name__} stored as text")
            value = clean_text(str(value), problems, name)
        elif isinstance(value, float) and not math.isfinite(value):
            value = None
        values[index] = value


def _past_64_bits(value: int, name: str, problems: list[str]) -> float | str:
    """An integer SQLite cannot store, in a form it can: a real for a real column, else text."""
    if KINDS[name] == "real":
        try:
            real = float(value)
        except OverflowError:
            pass  # too large even for a real: stored as text below
        else:
            if real != value:
                problems.append(f"{name}: an integer past 64 bits stored as the nearest real")
            return real
    problems.append(f"{name}: an integer past 64 bits stored as text")
    return str(value) if len(str(value)) <= 100 else f"<integer of {value.bit_length()} bits>"


def keyed(record: CallRecord) -> tuple[str, list[Any]]:
    """The row's key and stored values; a record without an id gets one, so it can never
    replace another row."""
    if not record.call_id:
        record = dataclasses.replace(record, call_id=f"row_{secrets.token_hex(8)}")
    return record.call_id, encode(record)


def _strings(value: Any) -> list[str]:
    if not isinstance(value, list | tuple):
        return [] if value is None else [str(value)]
    return [item if isinstance(item, str) else repr(item) for item in value]


class Mended(str):
    """Text that was not valid UTF-8 on disk, read with replacement characters."""

    __slots__ = ()


def mend(raw: bytes) -> str:
    """Text from bytes that may not be UTF-8: replacement characters, and shown as ``Mended``."""
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return Mended(raw.decode("utf-8", "replace"))


def reason(exc: BaseException | None) -> str:
    """What went wrong, in words: an OS error's own, else the exception's."""
    if exc is None:
        return "unknown error"
    if isinstance(exc, OSError) and exc.strerror:
        return exc.strerror.lower()
    return str(exc) or type(exc).__name__


def unanswered(row: Mapping[str, Any]) -> bool:
    """True for an imported call whose transcript holds no result (its import rule says so)."""
    return row.get("state") == "imported" and any(
        isinstance(event, dict) and event.get("rule") == "no_result"
        for event in row.get("events") or ()
    )


def _convert(kind: str, value: Any) -> Any:
    if value is None:
        return None
    if kind == "bool":
        return bool(int(value))
    if kind == "real":
        return float(value)
    if kind == "integer":
        return int(value)
    if kind == "text":
        return value if isinstance(value, str) else str(value)
    return value


_BOOLS = tuple(name for name, kind in KINDS.items() if kind == "bool")
_STORED_SCALARS = operator.itemgetter(*SCALARS)
_TYPES_READ_AS_THEY_ARE = {
    "text": (str,),
    "bool": (int,),
    "real": (float,),
    "integer": (int,),
}


@functools.lru_cache(maxsize=256)
def _types_read_as_they_are(types: tuple[type, ...]) -> bool:
    """True when values of these types, read from the scalar columns in order, are each of
    its column's type already (or empty): only the booleans, stored as 0 and 1, change."""
    return all(
        kind is type(None) or kind in _TYPES_READ_AS_THEY_ARE[column]
        for kind, column in zip(types, KIND_LIST, strict=True)
    )


_SELECTED = len(STORED) + 1  # seq, then the stored columns

_WIRES: dict[str, str] = {}
"""The wire text derived for a document read before, by the document's text (a row read again,
by ``get`` after ``rows``, or page after page, derives it once)."""
WIRES_KEPT = 512
WIRE_KEY_LIMIT = 16_384
"""Longest document whose wire is kept: the texts kept stay a few MB at the most."""


def _wire_of(canonical: dict[str, Any], document: object) -> str:
    """The wire form of a row's canonical record, derived exactly as the call derived it; the
    same ``document`` gives the same canonical record, so its wire is derived once."""
    key = document if isinstance(document, str) and len(document) <= WIRE_KEY_LIMIT else None
    if key is not None and (known := _WIRES.get(key)) is not None:
        return known
    wire = Envelope.from_canonical(canonical).to_wire()
    if key is not None:
        if len(_WIRES) >= WIRES_KEPT:
            _WIRES.clear()  # a bound, not a policy: the next reads derive theirs again
        _WIRES[key] = wire
    return wire


def decode(stored: Mapping[str, Any]) -> tuple[dict[str, Any], str | None]:
    """A stored row as a ``CallRecord``-shaped dict, and what could not be read (or None)."""
    problems: list[str] = []
    raw = stored.get("record")
    detail: Any = {}
    if isinstance(raw, str | bytes):
        try:
            detail = loads(raw)
        except (ValueError, RecursionError) as exc:
            problems.append(f"has a record that is not JSON ({reason(exc)})")
    if not isinstance(detail, dict):
        problems.append("has a record that is not an object")
        detail = {}
    if Mended in set(map(type, stored.values())):
        problems += [
            f"has a {name} that is not valid UTF-8 (read with replacement characters)"
            for name in STORED
            if isinstance(stored.get(name), Mended)
        ]
    try:
        scalars = list(_STORED_SCALARS(stored))
        whole = True
    except KeyError:  # a row from elsewhere, some columns missing: read them from its document
        scalars, whole = [stored.get(name) for name in SCALARS], False
    if check(KIND_LIST, scalars, raw) == "changed":
        problems.append(f"fails its check ({CHANGED})")
    row: dict[str, Any] = dict(zip(SCALARS, scalars, strict=True))
    if not (whole and _types_read_as_they_are(tuple(map(type, scalars)))):
        for name, kind in KINDS.items():
            value = stored[name] if name in stored else detail.get(name)
            try:
                row[name] = _convert(kind, value)
            except (TypeError, ValueError):
                problems.append(f"has an unreadable {name} ({value!r:.40})")
                row[name] = None
    else:
        for name in _BOOLS:
            value = row[name]
            if value is not None:
                row[name] = bool(value)
    if len(stored) == _SELECTED:  # the columns a SELECT reads: no detail among them
        row.update(zip(DETAIL, map(detail.get, DETAIL), strict=True))
    else:
        for name in DETAIL:
            row[name] = stored[name] if name in stored else detail.get(name)
    for name in ("coercions", "events", "artifacts", "warnings"):
        if not isinstance(row[name], list):
            row[name] = []
    if not isinstance(row["receipt"], str):
        row["receipt"] = ""
    canonical = row.get("canonical")
    if row.get("wire") is None and isinstance(canonical, dict):
        try:
            row["wire"] = _wire_of(canonical, raw)
        except (ValueError, RecursionError) as exc:
            problems.append(f"has a canonical record that is not an envelope ({reason(exc)})")
    if problems:
        row["warnings"] = [*row["warnings"], *problems]
    return row, "; ".join(problems) or None
