"""Several processes on one history at once, the ways a researcher uses it: a notebook writing
calls while a second kernel or a script opens, reads and clears the same file, pool workers,
a long query or another writer holding the file. Each test runs the real processes that once
made the history lose, repeat or invent rows, and counts what must be zero.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
import threading
import time
import warnings
from pathlib import Path

import pytest

import workbench as wb

# Each holds several processes to a guarantee for seconds: `make check` leaves them to
# `make test`.
pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[2]

WRITER = """
import json, os, sys, threading, time, warnings
import workbench as wb
warnings.simplefilter("ignore")
tools = wb.Registry(history=wb.History(sys.argv[1], busy_timeout=float(sys.argv[2])))
ACCOUNT = os.open(sys.argv[3], os.O_WRONLY | os.O_APPEND | os.O_CREAT) if len(sys.argv) > 3 else 1

@tools.tool
def echo(text: str) -> str:
    '''Return the text.'''
    return text

def calls(thread, seconds):
    end = time.monotonic() + seconds
    n = 0
    while time.monotonic() < end:
        call = tools.invoke("echo", {"text": f"{thread}.{n}"})
        call.wait(120)
        os.write(ACCOUNT, f"{call.id} {time.monotonic()}\\n".encode())
        n += 1

def run(threads, seconds):
    workers = [threading.Thread(target=calls, args=(t, seconds)) for t in range(threads)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
"""


def python(code: str, *args: object, **options: object) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(code), *map(str, args)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdin=subprocess.PIPE,
        text=True,
        cwd=REPO,
        **options,  # type: ignore[arg-type]
    )


class Writer:
    """A process making calls from ``threads`` threads for ``seconds``, writing down each
    call's id in an account of its own (a file, one ``write`` a line) once the call is seen to
    end."""

    def __init__(
        self, path: Path, threads: int, seconds: float, busy: float = 1.0, code: str = ""
    ) -> None:
        self.account = path.parent / f"written-{id(self)}.ids"
        body = (code or WRITER) + f"run({threads}, {seconds})\n"
        self.process = python(body, path, busy, self.account)

    def acknowledged(self) -> list[tuple[str, float]]:
        """Each call the process saw end so far, and when (``time.monotonic()``)."""
        lines = self.account.read_text().splitlines() if self.account.exists() else []
        return [(call_id, float(at)) for call_id, at in map(str.split, lines)]

    def ended(self) -> list[str]:
        """The ids of every call the process saw end, once it ended."""
        output(self.process)
        return [call_id for call_id, _ in self.acknowledged()]


def writer(path: Path, threads: int, seconds: float, busy: float = 1.0) -> Writer:
    return Writer(path, threads, seconds, busy)


def output(process: subprocess.Popen[str], timeout: float = 180) -> str:
    """What ``process`` printed, once it ended well."""
    out, err = process.communicate(timeout=timeout)
    assert process.returncode == 0, err[-3000:]
    return out


def ended(process: subprocess.Popen[str], timeout: float = 180) -> list[str]:
    """The words ``process`` printed (call ids, counts), once it ended well."""
    return output(process, timeout).split()


def stored_ids(path: Path) -> list[str]:
    with contextlib.closing(sqlite3.connect(path, timeout=60)) as conn:
        return [row[0] for row in conn.execute("SELECT call_id FROM calls ORDER BY seq")]


def moved_aside(directory: Path) -> list[str]:
    return sorted(p.name for p in directory.iterdir() if ".unreadable-" in p.name)


@contextlib.contextmanager
def write_lock_held(path: Path, seconds: float):
    """Another process takes SQLite's write lock on ``path`` and keeps it ``seconds``."""
    code = f"""
        import sqlite3, sys, time
        conn = sqlite3.connect({str(path)!r}, isolation_level=None, timeout=60)
        conn.execute("BEGIN IMMEDIATE")
        print("locked", flush=True)
        time.sleep({seconds})
        conn.execute("COMMIT")
        """
    holder = python(code)
    assert holder.stdout is not None and holder.stdout.readline().strip() == "locked"
    try:
        yield holder
    finally:
        holder.communicate(timeout=seconds + 60)


def first_row(path: Path) -> None:
    """Make the file, with one row, as a notebook that made a call before."""
    history = wb.History(path)
    history.record({"call_id": "call_first", "tool": "echo", "receipt": "first"})
    history.close()


# ── 1. opening never moves a live history aside ─────────────────────────────────────────


OPENER = """
import sys, time, warnings
import workbench as wb
warnings.simplefilter("ignore")
end = time.monotonic() + float(sys.argv[2])
moved = opens = 0
while time.monotonic() < end:
    history = wb.History(sys.argv[1])
    len(history)
    moved += len(history.moved_aside) + sum(p.kind == "corrupt" for p in history.problems)
    history.close()
    opens += 1
    time.sleep(0.2)
print(opens, moved)
"""


IMPORTER = """
import sys, warnings
import workbench as wb
warnings.simplefilter("ignore")
history = wb.History(sys.argv[1])
print("ready", flush=True)
for batch in range(4):  # an import: each batch of rows one transaction, larger than SQLite's cache
    rows = [
        wb.history.CallRecord(call_id=f"call_{batch}_{n}", tool="t", receipt="r" * 1000 + str(n))
        for n in range(20_000)
    ]
    assert history.write(rows) is None
history.close()
"""


def test_a_process_opening_the_history_while_another_imports_never_moves_it_aside(tmp_path):
    path = tmp_path / "history.sqlite"
    first_row(path)
    importing = python(IMPORTER, path)
    assert importing.stdout is not None and importing.stdout.readline().strip() == "ready"
    opening = python(OPENER.replace("time.sleep(0.2)", "time.sleep(0.05)"), path, 15)
    output(importing, timeout=600)
    opens, moved = map(int, ended(opening))
    assert opens > 10
    assert (moved, moved_aside(tmp_path)) == (0, [])
    assert len(stored_ids(path)) == 1 + 80_000


def test_a_process_opening_the_history_every_fifth_of_a_second_never_moves_it_aside(tmp_path):
    path = tmp_path / "history.sqlite"
    first_row(path)
    writing = writer(path, threads=4, seconds=10)
    opens, moved = map(int, ended(python(OPENER, path, 10)))
    written = writing.ended()
    assert opens > 10 and len(written) > 1000
    assert (moved, moved_aside(tmp_path)) == (0, [])
    assert sorted(set(written) - set(stored_ids(path))) == []


def test_writers_whose_waits_for_the_lock_run_out_never_move_the_history_aside(tmp_path):
    path = tmp_path / "history.sqlite"
    first_row(path)
    writers = [writer(path, threads=2, seconds=12, busy=0.1) for _ in range(3)]
    time.sleep(1)
    with write_lock_held(path, 6):
        pass
    written = [call_id for process in writers for call_id in process.ended()]
    assert moved_aside(tmp_path) == []
    stored = stored_ids(path)
    assert sorted(set(written) - set(stored)) == [] and len(stored) == len(set(stored))


# ── 2. rows held through a long lock are all written, by several writers ────────────────


def test_rows_several_writers_held_through_a_long_lock_are_all_written_once(tmp_path):
    path = tmp_path / "history.sqlite"
    first_row(path)
    writers = [writer(path, threads=2, seconds=10, busy=0.1) for _ in range(2)]
    time.sleep(1)
    with write_lock_held(path, 7):
        pass
    written = [call_id for process in writers for call_id in process.ended()]
    stored = stored_ids(path)
    assert sorted(set(written) - set(stored)) == []
    assert len(stored) == len(set(stored)) and not [c for c in stored if "~" in c]


# ── 3. a clear is a clear for every reader, and stays one ───────────────────────────────


def test_clear_clears_for_every_reader_and_nothing_comes_back_after_kill_9(tmp_path):
    path = tmp_path / "history.sqlite"
    first_row(path)
    writing = Writer(path, threads=6, seconds=60)
    deadline = time.monotonic() + 120
    while len(writing.acknowledged()) <= 100 and time.monotonic() < deadline:
        time.sleep(0.05)  # until the writer has made calls to clear, however loaded the machine
    history = wb.History(path)
    began = time.monotonic()
    history.clear()
    history.close()
    cleared = [call_id for call_id, at in writing.acknowledged() if at < began]
    read = python(
        "import sys, warnings, workbench as wb\nwarnings.simplefilter('ignore')\n"
        "h = wb.History(sys.argv[1])\nprint(' '.join(r['call_id'] for r in h.rows()))",
        path,
    )
    seen_by_another = set(ended(read))
    time.sleep(1)
    writing.process.send_signal(signal.SIGKILL)
    writing.process.communicate()
    reopened = wb.History(path)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        after = {row["call_id"] for row in reopened.rows()}
    reopened.close()
    assert len(cleared) > 100
    assert sorted(seen_by_another & set(cleared)) == []  # cleared for another reader at once
    assert sorted(after & set(cleared)) == []  # and none comes back after kill -9
    assert "call_first" not in after | set(stored_ids(path))


# ── 4. a row updated after its commit stays one row ─────────────────────────────────────


def test_a_row_updated_after_its_commit_is_still_one_row_after_kill_9(tmp_path):
    path = tmp_path / "history.sqlite"
    code = WRITER + textwrap.dedent(
        """
        threading.Thread(target=calls, args=(0, 60), daemon=True).start()  # others go on
        time.sleep(1)
        updated = []
        for n in range(20):
            call = tools.invoke("echo", {"text": f"updated.{n}"})
            call.wait(60)
            tools.history.add_warning(call.id, "late result discarded after the call ended")
            tools.history.flush()
            updated.append(call.id)
        print(" ".join(updated), flush=True)
        sys.stdin.read()
        """
    )
    victim = python(code, path, 1.0, tmp_path / "others.ids")
    assert victim.stdout is not None
    updated = victim.stdout.readline().split()
    victim.send_signal(signal.SIGKILL)
    victim.communicate()
    history = wb.History(path)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        rows = {row["call_id"]: row for row in history.rows()}
        ids = [row["call_id"] for row in history.rows()]
    history.close()
    assert len(updated) == 20 and len(ids) == len(set(ids))
    assert [c for c in ids if "~" in c] == []  # no copy under another id
    for call_id in updated:
        warnings_of = rows[call_id]["warnings"]
        assert "late result discarded after the call ended" in warnings_of
        assert not any("already taken" in warning for warning in warnings_of)


# ── 5. files named like the history's own are never taken ──────────────────────────────


def test_an_export_and_another_history_named_like_its_files_are_left_as_they_are(tmp_path):
    path = tmp_path / "history.sqlite"
    export = path.with_name("history.sqlite.log-export.jsonl")
    export.write_text(
        "".join(json.dumps({"call_id": f"call_x{n}", "tool": "exported"}) + "\n" for n in range(3))
    )
    other = wb.History(path.with_name("history.sqlite.log-2"))
    for n in range(5):
        other.record({"call_id": f"call_other{n}", "tool": "other"})
    other.close()
    before = {p: p.read_bytes() for p in (export, Path(other.path))}
    written = writer(path, threads=1, seconds=1).ended()
    history = wb.History(path)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ids = [row["call_id"] for row in history.rows()]
    history.close()
    assert ids == written
    assert {p: p.read_bytes() if p.exists() else None for p in before} == before
    assert stored_ids(Path(other.path)) == [f"call_other{n}" for n in range(5)]


# ── 6. readers in other processes: each row once, none lost between reads ──────────────


READER = """
import sys, time, warnings
import workbench as wb
warnings.simplefilter("ignore")
history = wb.History(sys.argv[1])
end = time.monotonic() + float(sys.argv[2])
twice = vanished = reads = 0
before = set()
while time.monotonic() < end:
    ids = [row["call_id"] for row in history.rows()]
    now = set(ids)
    twice += len(ids) - len(now)
    vanished += len(before - now)
    before = now
    reads += 1
    time.sleep(0.1)
history.close()
print(reads, twice, vanished)
"""


def test_readers_in_other_processes_see_each_row_once_and_lose_none_between_reads(tmp_path):
    path = tmp_path / "history.sqlite"
    first_row(path)
    writing = writer(path, threads=2, seconds=9, busy=0.1)
    reading = python(READER, path, 9)
    time.sleep(2)
    with write_lock_held(path, 4):
        pass
    reads, twice, vanished = map(int, ended(reading))
    writing.ended()
    assert reads > 10
    assert (twice, vanished) == (0, 0)


# ── 7. bounded: a long lock makes calls wait, a leftover spill is written in small memory ─


def test_a_long_lock_makes_calls_wait_past_the_limit_and_the_spill_stays_bounded(tmp_path):
    path = tmp_path / "history.sqlite"
    first_row(path)
    code = WRITER.replace(
        "wb.History(sys.argv[1], busy_timeout=float(sys.argv[2]))",
        "wb.History(sys.argv[1], busy_timeout=float(sys.argv[2]), spill_limit=1 << 20)",
    )
    writing = Writer(path, 4, 12, 0.1, code)
    time.sleep(1)
    largest = 0
    with write_lock_held(path, 8) as holder:
        while holder.poll() is None:
            for spill in path.parent.glob("history.sqlite.spill-*"):
                with contextlib.suppress(FileNotFoundError):
                    largest = max(largest, spill.stat().st_size)
            time.sleep(0.05)
    written = writing.ended()
    assert 0 < largest <= (1 << 20) + 64 * 1024, largest
    assert sorted(set(written) - set(stored_ids(path))) == []


PEAK = """
import re, sys, warnings
import workbench as wb
warnings.simplefilter("ignore")
history = wb.History(sys.argv[1])
count = len(history)
history.close()
print(count, re.search(r"VmHWM:\\s+(\\d+) kB", open("/proc/self/status").read()).group(1))
"""


def old_log_line(n: int) -> bytes:
    """A line of the previous version's commit log: the scalars as a JSON array, a tab, the
    sealed document."""
    from workbench.history.row import encode

    values = encode(wb.history.CallRecord(call_id=f"call_{n:07}", tool="t", receipt="r" * 300))
    return json.dumps(values[:-1]).encode() + b"\t" + values[-1].encode() + b"\n"


def test_a_leftover_log_of_the_previous_version_is_written_once_in_bounded_memory(tmp_path):
    path = tmp_path / "history.sqlite"
    first_row(path)
    _, baseline = map(int, ended(python(PEAK, path)))
    rows = 150_000
    log = path.with_name(path.name + ".log-0123456789abcdef")
    with log.open("wb") as handle:
        for n in range(rows):
            handle.write(old_log_line(n))
    size = log.stat().st_size
    count, peak = map(int, ended(python(PEAK, path), timeout=600))
    assert count == rows + 1 and not log.exists()
    assert (peak - baseline) * 1024 < size / 2, (peak, baseline, size)
    count_again, _ = map(int, ended(python(PEAK, path)))  # once, never again
    assert count_again == rows + 1


# ── 8. pool workers' rows are in SQLite for every reader ────────────────────────────────


POOL = (
    WRITER
    + """
import multiprocessing

def job(n):
    return [tools.invoke("echo", {"text": f"pool.{n}.{k}"}).wait(60).call_id for k in range(3)]

tools.invoke("echo", {"text": "parent"}).wait(60)
# Each worker ends (os._exit) right after its task, as a pool with maxtasksperchild does.
pool = multiprocessing.get_context("fork").Pool(2, maxtasksperchild=1)
made = [call_id for ids in pool.map(job, range(14)) for call_id in ids]
pool.close()
pool.join()  # the workers end with os._exit
print(json.dumps(made), flush=True)
sys.stdin.read()
"""
)

EVERY_READER = """
import json, sqlite3, sys, warnings
import pandas as pd
import workbench as wb

warnings.simplefilter("ignore")
path = sys.argv[1]
conn = sqlite3.connect(path)
plain = sorted(row[0] for row in conn.execute("SELECT call_id FROM calls"))
frame = pd.read_sql("SELECT call_id FROM calls", conn)
history = wb.History(path)
pages, paged, before = wb.history.HistoryPages(history), 0, None
while True:
    page = pages.page(10, before=before)
    paged += len(page.rows)
    if not page.has_older:
        break
    before = page.oldest_key
counts = {
    "sqlite3": len(plain),
    "pandas read_sql": len(frame),
    "History.sql": int(history.sql("SELECT count(*) AS n FROM calls")["n"][0]),
    "len(History)": len(history),
    "to_dataframe": len(history.to_dataframe()),
    "the history view's pages": paged,
}
print(json.dumps({"ids": plain, "counts": counts}))
"""


def test_rows_of_forked_pool_workers_are_seen_by_every_reader_at_once(tmp_path):
    path = tmp_path / "history.sqlite"
    parent = python(POOL, path, 1.0)
    try:
        assert parent.stdout is not None
        made = json.loads(parent.stdout.readline())
        assert len(made) == 42
        # The workers ended with os._exit and their parent still lives: nothing of theirs is
        # waiting anywhere, every reader of the file has every row now.
        seen = json.loads(output(python(EVERY_READER, path)))
    finally:
        parent.kill()
        parent.communicate()
    assert sorted(set(made) - set(seen["ids"])) == []
    assert set(seen["counts"].values()) == {43}, seen["counts"]


# ── 10. a closed history leaves no thread ───────────────────────────────────────────────


def test_closed_histories_leave_no_thread_behind(tmp_path):
    def history_threads() -> list[str]:
        return [t.name for t in threading.enumerate() if t.name.startswith("workbench-history")]

    before = history_threads()
    for n in range(20):
        tools = wb.Registry(history=tmp_path / f"history-{n}.sqlite")

        @tools.tool
        def add(a: int) -> int:
            """Add nothing."""
            return a

        calls = tools.invoke_many([("add", {"a": k}) for k in range(20)])
        for call in calls:
            call.wait(30)
        tools.history.add_warning(calls[0].id, "edited")
        tools.history.close()
    assert history_threads() == before


@pytest.fixture(autouse=True)
def _no_process_left(tmp_path):
    yield
    mine = str(tmp_path).encode()
    left = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and int(entry.name) != os.getpid():
            with contextlib.suppress(OSError):
                if mine in (entry / "cmdline").read_bytes():
                    left.append(entry.name)
    assert left == []
