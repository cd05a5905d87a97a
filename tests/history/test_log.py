"""The commit log: a call's row is committed when it is appended to the log beside the file.

Real child processes killed with SIGKILL, a real SQLite write lock held by another process (so
that SQLite cannot be filled and the rows live in the log alone), real files planted at a log's
name (a symlink, a file of another user), and real bytes torn or damaged in a real log.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import sqlite3
import stat
import subprocess
import sys
import textwrap
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

import workbench as wb
from workbench.history import HistoryWarning

CHILD = """
import json, os, signal, sys
import workbench as wb

tools = wb.Registry(history=wb.History(sys.argv[1], busy_timeout=60))

@tools.tool
def add(a: int, b: int = 0) -> int:
    '''Add two numbers.'''
    return a + b
"""


@pytest.fixture(autouse=True)
def _as_root() -> None:
    """A file of another user is planted with chown, which needs root (as the tests run)."""
    assert os.geteuid() == 0, "the commit log's tests plant a file of another user: run as root"


@contextlib.contextmanager
def child(tmp_path: Path, body: str, *args: str) -> Iterator[subprocess.Popen[str]]:
    """A child process running ``body`` after ``CHILD``; killed when the block ends, if it
    has not ended by then."""
    script = tmp_path / "child.py"
    script.write_text(CHILD + textwrap.dedent(body))
    with subprocess.Popen(
        [sys.executable, str(script), *args],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        cwd=tmp_path,
    ) as process:
        try:
            yield process
        finally:
            process.kill()
            process.wait()


def stored_ids(path: Path) -> list[str]:
    """The call ids SQLite itself holds (a plain connection, not the History)."""
    with contextlib.closing(sqlite3.connect(path)) as conn:
        return [row[0] for row in conn.execute("SELECT call_id FROM calls ORDER BY seq")]


def logs(path: Path) -> list[Path]:
    return sorted(path.parent.glob(path.name + ".log-*"))


@contextlib.contextmanager
def write_lock(path: Path) -> Iterator[Callable[[], None]]:
    """Yields ``take``: once called, another process holds SQLite's write lock on ``path``
    until the block ends."""
    code = textwrap.dedent(
        f"""
        import sqlite3, sys
        conn = sqlite3.connect({str(path)!r}, isolation_level=None)
        conn.execute("BEGIN IMMEDIATE")
        print("locked", flush=True)
        sys.stdin.read()
        """
    )
    holders: list[subprocess.Popen[str]] = []

    def take() -> None:
        holder = subprocess.Popen(
            [sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
        )
        holders.append(holder)
        assert holder.stdout is not None
        assert holder.stdout.readline().strip() == "locked"

    try:
        yield take
    finally:
        for holder in holders:
            holder.kill()
            holder.wait()


def killed_with_rows_in_the_log_alone(
    tmp_path: Path, calls: int = 40, meanwhile: Callable[[Path, list[str]], None] | None = None
) -> tuple[Path, list[str]]:
    """A child that made one call (so the file exists), then ``calls`` more while another
    process held SQLite's write lock, killed with SIGKILL once it reported them all ended:
    their rows are in its commit log and nowhere else. ``meanwhile(path, ids)`` runs before
    the kill. Returns the path and the ids."""
    path = tmp_path / "history.sqlite"
    body = f"""
        first = tools.invoke("add", {{"a": 0}}).wait(30).call_id
        tools.history.flush()  # in SQLite (the file and its table exist), the log cut back
        print(first, flush=True)
        sys.stdin.readline()  # the parent takes the write lock meanwhile
        for i in range({calls}):
            print(tools.invoke("add", {{"a": i}}).wait(30).call_id, flush=True)
        sys.stdin.read()
        """
    with child(tmp_path, body, str(path)) as victim, write_lock(path) as take:
        assert victim.stdout is not None and victim.stdin is not None
        reported = [victim.stdout.readline().strip()]
        assert len(logs(path)) == 1, "the child keeps no commit log"
        take()
        victim.stdin.write("go\n")
        victim.stdin.flush()
        reported += [victim.stdout.readline().strip() for _ in range(calls)]
        if meanwhile is not None:
            meanwhile(path, reported)
        victim.send_signal(signal.SIGKILL)
        victim.wait()
    assert victim.returncode == -signal.SIGKILL
    assert all(reported) and len(reported) == calls + 1
    return path, reported


def reopened_rows(path: Path) -> tuple[list[str], list[str]]:
    """The call ids a fresh History reads (opening it replays orphaned logs) and its problems."""
    history = wb.History(path)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", HistoryWarning)
        ids = [row["call_id"] for row in history.rows()]
    history.close()
    return ids, [problem.message for problem in history.problems]


# ── the commit ──────────────────────────────────────────────────────────────────────────


def test_a_call_ends_once_its_row_is_in_the_log_and_kill_9_then_reopen_loses_none(tmp_path):
    path, reported = killed_with_rows_in_the_log_alone(tmp_path)
    # SQLite never took the rows (its lock was held), and there was no journal: the calls
    # ended on the log alone.
    assert stored_ids(path) == reported[:1]
    assert not path.with_name(path.name + ".journal.jsonl").exists()
    [log] = logs(path)
    assert stat.S_IMODE(log.stat().st_mode) == 0o600
    # A line: the scalar columns (the call id first) as a JSON array, a tab, the document.
    logged = [json.loads(line.split("\t")[0])[0] for line in log.read_text().splitlines()]
    assert logged == reported[1:]

    ids, problems = reopened_rows(path)
    assert ids == reported and problems == []
    assert stored_ids(path) == reported
    assert logs(path) == []  # removed once its rows were committed


def test_a_process_killed_mid_stream_loses_no_row_it_reported(tmp_path):
    path = tmp_path / "history.sqlite"
    body = """
        i = 0
        while True:
            print(tools.invoke("add", {"a": i}).wait(30).call_id, flush=True)
            i += 1
        """
    with child(tmp_path, body, str(path)) as victim:
        assert victim.stdout is not None
        reported = [victim.stdout.readline().strip() for _ in range(500)]
        victim.send_signal(signal.SIGKILL)
        victim.wait()
        reported += [line.strip() for line in victim.stdout if line.strip()]
    ids, problems = reopened_rows(path)
    assert [call_id for call_id in reported if call_id not in set(ids)] == []
    assert len(set(ids)) == len(ids)  # a row both filled and replayed is stored once
    assert all("torn line" in problem for problem in problems), problems  # killed mid-write
    assert logs(path) == []


def test_a_live_process_keeps_its_log_and_others_see_its_rows_once_sqlite_is_filled(tmp_path):
    path = tmp_path / "history.sqlite"
    body = """
        ids = [tools.invoke("add", {"a": i}).wait(30).call_id for i in range(5)]
        tools.history.flush()
        print(json.dumps(ids), flush=True)
        sys.stdin.read()
        """
    with child(tmp_path, body, str(path)) as writer:
        assert writer.stdout is not None and writer.stdin is not None
        written = json.loads(writer.stdout.readline())
        [log] = logs(path)
        ids, problems = reopened_rows(path)  # a second process opens the history meanwhile
        assert ids == written and problems == []
        assert log.exists()  # its process lives and holds the log's lock: not the reader's
        writer.stdin.close()
        assert writer.wait(30) == 0
    assert logs(path) == []  # every row was in SQLite: the log went as the history closed


def test_another_process_reads_the_rows_a_live_process_has_only_in_its_log(tmp_path):
    seen: list[tuple[list[str], int, list[str]]] = []

    def read(path: Path, reported: list[str]) -> None:
        # The writer lives, SQLite holds its first row only: the rest are in its log.
        assert stored_ids(path) == reported[:1]
        reader = wb.History(path)
        ids = [row["call_id"] for row in reader.rows()]
        seen.append((ids, len(reader), [problem.message for problem in reader.problems]))
        reader.close()

    _, reported = killed_with_rows_in_the_log_alone(tmp_path, calls=5, meanwhile=read)
    assert seen == [(reported, 6, [])]


def test_a_read_of_sqlite_right_after_a_call_sees_it(tmp_path):
    history = wb.History(tmp_path / "history.sqlite")
    tools = wb.Registry(history=history)

    @tools.tool
    def add(a: int) -> int:
        """Add nothing."""
        return a

    ended = [tools.invoke("add", {"a": i}).wait(10).call_id for i in range(20)]
    found = history.reader.execute("SELECT call_id FROM calls ORDER BY seq")
    assert [row[0] for row in found] == ended
    [log] = logs(Path(history.path))
    assert log.stat().st_size == 0  # every row is in SQLite: the log was cut back
    history.close()
    assert logs(Path(history.path)) == []


# ── a damaged log ───────────────────────────────────────────────────────────────────────


def test_a_torn_last_line_is_named_and_every_whole_line_replayed(tmp_path):
    path, reported = killed_with_rows_in_the_log_alone(tmp_path)
    [log] = logs(path)
    with log.open("ab") as handle:
        handle.write(b'{"call_id": "call_torn", "tool": "ad')  # the write a kill cut short
    ids, problems = reopened_rows(path)
    assert ids == reported
    assert any(log.name in p and "torn line" in p for p in problems), problems
    assert logs(path) == []


def test_a_damaged_line_is_named_and_the_log_kept_aside(tmp_path):
    path, reported = killed_with_rows_in_the_log_alone(tmp_path)
    [log] = logs(path)
    lines = log.read_bytes().splitlines(keepends=True)
    lines[3] = b"\x00\x00 not json \xff\n"  # the fourth logged row, overwritten
    log.write_bytes(b"".join(lines))
    ids, problems = reopened_rows(path)
    assert ids == [reported[0], *reported[1:4], *reported[5:]]
    assert any(f"{log.name} line 4 is not a whole row" in p for p in problems), problems
    kept = log.with_name(log.name + ".unreplayed")
    assert any(f"kept as {kept.name}" in p for p in problems), problems
    assert kept.read_bytes() == b"".join(lines)
    assert logs(path) == [kept]  # named apart: never replayed twice
    assert reopened_rows(path) == (ids, [])


def test_a_symlink_at_a_logs_name_is_refused_and_named(tmp_path):
    path, reported = killed_with_rows_in_the_log_alone(tmp_path, calls=3)
    [log] = logs(path)
    target = tmp_path / "elsewhere.jsonl"
    target.write_bytes(log.read_bytes())
    log.unlink()
    planted = log.with_name(path.name + ".log-planted")
    planted.symlink_to(target)
    ids, problems = reopened_rows(path)
    assert ids == reported[:1]  # nothing read through the link
    assert any(planted.name in p and "symlink" in p for p in problems), problems
    assert planted.is_symlink() and target.read_bytes()  # left as they were


def test_a_log_of_another_user_is_refused_and_named(tmp_path):
    path, reported = killed_with_rows_in_the_log_alone(tmp_path, calls=3)
    [log] = logs(path)
    os.chown(log, 4321, 4321)
    ids, problems = reopened_rows(path)
    assert ids == reported[:1]
    assert any(log.name in p and "another user (uid 4321)" in p for p in problems), problems
    assert log.exists()  # not ours to remove
