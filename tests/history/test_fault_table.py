"""The fault table: each real fault of the robustness matrix run in a child process of its own,
and five numbers measured for every one of them, each asserted.

- **rows lost**: calls reported ended, or rows reported written, that do not come back;
- **rows silently wrong**: rows that come back with content other than what the call produced
  (its status and receipt), or rows nobody here wrote, carrying no warning that says so;
- **survivors**: processes the fault left alive, counted in ``/proc`` by a marker each fault's
  processes carry in their environment;
- **escapes**: bytes written outside where they belong: growth of a file another user planted,
  and bytes in the shared temporary directory outside this user's private spill directory;
- **peak memory**: the highest VmHWM of the fault's processes, in MiB, bounded by a small
  multiple of a child that records and reads back one trivial call.

Each fault runs in a fresh ``python`` (the ``run_fault`` entry point below), several at once.
The table is written to ``test-output/fault-table.md`` for a person to read.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import resource
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import uuid
import warnings
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, NamedTuple

import workbench as wb
from tests.conftest import wait_until
from tests.history.support import NOBODY
from tests.history.test_fault_matrix import CHILD_PRELUDE, registry_at
from tests.history.test_salvage import (
    build_history,
    damage_warnings,
    damaged_log_copy,
    overwrite_log_header,
)
from tests.runtime.test_forks import PRELUDE
from tests.runtime.test_left_behind import start_on, stubborn_registry
from workbench.history.row import encode
from workbench.history.spill import lines_of, private_directory

REPO = Path(__file__).resolve().parents[2]
TABLE = REPO / "test-output" / "fault-table.md"
MARKER = "WORKBENCH_FAULT_TABLE"
PLANTED_TARGET, PRECIOUS = "victim.txt", b"precious\n"
HUGE = 8_000_000  # characters of raw arguments in the refused call
# A fault's peak may be at most this many times the child that records one trivial call; a
# history read back by a fresh process, this many times one holding that single call.
PEAK_BOUND, READ_BACK_BOUND = 3, 1.5

# What each call produced, as its row must hold it: (call id, status, receipt). A list, so that
# two calls given one id are two entries.
Produced = list[tuple[str, str, str | None]]


class Counted(NamedTuple):
    """Rows lost and rows silently wrong, and the peak of a fresh process reading the history
    back where the fault measures one (KiB)."""

    lost: int
    wrong: int
    read_back_kib: int = 0


@dataclass(frozen=True)
class Measured:
    """What a fault's child measured itself; survivors are counted from outside."""

    lost: int
    wrong: int
    escapes: int
    peak_kib: int
    read_back_kib: int


# ── measuring, inside the fault's child ────────────────────────────────────────────────


def peak_kib() -> int:
    """The highest resident size of this process and of every child it waited for, in KiB."""
    status = Path("/proc/self/status").read_text()
    found = re.search(r"VmHWM:\s+(\d+) kB", status)
    assert found is not None
    return max(int(found.group(1)), resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)


def read_rows(path: Path) -> list[dict[str, Any]]:
    """Every row of the history at ``path``, opened afresh as a user would open it."""
    history = wb.History(path)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the problems are counted from the rows themselves
        rows = history.rows()
    history.close()
    return rows


def tally(produced: Produced, rows: Iterable[dict[str, Any]]) -> Counted:
    """(lost, silently wrong): produced calls whose row does not come back as they produced
    it, and unflagged rows that hold what no call here produced."""
    rows = list(rows)
    held = [(stored["call_id"], stored["status"], stored["receipt"]) for stored in rows]
    lost = sum(1 for call in produced if call not in held)
    made = set(produced)
    wrong = sum(
        1
        for stored, content in zip(rows, held, strict=True)
        if content not in made and damage_warnings(stored, {"warnings": []}) == []
    )
    return Counted(lost, wrong)


def escaped(shared: Path, allowed: Path) -> int:
    """Bytes written outside where they belong: growth of the file another user planted, and
    the bytes of any other file in the shared temporary directory outside ``allowed``."""
    planted = shared / PLANTED_TARGET
    total = max(planted.stat().st_size - len(PRECIOUS), 0) if planted.exists() else 0
    for path in shared.rglob("*"):
        if path == planted or not path.is_file() or path.is_symlink():
            continue
        if allowed != shared and allowed in path.parents:
            continue
        total += path.stat().st_size
    return total


def adder(directory: Path) -> wb.Registry:
    return registry_at(directory / "db" / "history.sqlite")


def produced_by(calls: Iterable[wb.Call]) -> Produced:
    """What each ended call produced, as the caller saw it."""
    return [
        (call.id, envelope.status, call.receipt) for call in calls if (envelope := call.envelope)
    ]


# ── the faults ─────────────────────────────────────────────────────────────────────────


def one_trivial_call(root: Path) -> Counted:
    tools = adder(root)
    produced = produced_by([call for call in [tools.invoke("add", {"a": 1})] if call.wait(30)])
    tools.history.close()
    return read_back(produced, tools.history.path)


KILLED_MID_BURST = """
i = 0
while True:
    burst = tools.invoke_many([("add", {"a": i + n}) for n in range(20)])
    for call in burst:
        print(call.id, call.wait(30).status, call.receipt, flush=True)
    i += 20
"""


def kill_9_during_concurrent_calls(root: Path) -> Counted:
    path = root / "db" / "history.sqlite"
    with subprocess.Popen(
        [sys.executable, "-c", CHILD_PRELUDE + KILLED_MID_BURST, str(path)],
        stdout=subprocess.PIPE,
        text=True,
        cwd=root,
    ) as victim:
        assert victim.stdout is not None
        lines = [victim.stdout.readline() for _ in range(400)]
        victim.send_signal(signal.SIGKILL)
        victim.wait()
        lines += list(victim.stdout)
    produced = [(cid, status, receipt) for cid, status, receipt in map(str.split, lines) if cid]
    assert len(produced) >= 400
    return tally(produced, read_rows(path))


FORKED_WORKERS = """
def calls(base):
    ended = [tools.invoke("add", {"a": base + i}) for i in range(5)]
    ended += tools.invoke_many([("add", {"a": base + 5 + i}) for i in range(3)])
    return [[call.id, call.wait(60).status, call.receipt] for call in ended]

produced = calls(0)
for worker in (1, 2):
    if os.fork() == 0:  # the worker reports what its calls produced in a file of its own
        try:
            report = calls(worker * 1000)
            tools.history.flush()
            with open(f"worker-{worker}.json", "w") as handle:
                json.dump(report, handle)
        finally:
            os._exit(0)
for _ in (1, 2):
    os.wait()
for worker in (1, 2):
    with open(f"worker-{worker}.json") as handle:
        produced += json.load(handle)
tools.history.close()
print(json.dumps(produced))
"""


def from_json(text: str) -> Produced:
    return [(call_id, status, receipt) for call_id, status, receipt in json.loads(text)]


def two_forked_workers(root: Path) -> Counted:
    path = root / "db" / "history.sqlite"
    done = subprocess.run(
        [sys.executable, "-c", PRELUDE + FORKED_WORKERS, str(path), str(root / "artifacts")],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    return tally(from_json(done.stdout), read_rows(path))


def two_separate_processes(root: Path) -> Counted:
    path = root / "db" / "history.sqlite"
    body = FORKED_WORKERS.split("produced = calls(0)")[0] + (
        "print(json.dumps(calls(int(sys.argv[3]) * 1000)))\n"
    )
    workers = [
        subprocess.Popen(
            [sys.executable, "-c", PRELUDE + body, str(path), str(root / "a"), str(n)],
            stdout=subprocess.PIPE,
            text=True,
        )
        for n in range(2)
    ]
    produced: Produced = []
    for worker in workers:
        out, _ = worker.communicate(timeout=120)
        assert worker.returncode == 0
        produced += from_json(out)
    return tally(produced, read_rows(path))


def the_wal_header_overwritten(root: Path) -> Counted:
    copy, ids, _ = damaged_log_copy(root, 150, overwrite_log_header)
    produced = [(call_id, "success", str(i)) for i, call_id in enumerate(ids)]
    return tally(produced, read_rows(copy))


def the_database_header_zeroed(root: Path) -> Counted:
    path = build_history(root)
    produced = [(r["call_id"], r["status"], r["receipt"]) for r in read_rows(path)]
    data = bytearray(path.read_bytes())
    data[0:100] = bytes(100)
    path.write_bytes(data)
    return tally(produced, read_rows(path))


def planted_at_the_spills_names(root: Path) -> Counted:
    """Files another user planted where a history's spills go: beside the history, a symlink
    to a file of theirs in the shared temporary directory, a spill of theirs holding a forged
    row, and a file of this user's that is not a spill; then calls made while another process
    holds SQLite's write lock, so the history's own rows go to a spill of its own."""
    target = Path(tempfile.gettempdir()) / PLANTED_TARGET
    target.write_bytes(PRECIOUS)
    os.chmod(target, 0o666)
    directory = root / "db"
    directory.mkdir()
    path = directory / "history.sqlite"
    forged_row = wb.history.CallRecord(call_id="call_forged", tool="rm -rf /", status="success")
    forged = lines_of([["row", *encode(forged_row)]])

    # Planted by root, then given to another user (``nobody``): as if they had made them.
    link = directory / "history.sqlite.spill-00000000000000aa"
    link.symlink_to(target)
    foreign = directory / "history.sqlite.spill-00000000000000bb"
    foreign.write_bytes(
        b"workbench-history-spill 1 " + json.dumps(str(path)).encode() + b"\n" + forged
    )
    for planted in (link, foreign):
        os.lchown(planted, NOBODY, NOBODY)
    (directory / "history.sqlite.spill-00000000000000cc").write_bytes(forged)  # no first line
    tools = registry_at(path, busy_timeout=0.05)
    produced = produced_by([call for call in [tools.invoke("add", {"a": 1})] if call.wait(30)])
    holder = sqlite3.connect(path, isolation_level=None, timeout=30)
    holder.execute("BEGIN IMMEDIATE")
    try:
        produced += produced_by([call for call in [tools.invoke("add", {"a": 2})] if call.wait(30)])
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    tools.history.close()
    return tally(produced, read_rows(path))


def huge_refused_arguments_read_back(root: Path) -> Counted:
    tools = adder(root)
    calls = [tools.invoke("add", {"a": ["7" * HUGE]}), tools.invoke("add", {"a": 1})]
    produced = produced_by([call for call in calls if call.wait(60)])
    tools.history.close()
    del calls
    return read_back(produced, tools.history.path)


READ_BACK = """
import json, re, sys, warnings
import workbench as wb
history = wb.History(sys.argv[1])
with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    for stored in history.rows():
        print(json.dumps({k: stored[k] for k in ("call_id", "status", "receipt", "warnings")}))
print(re.search(r"VmHWM:\\s+(\\d+) kB", open("/proc/self/status").read()).group(1))
"""


def read_back(produced: Produced, path: Path) -> Counted:
    """Tally the history as a fresh process reads it back, with that process's peak."""
    reader = subprocess.run(
        [sys.executable, "-c", READ_BACK, str(path)],
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )
    *rows, peak = reader.stdout.splitlines()
    return tally(produced, map(json.loads, rows))._replace(read_back_kib=int(peak))


def bodies_left_running(root: Path) -> Counted:
    """Two bodies that ignore their timeout with max_concurrency=2, three quick calls queued
    behind them: a quick call with no row while the bodies are stuck counts as lost."""
    tools, release, _ = stubborn_registry(root, slots=2)
    try:
        stuck = start_on("lanes", tools, ["stubborn", "stubborn"])
        assert wait_until(lambda: all(call.done for call in stuck), timeout=30)
        quick = start_on("lanes", tools, ["quick"] * 3)
        with contextlib.suppress(TimeoutError):  # a quick call still queued is counted below
            for call in quick:
                call.wait(10)
        tools.history.flush()
        counted = tally(produced_by([*stuck, *quick]), read_rows(tools.history.path))
        lost, wrong = counted.lost + sum(not call.done for call in quick), counted.wrong
    finally:
        release.set()
    assert wait_until(lambda: all(call.done for call in quick), timeout=60)
    tools.history.close()
    # Once the bodies return, the rows of the calls reported stopped still say so.
    later = tally(produced_by([*stuck, *quick]), read_rows(tools.history.path))
    return Counted(lost + later.lost, wrong + later.wrong)


FAULTS: dict[str, Callable[[Path], Counted]] = {
    "one trivial call (the baseline)": one_trivial_call,
    "kill -9 during concurrent calls": kill_9_during_concurrent_calls,
    "two forked workers writing one history": two_forked_workers,
    "two separate processes writing one history": two_separate_processes,
    "the WAL's header overwritten": the_wal_header_overwritten,
    "the database header zeroed (salvage)": the_database_header_zeroed,
    "a symlink, another user's spill and a file not a spill planted at the spills' names": (
        planted_at_the_spills_names
    ),
    "one refused call with 8 MB of raw arguments read back": huge_refused_arguments_read_back,
    "bodies left running, quick calls queued behind them": bodies_left_running,
}
BASELINE = next(iter(FAULTS))


def run_fault() -> None:
    """Entry point of a fault's child: ``run_fault(name, root, shared)`` from argv; prints the
    measurement as JSON."""
    name, root, shared = sys.argv[1], Path(sys.argv[2]), Path(sys.argv[3])
    tempfile.tempdir = str(shared)
    counted = FAULTS[name](root)
    allowed = private_directory()  # this user's spills
    escapes = escaped(shared, allowed)
    measured = Measured(counted.lost, counted.wrong, escapes, peak_kib(), counted.read_back_kib)
    print(json.dumps(asdict(measured)))


# ── the table ──────────────────────────────────────────────────────────────────────────


def survivors(marker: str) -> int:
    """Processes alive whose environment carries ``marker``."""
    count = 0
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            with contextlib.suppress(OSError):  # a process that ended while we looked
                if marker.encode() in (entry / "environ").read_bytes():
                    count += 1
    return count


def measure(name: str, tmp_path: Path) -> tuple[Measured, int]:
    root = tmp_path / re.sub(r"\W+", "-", name)
    root.mkdir()
    # Sticky and world-writable like /tmp, and outside pytest's private directories, so that
    # another user can plant names in it.
    shared = Path(tempfile.mkdtemp(prefix="wb-fault-table-", dir="/tmp"))
    os.chmod(shared, 0o1777)
    marker = f"{MARKER}={uuid.uuid4().hex}"
    key, value = marker.split("=")
    env = os.environ | {
        key: value,
        "TMPDIR": str(shared),
        "PYTHONPATH": os.pathsep.join(filter(None, [os.environ.get("PYTHONPATH"), str(REPO)])),
    }
    try:
        done = subprocess.run(
            [
                sys.executable,
                "-c",
                "from tests.history.test_fault_table import run_fault; run_fault()",
                name,
                str(root),
                str(shared),
            ],
            capture_output=True,
            text=True,
            timeout=240,
            cwd=REPO,
            env=env,
            check=False,
        )
        assert done.returncode == 0, f"{name}: {done.stderr[-3000:]}"
        return Measured(**json.loads(done.stdout.splitlines()[-1])), survivors(marker)
    finally:
        shutil.rmtree(shared)


def mib(kib: int) -> str:
    return f"{kib / 1024:.0f}"


def write_table(results: dict[str, tuple[Measured, int]], bounds: tuple[int, int]) -> str:
    """The table as markdown, written to ``test-output/fault-table.md`` too."""
    peak_bound, read_back_bound = (f"≤ {mib(bound)}" for bound in bounds)
    lines = [
        "| fault | rows lost | rows silently wrong | survivors | escapes (bytes) "
        "| peak memory (MiB) | read back by a fresh process (MiB) |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for name, (measured, alive) in results.items():
        read = measured.read_back_kib
        lines.append(
            f"| {name} | {measured.lost} | {measured.wrong} | {alive} | {measured.escapes} "
            f"| {mib(measured.peak_kib)} ({peak_bound}) "
            f"| {f'{mib(read)} ({read_back_bound})' if read else '—'} |"
        )
    text = "\n".join(lines) + "\n"
    TABLE.parent.mkdir(exist_ok=True)
    TABLE.write_text(f"# Fault table\n\n{text}")
    return text


def test_every_fault_loses_nothing_lets_nothing_in_and_stays_bounded(tmp_path):
    assert os.geteuid() == 0, "planting as another user needs root: run the tests as root"
    with ThreadPoolExecutor(max_workers=3) as pool:
        futures = {name: pool.submit(measure, name, tmp_path) for name in FAULTS}
        results = {name: future.result() for name, future in futures.items()}
    baseline = results[BASELINE][0]
    bounds = (PEAK_BOUND * baseline.peak_kib, int(READ_BACK_BOUND * baseline.read_back_kib))
    table = write_table(results, bounds)
    for name, (measured, alive) in results.items():
        assert (measured.lost, measured.wrong, alive, measured.escapes) == (0, 0, 0, 0), (
            f"{name}\n{table}"
        )
        assert measured.peak_kib <= bounds[0], f"{name}\n{table}"
        assert measured.read_back_kib <= bounds[1], f"{name}\n{table}"
