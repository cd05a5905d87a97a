"""What the previous version left beside a history (its commit logs, its journal, the journal's
stand-in in the temporary directory) is written into SQLite once, by the first open, and never
again; a line that is not a whole row is named and its file kept aside; a log whose process
still lives is left to it. The files are written here byte for byte in the previous version's
formats."""

from __future__ import annotations

import fcntl
import hashlib
import hmac
import json
import os
import warnings
from pathlib import Path

import pytest

import workbench as wb
from tests.history.support import stored_ids
from workbench.history import HistoryWarning
from workbench.history.row import STORED, CallRecord, encode


def values(n: int) -> list[object]:
    return encode(CallRecord(call_id=f"call_old{n}", tool="add", receipt=str(n)))


def log_line(n: int) -> bytes:
    """A row as the previous version's commit log held it: its scalars as a JSON array, a
    tab, its sealed document."""
    row = values(n)
    return json.dumps(row[:-1], ensure_ascii=True).encode() + b"\t" + str(row[-1]).encode() + b"\n"


def journal_line(n: int) -> bytes:
    return json.dumps(dict(zip(STORED, values(n), strict=True)), ensure_ascii=True).encode() + b"\n"


def opened(path: Path) -> tuple[list[str], list[str]]:
    history = wb.History(path)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", HistoryWarning)
        ids = [row["call_id"] for row in history.rows()]
    history.close()
    return ids, [problem.message for problem in history.problems]


@pytest.fixture
def path(tmp_path: Path) -> Path:
    path = tmp_path / "history.sqlite"
    history = wb.History(path)
    history.record({"call_id": "call_new", "tool": "add"})
    history.close()
    return path


def test_a_commit_log_left_by_a_killed_process_is_written_once_and_removed(path):
    log = path.with_name(path.name + ".log-00aa11bb22cc33dd")
    log.write_bytes(b"".join(log_line(n) for n in range(50)) + b'["call_torn", "ad')
    ids, problems = opened(path)
    assert ids == ["call_new", *(f"call_old{n}" for n in range(50))]
    assert not log.exists()
    assert any("torn line" in p for p in problems), problems
    assert opened(path) == (ids, [])  # never again


def test_a_damaged_line_of_an_old_log_is_named_and_the_log_kept_aside(path):
    log = path.with_name(path.name + ".log-00aa11bb22cc33dd")
    lines = [log_line(n) for n in range(10)]
    lines[4] = lines[4].replace(b'"add"', b'"adx"')  # one value changed: it fails its check
    log.write_bytes(b"".join(lines))
    ids, problems = opened(path)
    assert ids == ["call_new", *(f"call_old{n}" for n in range(10) if n != 4)]
    assert any(f"{log.name} line 5 is not a whole row" in p for p in problems), problems
    kept = log.with_name(log.name + ".unreplayed")
    assert kept.read_bytes() == b"".join(lines) and not log.exists()
    assert opened(path) == (ids, [])


def test_a_log_whose_process_of_the_previous_version_lives_is_left_to_it(path):
    log = path.with_name(path.name + ".log-00aa11bb22cc33dd")
    log.write_bytes(log_line(1))
    held = os.open(log, os.O_RDONLY)
    fcntl.flock(held, fcntl.LOCK_EX)  # as its live process holds it
    waiting, _ = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the live process of the previous version
        os.read(waiting, 1)  # until it is killed
        os._exit(0)
    os.close(held)  # the lock stays with the forked child, which keeps the descriptor
    try:
        assert opened(path) == (["call_new"], [])
        assert log.exists()
    finally:
        os.kill(pid, 9)
        os.waitpid(pid, 0)
    assert opened(path)[0] == ["call_new", "call_old1"]


def test_the_shared_journal_is_written_once_and_removed(path):
    journal = path.with_name(path.name + ".journal.jsonl")
    journal.write_bytes(b"".join(journal_line(n) for n in range(5)))
    ids, problems = opened(path)
    assert ids == ["call_new", *(f"call_old{n}" for n in range(5))] and problems == []
    assert not journal.exists()


def test_the_journals_stand_in_gives_only_the_rows_this_user_signed(path, tmp_path, monkeypatch):
    spare = tmp_path / "spare"
    spare.mkdir()
    monkeypatch.setattr("tempfile.tempdir", str(spare))
    directory = spare / f"workbench-{os.geteuid()}"
    directory.mkdir(mode=0o700)
    key = os.urandom(32)
    (directory / "journal.key").write_bytes(key)
    name = "journal-" + hashlib.sha256(str(path.resolve()).encode()).hexdigest()[:16] + ".jsonl"

    def signed(row: dict[str, object], with_key: bytes) -> bytes:
        text = json.dumps(row, ensure_ascii=True, sort_keys=True).encode()
        mac = hmac.new(with_key, text, hashlib.sha256).hexdigest()
        return json.dumps({"row": row, "hmac": mac}).encode() + b"\n"

    rows = [dict(zip(STORED, values(n), strict=True)) for n in range(3)]
    stand_in = directory / name
    stand_in.write_bytes(signed(rows[0], key) + signed(rows[1], b"x" * 32) + signed(rows[2], key))
    ids, problems = opened(path)
    assert ids == ["call_new", "call_old0", "call_old2"]
    assert any("line 2" in p and "signature does not match" in p for p in problems), problems
    assert (directory / (name + ".unverified")).exists() and not stand_in.exists()
    assert stored_ids(path) == ids
