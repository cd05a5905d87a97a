"""A run's Parquet rows built straight from its imported records, without a history between.

The values are the ones ``_parquet.write_run`` reads back from a history holding the same
records, exactly. A record of plain values (text without lone surrogates, finite reals, whole
numbers SQLite keeps as integers, a document the history's encoder writes unchanged, a receipt,
rule and verdict without NUL) is taken apart here, in Python: its JSON fields written compactly,
as SQLite's ``->`` gives them. Any other record (one that storing changes, and names in its
warnings) goes through the real thing, one row at a time: a history in memory stores it and it
is read back as ``write_run`` reads it.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Iterator
from typing import Any

from workbench.envelope import escape_surrogates
from workbench.history import FIELDS, SCALARS, CallRecord, History, plain_json
from workbench.study._parquet import BATCH_ROWS, IMPORTED, JSON_COLUMNS, history_rows

_DETAIL = tuple(name for name, kind in FIELDS.items() if kind == "json" and name != "wire")
_COMPACT = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode
_INT64 = range(-(2**63), 2**63)


def _plain_scalar(kind: str, value: Any) -> bool:
    """True when SQLite keeps ``value`` in its column as it is and reads it back unchanged."""
    if value is None:
        return True
    if kind == "text":
        return type(value) is str and (value.isascii() or escape_surrogates(value) is value)
    if kind == "bool":
        return type(value) is bool
    if kind == "real":
        return type(value) is float and math.isfinite(value)
    return type(value) is int and value in _INT64


_KINDS = [FIELDS[name] for name in SCALARS]


def plain_row(record: CallRecord) -> tuple[Any, ...] | None:
    """The Parquet values of ``record`` after ``seq`` (up to ``source``'s columns), or None
    when storing would change it (then only the history's own path gives them exactly)."""
    scalars = [getattr(record, name) for name in SCALARS]
    if not all(map(_plain_scalar, _KINDS, scalars)):
        return None
    problems: list[str] = []
    # the document the history would store, checked as its encoder checks it (one encoding)
    plain_json({name: getattr(record, name) for name in _DETAIL} | {"wire": None}, problems)
    if problems:
        return None
    event: Any = next(
        (e for e in record.events if isinstance(e, dict) and e.get("type") == IMPORTED), {}
    )
    receipt = record.receipt if isinstance(record.receipt, str) else None
    texts = (receipt, event.get("rule"), event.get("preflight"))
    if any(type(text) is not str or "\x00" in text for text in texts if text is not None):
        return None  # SQLite's ->> ends such a text at its NUL, or gives it as another type
    columns = [
        None if getattr(record, name) is None else _COMPACT(getattr(record, name))
        for name in JSON_COLUMNS
    ]
    return (*scalars, event.get("rule"), event.get("preflight"), receipt, *columns)


def _stored_row(record: CallRecord) -> tuple[Any, ...]:
    """The history's own path for a record ``plain_row`` leaves: stored alone in a history in
    memory and read back as ``write_run`` reads it."""
    history = History(None)
    try:
        history.write([record])  # a row SQLite will not take is held, and warns
        [row] = history_rows(history)
    finally:
        history.close()
    return tuple(row[1:])  # its seq is the run's, not this history's


def record_batches(records: Iterable[CallRecord]) -> Iterator[list[tuple[Any, ...]]]:
    """The rows of ``records`` (``seq`` from 1, in order) in batches of ``BATCH_ROWS``."""
    batch: list[tuple[Any, ...]] = []
    for seq, record in enumerate(records, start=1):
        values = plain_row(record)
        batch.append((seq, *(_stored_row(record) if values is None else values)))
        if len(batch) >= BATCH_ROWS:
            yield batch
            batch = []
    if batch:
        yield batch
