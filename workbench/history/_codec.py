"""How a history row is stored and read back: one SQL column per scalar field, the rest as
one JSON document, sealed with a check.

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
import sqlite3
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from workbench.envelope import Envelope
from workbench.history._problems import reason
from workbench.history._record import DETAIL, FIELDS, SCALARS, CallRecord, clean_text, plain_json
from workbench.history._salvage import CHANGED, check, picker, seal

STORED = (*SCALARS, "record")
"""The stored columns of a row, in order: the scalar fields, then the JSON document."""
KINDS = {name: FIELDS[name] for name in SCALARS}
KIND_LIST = list(KINDS.values())
INSERT = (
    f"INSERT OR IGNORE INTO calls ({', '.join(STORED)}) VALUES ({', '.join('?' * len(STORED))})"
)
"""Adds one row; one whose id is taken is left out (``_insert`` says what becomes of it)."""
SELECT = f"SELECT seq, {', '.join(STORED)} FROM calls"
SCHEMA = f"""
CREATE TABLE IF NOT EXISTS calls (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    {", ".join("call_id TEXT UNIQUE" if name == "call_id" else name for name in SCALARS)},
    record TEXT
)
"""
FILTERABLE = ("tool", "status", "kind")
"""The columns a page of rows can be filtered on (each has an index of its own)."""

_SQL_TYPES = {"text": "TEXT", "bool": "INTEGER", "real": "REAL", "integer": "INTEGER"}
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


def _stored_as_they_are(values: list[Any]) -> bool:
    """True when every value goes into its column unchanged (the common case, decided with
    one look at the row's types): empty, whole numbers, ASCII text, finite reals."""
    texts = _texts_and_reals(tuple(map(type, values)))
    if texts is None:
        return False
    strings, reals = texts
    return "".join(strings(values)).isascii() and all(map(math.isfinite, reals(values)))


@functools.lru_cache(maxsize=256)
def _texts_and_reals(
    types: tuple[type, ...],
) -> tuple[Callable[[list[Any]], Sequence[Any]], Callable[[list[Any]], Sequence[Any]]] | None:
    """For rows with these value types: functions that pick their texts and their reals, or
    None when some value is of another type."""
    if not set(types) <= {type(None), int, bool, str, float}:
        return None
    return (
        picker([index for index, kind in enumerate(types) if kind is str]),
        picker([index for index, kind in enumerate(types) if kind is float]),
    )


def _clean_scalars(values: list[Any], problems: list[str]) -> None:
    """Each value in a form its column keeps; what was changed is named in ``problems``."""
    for index, value in enumerate(values):
        kind = type(value)
        # Stored as they are, decided first: the common cases (no surrogate hides in ASCII).
        if value is None or kind is int or kind is bool or (kind is str and value.isascii()):
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


def ensure_indexes(conn: sqlite3.Connection) -> None:
    """The indexes keyset pages and filter values seek in (made once, kept by SQLite)."""
    for column in FILTERABLE:
        conn.execute(f"CREATE INDEX IF NOT EXISTS calls_by_{column} ON calls ({column})")


def migrate(conn: sqlite3.Connection) -> None:
    """Add the columns a file written by an older workbench lacks (they read as null)."""
    present = {row[1] for row in conn.execute("PRAGMA table_info(calls)")}
    for name in SCALARS:
        if name not in present:
            conn.execute(f"ALTER TABLE calls ADD COLUMN {name} {_SQL_TYPES[FIELDS[name]]}")
    if "record" not in present:
        conn.execute("ALTER TABLE calls ADD COLUMN record TEXT")
    conn.commit()


class _Mended(str):
    """Text that was not valid UTF-8 on disk, read with replacement characters."""

    __slots__ = ()


def _mend(raw: bytes) -> str:
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return _Mended(raw.decode("utf-8", "replace"))


def fetch(conn: sqlite3.Connection, sql: str, params: tuple[Any, ...]) -> list[dict[str, Any]]:
    """The rows of one query as dicts; a text that is not UTF-8 is read with replacement
    characters (and shows as ``_Mended``) instead of failing the whole read."""
    try:
        cursor = conn.execute(sql, params)
        rows = cursor.fetchall()
    except sqlite3.OperationalError as exc:
        if getattr(exc, "sqlite_errorcode", None) is not None:
            raise
        # Raised by Python's sqlite3 itself, not SQLite: a text that does not decode.
        conn.text_factory = _mend
        try:
            cursor = conn.execute(sql, params)
            rows = cursor.fetchall()
        finally:
            conn.text_factory = str
    names = [column[0] for column in cursor.description]
    return [dict(zip(names, row, strict=True)) for row in rows]


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


def decode(stored: Mapping[str, Any]) -> tuple[dict[str, Any], str | None]:
    """A stored row as a ``CallRecord``-shaped dict, and what could not be read (or None)."""
    problems: list[str] = []
    raw = stored.get("record")
    detail: Any = {}
    if isinstance(raw, str | bytes):
        try:
            detail = json.loads(raw)
        except (ValueError, RecursionError) as exc:
            problems.append(f"has a record that is not JSON ({reason(exc)})")
    if not isinstance(detail, dict):
        problems.append("has a record that is not an object")
        detail = {}
    problems += [
        f"has a {name} that is not valid UTF-8 (read with replacement characters)"
        for name in STORED
        if isinstance(stored.get(name), _Mended)
    ]
    if check(KIND_LIST, [stored.get(name) for name in SCALARS], raw) == "changed":
        problems.append(f"fails its check ({CHANGED})")
    row: dict[str, Any] = {}
    for name, kind in FIELDS.items():
        value = stored[name] if name in stored else detail.get(name)
        try:
            row[name] = _convert(kind, value)
        except (TypeError, ValueError):
            problems.append(f"has an unreadable {name} ({value!r:.40})")
            row[name] = None
    for name in ("coercions", "events", "artifacts", "warnings"):
        if not isinstance(row[name], list):
            row[name] = []
    if not isinstance(row["receipt"], str):
        row["receipt"] = ""
    canonical = row.get("canonical")
    if row.get("wire") is None and isinstance(canonical, dict):
        try:
            row["wire"] = Envelope.from_canonical(canonical).to_wire()
        except (ValueError, RecursionError) as exc:
            problems.append(f"has a canonical record that is not an envelope ({reason(exc)})")
    if problems:
        row["warnings"] = [*row["warnings"], *problems]
    return row, "; ".join(problems) or None
