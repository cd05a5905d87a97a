"""An import writes its rows in batches (one transaction each, on the importing thread): the
file it leaves is byte for byte the file that appending the same rows one at a time through the
history's writer leaves."""

from __future__ import annotations

import contextlib
import sqlite3
import warnings
from pathlib import Path

import pytest

import workbench as wb
from benchmarks import transcripts as synthetic
from workbench.history import History
from workbench.transcripts import TranscriptWarning, parse
from workbench.transcripts._build import WRITE_AHEAD, record_of
from workbench.transcripts._verdicts import Preflights

DATA = Path(__file__).parents[1] / "data" / "transcripts"
FIXTURES = sorted(path.name for path in DATA.iterdir() if path.suffix in {".json", ".jsonl"})


def stored(path: Path) -> list[tuple[object, ...]]:
    with contextlib.closing(sqlite3.connect(path)) as conn:
        return conn.execute("SELECT * FROM calls ORDER BY rowid").fetchall()


def row_by_row(source: Path, target: Path) -> int:
    """The rows of ``source``, each appended alone to a history at ``target``."""
    name, parsed, found = parse(source)
    run_id = parsed.run_id or f"{name}-{found.fingerprint}"
    preflights = Preflights(parsed.tools, remember=False)  # every call checked
    counters: dict[str, int] = {}
    history = History(target)
    for call in parsed.calls:
        run = call.run_id or run_id
        index = counters.get(run, 0)
        counters[run] = index + 1
        history.append(
            record_of(call, index=index, run_id=run_id, format=name, preflights=preflights)
        )
    history.flush()
    history.close()
    return len(parsed.calls)


def batched(source: Path, target: Path) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TranscriptWarning)  # unreadable parts are listed
        wb.transcripts.load(source, history=target).close()


@pytest.mark.parametrize("fixture", FIXTURES)
def test_a_batched_import_stores_what_row_by_row_appends_store(fixture, tmp_path):
    calls = row_by_row(DATA / fixture, tmp_path / "one-by-one.sqlite")
    batched(DATA / fixture, tmp_path / "batched.sqlite")
    rows = stored(tmp_path / "batched.sqlite")
    assert len(rows) == calls > 0
    assert rows == stored(tmp_path / "one-by-one.sqlite")


@pytest.mark.parametrize("format", sorted(synthetic.WRITERS))
def test_many_batches_store_every_row_in_order(format, tmp_path):
    # more than two batches and a part of one: no row lost or moved at a batch's edge
    calls = 2 * WRITE_AHEAD + 7
    source = synthetic.write(tmp_path, format, calls)
    row_by_row(source, tmp_path / "one-by-one.sqlite")
    batched(source, tmp_path / "batched.sqlite")
    rows = stored(tmp_path / "batched.sqlite")
    assert len(rows) == calls
    assert rows == stored(tmp_path / "one-by-one.sqlite")
