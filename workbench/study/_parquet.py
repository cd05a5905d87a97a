"""A history's rows as one run's Parquet partition: one schema for every run of a dataset.

The columns are the row's ``seq`` (its order within the run), the history's scalar columns
(SQL types), then what an analysis of imported
runs reads most (``rule``, ``preflight``, the ``receipt`` text), then the structured fields as
JSON text (``raw_args``, ``arguments``, ``canonical``, ``warnings``), then where the run came
from (``format``, ``source``). The run itself is the partition directory ``run=<key>``, which
readers turn back into a ``run`` column.
"""

from __future__ import annotations

import json
import re
import sqlite3
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from workbench._extras import require
from workbench.history import FIELDS, SCALARS

if TYPE_CHECKING:
    from workbench.history import History

BATCH_ROWS = 50_000
"""Rows per Parquet row group, and the most rows held in memory at once while writing."""

PART_FILE = "part-0.parquet"
JSON_COLUMNS = ("raw_args", "arguments", "canonical", "warnings")
TEXT_COLUMNS = ("rule", "preflight", "receipt")
SOURCE_COLUMNS = ("format", "source")
IMPORTED = "transcript.imported"


def column_names() -> list[str]:
    """Every column of a run's Parquet file, in order (the partition column ``run`` aside)."""
    return ["seq", *SCALARS, *TEXT_COLUMNS, *JSON_COLUMNS, *SOURCE_COLUMNS]


def schema() -> Any:
    """The pyarrow schema of a run's Parquet file."""
    pa = require("pyarrow", "writing a Parquet dataset")
    types = {"text": pa.string(), "bool": pa.bool_(), "real": pa.float64(), "integer": pa.int64()}
    fields = [pa.field("seq", pa.int64())]
    fields += [pa.field(name, types[FIELDS[name]]) for name in SCALARS]
    fields += [pa.field(name, pa.string()) for name in (*TEXT_COLUMNS, *JSON_COLUMNS)]
    fields += [pa.field(name, pa.string()) for name in SOURCE_COLUMNS]
    return pa.schema(fields)


def run_key(source: str | Path, fingerprint: str) -> str:
    """The partition key of a run: its file's name, made safe for a directory name, and a
    short fingerprint (of its path) so two files of the same name stay apart."""
    stem = re.sub(r"[^A-Za-z0-9._-]+", "_", Path(str(source)).name).strip("._") or "run"
    return f"{stem[:80]}-{fingerprint[:8]}"


def _json_text(value: Any) -> str | None:
    return None if value is None else json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _imported(events: Any) -> Mapping[str, Any]:
    for event in events if isinstance(events, list) else []:
        if isinstance(event, dict) and event.get("type") == IMPORTED:
            return event
    return {}


def _flat(stored: Mapping[str, Any], format: str | None, source: str | None) -> dict[str, Any]:
    """One stored history row (scalar columns plus its JSON document) as a Parquet row."""
    detail: Any = {}
    raw = stored.get("record")
    if isinstance(raw, str):
        try:
            detail = json.loads(raw)
        except (ValueError, RecursionError):
            detail = {"warnings": ["the stored record is not JSON; its detail was left out"]}
    if not isinstance(detail, dict):
        detail = {}
    row: dict[str, Any] = {"seq": stored.get("seq")}
    for name in SCALARS:
        value = stored.get(name)
        kind = FIELDS[name]
        if value is not None and kind == "bool":
            value = bool(value)
        elif value is not None and kind == "integer":
            value = int(value)
        elif value is not None and kind == "real":
            value = float(value)
        elif value is not None and kind == "text" and not isinstance(value, str):
            value = str(value)
        row[name] = value
    event = _imported(detail.get("events"))
    row["rule"] = event.get("rule")
    row["preflight"] = event.get("preflight")
    receipt = detail.get("receipt")
    row["receipt"] = receipt if isinstance(receipt, str) else None
    for name in JSON_COLUMNS:
        row[name] = _json_text(detail.get(name))
    row["format"] = format
    row["source"] = source
    return row


# SQLite's own JSON functions take the row's document apart (SELECTED: the Parquet columns
# before format and source), in C: ``->`` keeps a value as
# JSON text (a string stays quoted), ``->>`` gives it as an SQL value.
_IMPORT_EVENT = (
    "(SELECT value ->> '$.{key}' FROM json_each(record, '$.events') "
    f"WHERE value ->> '$.type' = '{IMPORTED}' LIMIT 1)"
)
_RECEIPT = "CASE WHEN json_type(record, '$.receipt') = 'text' THEN record ->> '$.receipt' END"
_JSON = "CASE WHEN json_type(record, '$.{name}') = 'null' THEN NULL ELSE record -> '$.{name}' END"
SELECTED = ", ".join(
    [
        "seq",
        *SCALARS,
        _IMPORT_EVENT.format(key="rule"),
        _IMPORT_EVENT.format(key="preflight"),
        _RECEIPT,
        *(_JSON.format(name=name) for name in JSON_COLUMNS),
    ]
)


def _sql_batches(history: History) -> Iterator[list[tuple[Any, ...]]]:
    """The rows as Parquet wants them, taken apart by SQLite; raises ``sqlite3.Error`` when a
    document is not valid JSON (the caller then reads row by row)."""
    yield from history.reader.batches(f"SELECT {SELECTED} FROM calls ORDER BY seq", BATCH_ROWS)


def _python_batches(
    history: History, format: str | None, source: str | None
) -> Iterator[list[tuple[Any, ...]]]:
    """The same rows read one by one in Python: for rows waiting in the journal, and for
    documents SQLite cannot parse."""
    names = column_names()
    batch: list[tuple[Any, ...]] = []
    for stored in history.reader.stored_rows():
        row = _flat(stored, format, source)
        batch.append(tuple(row[name] for name in names[: len(names) - len(SOURCE_COLUMNS)]))
        if len(batch) >= BATCH_ROWS:
            yield batch
            batch = []
    if batch:
        yield batch


def _table(
    chunk: list[tuple[Any, ...]], layout: Any, format: str | None, source: str | None
) -> Any:
    pa = require("pyarrow", "writing a Parquet dataset")
    columns = [list(values) for values in zip(*chunk, strict=True)]
    columns += [[format] * len(chunk), [source] * len(chunk)]
    arrays = []
    for field, values in zip(layout, columns, strict=True):
        if pa.types.is_boolean(field.type):
            values = [None if value is None else bool(value) for value in values]
        elif pa.types.is_string(field.type):
            values = [
                value if value is None or isinstance(value, str) else str(value) for value in values
            ]
        arrays.append(pa.array(values, type=field.type))
    return pa.Table.from_arrays(arrays, schema=layout)


def write_run(
    history: History,
    directory: Path,
    *,
    format: str | None = None,
    source: str | None = None,
) -> int:
    """Write every row of ``history`` to ``directory/part-0.parquet`` (replacing what a run of
    the same key wrote before); returns the number of rows."""
    history.flush()
    try:
        if history.health().held_rows:
            raise sqlite3.DataError("rows wait in the journal")
        return write_batches(_sql_batches(history), directory, format=format, source=source)
    except sqlite3.Error:
        batches = _python_batches(history, format, source)
        return write_batches(batches, directory, format=format, source=source)


def history_rows(history: History) -> list[tuple[Any, ...]]:
    """Every row of a (small) history as ``write_run`` writes it, taken apart by SQLite, or
    read one by one in Python where SQLite cannot (rows waiting in the journal, a document
    that is not JSON)."""
    history.flush()
    try:
        if history.health().held_rows:
            raise sqlite3.DataError("rows wait in the journal")
        return [row for batch in _sql_batches(history) for row in batch]
    except sqlite3.Error:
        return [row for batch in _python_batches(history, None, None) for row in batch]


def write_batches(
    batches: Iterator[list[tuple[Any, ...]]],
    directory: Path,
    *,
    format: str | None = None,
    source: str | None = None,
) -> int:
    """Write the rows of ``batches`` (the columns before ``format`` and ``source``) to
    ``directory/part-0.parquet``, replacing it only once every row is written; returns the
    number of rows. On any failure the half-written file is removed (and the directory, when
    this left it empty) and the failure raised."""
    pq = require("pyarrow.parquet", "writing a Parquet dataset")
    made = not directory.exists()
    directory.mkdir(parents=True, exist_ok=True)
    partial = directory / f".{PART_FILE}.writing"
    try:
        written = _write(pq, partial, schema(), batches, format, source)
    except BaseException:
        partial.unlink(missing_ok=True)
        if made and not any(directory.iterdir()):
            directory.rmdir()
        raise
    partial.replace(directory / PART_FILE)  # readers never see half a file
    return written


def _write(
    pq: Any,
    partial: Path,
    layout: Any,
    batches: Iterator[list[tuple[Any, ...]]],
    format: str | None,
    source: str | None,
) -> int:
    written = 0
    with pq.ParquetWriter(str(partial), layout, compression="zstd") as writer:
        for chunk in batches:
            writer.write_table(_table(chunk, layout, format, source))
            written += len(chunk)
        if not written:
            writer.write_table(layout.empty_table())
    return written
