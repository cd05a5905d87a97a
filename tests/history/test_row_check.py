"""The check every history row carries, and the stored form of its values, are the same
whichever way they are computed: rows whose values all pair commonly with their columns take a
planned path (one format per row shape), any other row the value-by-value definition."""

from __future__ import annotations

import json
import math
import random
import zlib

import workbench as wb
from workbench.history.row import KIND_LIST as _KIND_LIST
from workbench.history.row import SCALARS, CallRecord, digest, encode
from workbench.history.row._check import _canonical

POOL = [
    None, True, False, 0, -5, 2**40, 1.5, -0.0, 3.0, math.inf, math.nan,
    "", "plain", "12", "1.5e3", " 7 ", "é", "x\ud800y", "%s", "%d%%", b"bytes",
]  # fmt: skip


def by_definition(kinds: list[str], scalars: list[object], document: str) -> int:
    parts = [_canonical(kind, value) for kind, value in zip(kinds, scalars, strict=True)]
    return zlib.crc32(document.encode("utf-8", "surrogatepass"), zlib.crc32(b"\0".join(parts)))


def test_the_check_of_any_row_is_the_check_by_its_definition():
    rnd = random.Random(25)
    common = encode(CallRecord(call_id="c1", tool="add", status="success", elapsed_ms=0.5))[:-1]
    document = '{"receipt": "6"}'
    rows = [common]
    for _ in range(3_000):  # rows of any shape
        rows.append([rnd.choice(POOL) for _ in _KIND_LIST])
    for _ in range(3_000):  # common rows with a few odd values
        row = list(common)
        for index in rnd.sample(range(len(row)), 3):
            row[index] = rnd.choice(POOL)
        rows.append(row)
    differing = [
        row
        for row in rows
        if digest(_KIND_LIST, row, document) != by_definition(_KIND_LIST, row, document)
    ]
    assert differing == []


def test_values_are_stored_as_they_are_only_when_their_column_keeps_them_unchanged():
    kept = encode(CallRecord(call_id="c1", tool="é-tool", summary_text="ok", elapsed_ms=1.25))
    assert kept[SCALARS.index("tool")] == "é-tool"
    assert kept[SCALARS.index("elapsed_ms")] == 1.25
    assert json.loads(kept[-1])["warnings"] == []

    changed = encode(
        CallRecord(call_id="c2", tool="add", summary_text="a\ud800b", elapsed_ms=math.nan)
    )
    assert changed[SCALARS.index("summary_text")] == "a\\ud800b"
    assert changed[SCALARS.index("elapsed_ms")] is None
    assert any("summary_text" in warning for warning in json.loads(changed[-1])["warnings"])


def test_rows_of_every_shape_read_back_as_written(tmp_path):
    history = wb.History(tmp_path / "history.sqlite")
    rnd = random.Random(7)
    texts = ["plain", "é", "x\ud800y", "12", ""]
    for index in range(300):
        history.append(
            CallRecord(
                call_id=f"c{index}",
                tool=rnd.choice(texts),
                summary_text=rnd.choice(texts),
                elapsed_ms=rnd.choice([None, 1.5, 3.0, math.inf]),
                retryable=rnd.choice([None, True, False]),
                receipt_chars=rnd.choice([None, 0, 12]),
            )
        )
    rows = history.rows()
    history.close()
    assert len(rows) == 300
    assert [
        row["call_id"] for row in rows if any("changed on disk" in w for w in row["warnings"])
    ] == []
