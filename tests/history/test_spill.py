"""The spill: where a process's rows wait, in order, while SQLite will not take them.

Real child processes killed with SIGKILL, a real SQLite write lock held by another process (so
that SQLite cannot take the rows and they live in the spill alone), real files planted at a
spill's name (a symlink, a file of another user, a file that is not a spill), and real bytes
torn or damaged in a real spill.
"""

from __future__ import annotations

import json
import os
import signal
import stat
import time
import warnings
from collections.abc import Callable
from pathlib import Path

import pytest

import workbench as wb
from tests.history.support import child, spills, stored_ids, write_lock
from workbench.history import HistoryWarning
from workbench.history.spill import MAGIC


@pytest.fixture(autouse=True)
def _as_root() -> None:
    """A file of another user is planted with chown, which needs root (as the tests run)."""
    assert os.geteuid() == 0, "the spill's tests plant a file of another user: run as root"


def killed_with_rows_in_the_spill_alone(
    tmp_path: Path, calls: int = 40, meanwhile: Callable[[Path, list[str]], None] | None = None
) -> tuple[Path, list[str]]:
    """A child that made one call (so the file exists), then ``calls`` more while another
    process held SQLite's write lock, killed with SIGKILL once it reported them all ended:
    their rows are in its spill and nowhere else. ``meanwhile(path, ids)`` runs before the
    kill. Returns the path and the ids."""
    path = tmp_path / "history.sqlite"
    body = f"""
        first = tools.invoke("add", {{"a": 0}}).wait(30).call_id
        print(first, flush=True)
        sys.stdin.readline()  # the parent takes the write lock meanwhile
        for i in range({calls}):
            print(tools.invoke("add", {{"a": i}}).wait(30).call_id, flush=True)
        sys.stdin.read()
        """
    with child(tmp_path, body, path, busy_timeout=0.05) as victim, write_lock(path) as take:
        assert victim.stdout is not None and victim.stdin is not None
        reported = [victim.stdout.readline().strip()]
        assert spills(path) == [], "a spill before SQLite refused anything"
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
    """The call ids a fresh History reads (opening it writes orphaned spills) and its problems."""
    history = wb.History(path)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", HistoryWarning)
        ids = [row["call_id"] for row in history.rows()]
    history.close()
    return ids, [problem.message for problem in history.problems]


def entries(spill: Path) -> list[list[object]]:
    """The entries of a spill, read as the format says (each line: its CRC, a space, JSON)."""
    header, *lines = spill.read_bytes().splitlines()
    assert header.startswith(MAGIC)
    return [json.loads(line[9:]) for line in lines]


# ── the rows wait in the spill ──────────────────────────────────────────────────────────


def test_a_call_ends_once_its_row_is_in_the_spill_and_kill_9_then_reopen_loses_none(tmp_path):
    path, reported = killed_with_rows_in_the_spill_alone(tmp_path)
    # SQLite never took the rows (its lock was held): the calls ended on the spill alone.
    assert stored_ids(path) == reported[:1]
    [spill] = spills(path)
    assert spill.parent == path.parent and stat.S_IMODE(spill.stat().st_mode) == 0o600
    spilled = [entry[1] for entry in entries(spill) if entry[0] == "row"]
    assert spilled == reported[1:]

    ids, problems = reopened_rows(path)
    assert ids == reported and problems == []
    assert stored_ids(path) == reported
    assert spills(path) == []  # removed once its rows were written


def test_a_process_killed_mid_stream_loses_no_row_it_reported(tmp_path):
    path = tmp_path / "history.sqlite"
    body = """
        i = 0
        while True:
            print(tools.invoke("add", {"a": i}).wait(30).call_id, flush=True)
            i += 1
        """
    with child(tmp_path, body, path) as victim:
        assert victim.stdout is not None
        reported = [victim.stdout.readline().strip() for _ in range(500)]
        victim.send_signal(signal.SIGKILL)
        victim.wait()
        reported += [line.strip() for line in victim.stdout if line.strip()]
    # Committed in SQLite before each call was reported: a plain reader has every one, with
    # no history opened again.
    stored = stored_ids(path)
    assert [call_id for call_id in reported if call_id not in set(stored)] == []
    assert len(set(stored)) == len(stored)
    assert spills(path) == []


def test_a_live_process_keeps_its_spill_and_writes_it_once_sqlite_takes_it(tmp_path):
    seen: list[tuple[list[str], int, list[str]]] = []

    def read(path: Path, reported: list[str]) -> None:
        # The writer lives and holds its spill: another process reads SQLite's rows only,
        # each once, and leaves the spill to its process.
        [spill] = spills(path)
        ids, problems = reopened_rows(path)
        seen.append((ids, len(spills(path)), problems))
        assert spill.exists()

    _, reported = killed_with_rows_in_the_spill_alone(tmp_path, calls=5, meanwhile=read)
    assert seen == [(reported[:1], 1, [])]


def test_a_spill_is_written_into_sqlite_by_its_own_process_once_the_lock_is_gone(tmp_path):
    path = tmp_path / "history.sqlite"
    body = """
        ids = [tools.invoke("add", {"a": 0}).wait(30).call_id]
        print("ready", flush=True)
        sys.stdin.readline()
        ids += [tools.invoke("add", {"a": i}).wait(30).call_id for i in range(6)]
        print(json.dumps(ids), flush=True)
        sys.stdin.read()
        """
    with child(tmp_path, body, path, busy_timeout=0.05) as writer:
        assert writer.stdout is not None and writer.stdin is not None
        assert writer.stdout.readline().strip() == "ready"
        with write_lock(path) as take:
            take()
            writer.stdin.write("go\n")
            writer.stdin.flush()
            written = json.loads(writer.stdout.readline())
            assert stored_ids(path) == written[:1] and len(spills(path)) == 1
        # The lock is gone (its holder ended with the block): the writer, still alive,
        # writes its spill within a retry or two, and every plain reader has the rows.
        deadline = time.monotonic() + 30
        while stored_ids(path) != written and time.monotonic() < deadline:
            time.sleep(0.05)
        assert stored_ids(path) == written
        [spill] = spills(path)  # emptied to its first line, kept while its process lives
        assert spill.read_bytes().count(b"\n") == 1


def test_no_spill_is_made_while_sqlite_takes_every_row(tmp_path):
    history = wb.History(tmp_path / "history.sqlite")
    tools = wb.Registry(history=history)

    @tools.tool
    def add(a: int) -> int:
        """Add nothing."""
        return a

    ended = [tools.invoke("add", {"a": i}).wait(10).call_id for i in range(20)]
    assert stored_ids(Path(history.path)) == ended  # a plain reader, at once
    assert spills(Path(history.path)) == [] and history.spill_path is None
    history.close()


@pytest.mark.slow
def test_past_its_limit_the_spill_makes_writers_wait_and_grows_no_further(tmp_path):
    path = tmp_path / "history.sqlite"
    history = wb.History(path, busy_timeout=0.05, spill_limit=4096)
    history.record({"call_id": "call_first", "tool": "t"})
    ended: list[str] = []
    with write_lock(path) as take:
        take()
        import threading

        def write() -> None:
            for n in range(400):
                history.record({"call_id": f"call_{n}", "tool": "t", "receipt": "r" * 50})
                ended.append(f"call_{n}")

        writer = threading.Thread(target=write)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", HistoryWarning)
            writer.start()
            time.sleep(3)
            [spill] = spills(path)
            held, size = len(ended), spill.stat().st_size
            assert 0 < held < 400, held  # the writer waits: the limit was reached
            assert size <= 4096 + 512, size
    writer.join(60)
    assert not writer.is_alive() and len(ended) == 400
    history.close()
    assert stored_ids(path) == ["call_first", *ended]
    assert spills(path) == []


# ── a damaged spill ─────────────────────────────────────────────────────────────────────


def test_a_torn_last_line_is_named_and_every_whole_line_written(tmp_path):
    path, reported = killed_with_rows_in_the_spill_alone(tmp_path)
    [spill] = spills(path)
    with spill.open("ab") as handle:
        handle.write(b'0badf00d ["row", "call_torn", "ad')  # the write a kill cut short
    ids, problems = reopened_rows(path)
    assert ids == reported
    assert any(spill.name in p and "torn" in p for p in problems), problems
    assert spills(path) == []


def row_lines(spill: Path) -> tuple[bytes, list[bytes], list[int]]:
    """The spill's first line, its lines, and the indexes of the lines holding rows."""
    header, *lines = spill.read_bytes().splitlines(keepends=True)
    return header, lines, [i for i, line in enumerate(lines) if line[9:].startswith(b'["row"')]


@pytest.mark.parametrize(
    "damage",
    ["zeroed bytes inside the line", "a tab made a carriage return", "one bit flipped"],
)
def test_a_damaged_line_is_named_and_the_spill_kept_aside_with_no_row_made_up(tmp_path, damage):
    path, reported = killed_with_rows_in_the_spill_alone(tmp_path)
    [spill] = spills(path)
    header, lines, rows = row_lines(spill)
    at = rows[3]  # the fourth spilled row
    line = bytearray(lines[at])
    if damage == "zeroed bytes inside the line":
        middle = len(line) // 2
        line[middle : middle + 6] = bytes(6)
    elif damage == "a tab made a carriage return":
        spot = line.index(b",", 20)
        line[spot] = ord("\r")
    else:
        line[len(line) // 3] ^= 0x04
    lines[at] = bytes(line)
    spill.write_bytes(header + b"".join(lines))
    damaged_bytes = spill.read_bytes()

    ids, problems = reopened_rows(path)
    lost = reported[1 + 3]
    assert ids == [call_id for call_id in reported if call_id != lost]  # no phantom, no gap else
    assert any(f"line {at + 2} is damaged" in p and lost in p for p in problems), problems
    kept = spill.with_name(spill.name + ".damaged")
    assert any(f"kept as {kept.name}" in p for p in problems), problems
    assert kept.read_bytes() == damaged_bytes
    assert spills(path) == []  # named apart: never written twice
    assert reopened_rows(path) == (ids, [])


# ── what is planted at a spill's name ───────────────────────────────────────────────────


def test_a_symlink_at_a_spills_name_is_refused_and_named(tmp_path):
    path, reported = killed_with_rows_in_the_spill_alone(tmp_path, calls=3)
    [spill] = spills(path)
    target = tmp_path / "elsewhere"
    target.write_bytes(spill.read_bytes())
    spill.unlink()
    planted = spill.with_name(path.name + ".spill-0123456789abcdef")
    planted.symlink_to(target)
    ids, problems = reopened_rows(path)
    assert ids == reported[:1]  # nothing read through the link
    assert any(planted.name in p and "symlink" in p for p in problems), problems
    assert planted.is_symlink() and target.read_bytes()  # left as they were


def test_a_spill_of_another_user_is_refused_and_named(tmp_path):
    path, reported = killed_with_rows_in_the_spill_alone(tmp_path, calls=3)
    [spill] = spills(path)
    os.chown(spill, 4321, 4321)
    ids, problems = reopened_rows(path)
    assert ids == reported[:1]
    assert any(spill.name in p and "another user (uid 4321)" in p for p in problems), problems
    assert spill.exists()  # not ours to remove


def test_files_at_a_spills_name_without_its_first_line_are_never_read_moved_or_removed(
    tmp_path,
):
    path = tmp_path / "history.sqlite"
    line = b'0badf00d ["row", "call_planted"]\n'
    planted = {
        path.with_name(path.name + ".spill-00000000000000aa"): b"an export\n" + line,
        path.with_name(path.name + ".spill-00000000000000bb"): line,
    }
    for where, data in planted.items():
        where.write_bytes(data)
    history = wb.History(path)
    history.record({"call_id": "call_mine", "tool": "t"})
    ids, problems = reopened_rows(path)
    assert ids == ["call_mine"]
    for where, data in planted.items():
        assert where.read_bytes() == data
        assert any(where.name in p and "not a spill" in p for p in problems), problems
    history.close()


def test_a_spill_whose_disk_fills_goes_on_in_the_private_directory_and_loses_nothing(
    tmp_path, monkeypatch
):
    from tests.history.test_fault_matrix import fill, tmpfs

    spare = tmp_path / "spare"
    spare.mkdir()
    monkeypatch.setenv("TMPDIR", str(spare))  # the child's temporary directory
    monkeypatch.setattr("tempfile.tempdir", str(spare))  # and this process's
    with tmpfs(tmp_path / "disk", "4m") as disk:
        path = disk / "history.sqlite"
        body = """
            print(tools.invoke("add", {"a": 0}).wait(30).call_id, flush=True)
            for line in sys.stdin:  # a batch of calls for each line the parent sends
                for i in range(40):
                    print(tools.invoke("add", {"a": i}).wait(30).call_id, flush=True)
            """
        with child(tmp_path, body, path, busy_timeout=0.05) as victim, write_lock(path) as take:
            assert victim.stdout is not None and victim.stdin is not None
            reported = [victim.stdout.readline().strip()]
            take()

            def batch() -> None:
                victim.stdin.write("go\n")
                victim.stdin.flush()
                reported.extend(victim.stdout.readline().strip() for _ in range(40))

            batch()  # into the spill beside the history
            [beside] = spills(path)
            assert beside.parent == disk
            filler = fill(disk)
            batch()  # the disk is full: on, in the private directory
            assert [spill.parent for spill in spills(path)] == [disk, spare / "workbench-0"]
            victim.send_signal(signal.SIGKILL)
            victim.wait()
        filler.unlink()
        ids, problems = reopened_rows(path)
        assert ids == reported and problems == []
        assert spills(path) == []
