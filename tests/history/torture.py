"""The history's torture: several processes on one history file at once, the faults of real use
among them, and an account of every call kept apart from the history, checked at the end.

Roles, each a process of its own (``python -m tests.history.torture ROLE ...``):

- **writers** (2-4 at a time): threads making calls through ``wait()``, an asyncio loop making
  them through ``await``, bursts through ``invoke_many``, and late updates of ended calls
  (``add_warning``, then ``flush``); each call is written down in the writer's own account
  (an ``O_APPEND`` file, one ``write`` a line) once the call is seen to end;
- **a pool writer**: ``multiprocessing`` fork workers making calls through the registry they
  inherited (the pool ends them with ``os._exit``);
- **a reader**: one ``History`` kept open, read by plain ``sqlite3`` and by ``History.rows()``;
- **an opener**: opens a ``History``, reads ``len()`` and closes it, every 0.2 s;
- **a clearer**: ``History.clear()`` at set moments;
- **a locker**: holds SQLite's write lock for 20-60 s;
- **a filler**: fills the small disk the history lives on, then frees it;
- and the conductor kills writers with ``kill -9`` at random moments and starts new ones.

Files are planted at names like the spill's and the old commit log's before anything starts;
none of them may be read, moved or removed.

The checker (``check``) reads the file with plain ``sqlite3``, before and after a history is
opened again, against the accounts, and counts what must be zero: acknowledged rows missing,
rows present twice, updates lost, phantom rows, cleared rows come back, histories moved aside
(no damage is injected), planted files touched, threads left by a closed history, reads that
saw a row twice or lost one. Everything is seeded; the seed is printed.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import itertools
import json
import multiprocessing
import os
import random
import re
import signal
import sqlite3
import subprocess
import sys
import threading
import time
import warnings
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
TOKEN = re.compile(r"^(w\d+|p\d+)\.(\d+)\.(\d+)(-\d+)?$")
"""The text every call of the torture echoes: who made it (writer or pool), thread, sequence."""
PLANTED_VICTIM = b"a file someone else owns\n"


# ── the accounts ───────────────────────────────────────────────────────────────────────


class Account:
    """A process's own record of what it did: one line a ``write`` to an ``O_APPEND`` file,
    so a line written before a ``kill -9`` is on disk whole."""

    def __init__(self, path: Path) -> None:
        self._fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        self._lock = threading.Lock()

    def say(self, *fields: object) -> None:
        line = (" ".join(str(field) for field in fields) + "\n").encode()
        with self._lock:
            os.write(self._fd, line)


def lines(directory: Path, pattern: str) -> Iterator[list[str]]:
    """The whole lines of every account matching ``pattern``, split into fields."""
    for path in sorted(directory.glob(pattern)):
        for line in path.read_text(errors="replace").splitlines():
            if line.strip():
                yield line.split(" ")


def stop_requested(stop: Path) -> bool:
    return stop.exists()


# ── the roles ──────────────────────────────────────────────────────────────────────────


def _registry(path: Path, artifacts: Path) -> Any:
    import workbench as wb

    tools = wb.Registry(history=path, artifacts=artifacts)

    @tools.tool
    def echo(text: str) -> str:
        """Return the text."""
        return text

    @tools.tool
    async def echo_later(text: str) -> str:
        """Return the text, after giving the loop a turn."""
        await asyncio.sleep(0)
        return text

    return tools


def _held(envelope: Any) -> int:
    """1 when the call was told its row is held outside SQLite for now (not yet committed)."""
    return int(any("held" in warning for warning in envelope.warnings))


def writer(path: Path, logs: Path, stop: Path, name: str, threads: int, seed: int) -> None:
    warnings.simplefilter("ignore")
    tools = _registry(path, logs / "artifacts")
    account = Account(logs / f"{name}.acks")
    account.say("S", os.getpid(), time.monotonic())

    def ended(call: Any, began: float, envelope: Any) -> None:
        account.say("A", call.id, began, time.monotonic(), _held(envelope), call.receipt)

    def calls(thread: int) -> None:
        chance = random.Random(f"{seed}/{name}/{thread}")
        seq = 0
        while not stop_requested(stop):
            token = f"{name}.{thread}.{seq}"
            roll = chance.random()
            began = time.monotonic()
            if roll < 0.08:
                burst = tools.invoke_many([("echo", {"text": f"{token}-{k}"}) for k in range(1, 9)])
                for call in burst:
                    ended(call, began, call.wait(300))
                call = burst[-1]
            else:
                call = tools.invoke("echo", {"text": token})
                ended(call, began, call.wait(300))
            if roll > 0.97:
                note = f"late {token}"
                tools.history.add_warning(call.id, note)
                tools.history.flush()
                account.say("U", call.id, time.monotonic(), note.replace(" ", "_"))
            seq += 1

    async def awaited() -> None:
        seq = 0
        while not stop_requested(stop):
            token = f"{name}.{threads}.{seq}"
            began = time.monotonic()
            call = tools.invoke("echo_later" if seq % 2 else "echo", {"text": token})
            ended(call, began, await call)
            seq += 1

    workers = [threading.Thread(target=calls, args=(n,)) for n in range(threads)]
    workers.append(threading.Thread(target=asyncio.run, args=(awaited(),)))
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    tools.history.close()
    left = [t.name for t in threading.enumerate() if t.name.startswith("workbench-history")]
    account.say("T", len(left))


def _pool_calls(job: tuple[str, int]) -> list[tuple[str, float, float, int, str]]:
    """In a forked worker: three calls through the registry it inherited."""
    name, base = job
    tools = _POOL_TOOLS[0]
    made = []
    for k in range(3):
        began = time.monotonic()
        call = tools.invoke("echo", {"text": f"{name}.{base}.{k}"})
        envelope = call.wait(300)
        made.append((call.id, began, time.monotonic(), _held(envelope), call.receipt))
    return made


_POOL_TOOLS: list[Any] = []


def pool_writer(path: Path, logs: Path, stop: Path, name: str, seed: int) -> None:
    warnings.simplefilter("ignore")
    tools = _registry(path, logs / "artifacts")
    _POOL_TOOLS.append(tools)
    account = Account(logs / f"{name}.acks")
    account.say("S", os.getpid(), time.monotonic())
    tools.invoke("echo", {"text": f"{name}.0.0"}).wait(300)  # the parent has used it first
    context = multiprocessing.get_context("fork")
    base = 1
    while not stop_requested(stop):
        pool = context.Pool(2)
        try:
            for made in pool.map(_pool_calls, [(name, base + n) for n in range(4)]):
                for call_id, began, at, held, receipt in made:
                    account.say("A", call_id, began, at, held, receipt)
        finally:
            pool.close()  # the workers end with os._exit once their queue is empty
            pool.join()
        base += 4
    tools.history.close()


def reader(path: Path, logs: Path, stop: Path) -> None:
    """Reads the file again and again: plain ``sqlite3`` every 0.3 s, ``History.rows()``
    every 3 s; each read says how many ids it saw twice, and how many ids it had seen in the
    read before and no longer sees (the checker forgives the reads a clear overlapped)."""
    import workbench as wb

    warnings.simplefilter("ignore")
    account = Account(logs / "reader.reads")
    history = wb.History(path)
    before: set[str] = set()
    last_rows = 0.0
    while not stop_requested(stop):
        start = time.monotonic()
        try:
            with contextlib.closing(sqlite3.connect(path, timeout=60)) as conn:
                ids = [row[0] for row in conn.execute("SELECT call_id FROM calls")]
        except sqlite3.Error as exc:
            account.say("E", start, repr(exc).replace(" ", "_"))
            time.sleep(0.3)
            continue
        now = set(ids)
        account.say("R", start, time.monotonic(), len(ids), len(ids) - len(now), len(before - now))
        before = now
        if start - last_rows > 3:
            last_rows = start
            seen = Counter(row["call_id"] for row in history.rows())
            twice = sum(1 for count in seen.values() if count > 1)
            account.say("W", start, time.monotonic(), sum(seen.values()), twice)
        time.sleep(0.3)
    history.close()


def opener(path: Path, logs: Path, stop: Path) -> None:
    import workbench as wb

    warnings.simplefilter("ignore")
    account = Account(logs / "opener.opens")
    while not stop_requested(stop):
        history = wb.History(path)
        count = len(history)
        moved = len(history.moved_aside) + sum(p.kind == "corrupt" for p in history.problems)
        history.close()
        account.say("O", time.monotonic(), count, moved)
        time.sleep(0.2)


def clearer(path: Path, logs: Path, at: float) -> None:
    import workbench as wb

    warnings.simplefilter("ignore")
    account = Account(logs / "clearer.clears")
    history = wb.History(path)
    start = time.monotonic()
    try:
        history.clear()
    except wb.history.HistoryError as exc:  # refused, nothing deleted: said, and no clear
        account.say("c", start, time.monotonic(), str(exc).replace(" ", "_"))
    else:
        account.say("C", start, time.monotonic())
    history.close()


def locker(path: Path, logs: Path, seconds: float) -> None:
    account = Account(logs / "locker.holds")
    conn = sqlite3.connect(path, isolation_level=None, timeout=60)
    conn.execute("BEGIN IMMEDIATE")
    start = time.monotonic()
    account.say("L", start)
    time.sleep(seconds)
    conn.execute("COMMIT")
    conn.close()
    account.say("l", time.monotonic())


def filler(directory: Path, logs: Path, seconds: float) -> None:
    """Fill the disk ``directory`` is on to its last byte, hold it full, then free it."""
    account = Account(logs / "filler.fills")
    filler_path = directory / "filler"
    with filler_path.open("wb", buffering=0) as handle:
        with contextlib.suppress(OSError):  # the disk is full: that is the point
            while True:
                handle.write(b"\0" * 65536)
        with contextlib.suppress(OSError):
            while True:
                handle.write(b"\0")
    account.say("F", time.monotonic())
    time.sleep(seconds)
    filler_path.unlink()
    account.say("f", time.monotonic())


# ── the conductor ──────────────────────────────────────────────────────────────────────


@dataclasses.dataclass(frozen=True)
class Plan:
    """When each fault happens, in seconds from the start; all drawn from ``seed``."""

    seed: int
    seconds: float
    lock_at: float
    lock_for: float
    clears: tuple[float, ...]
    kills: tuple[float, ...]
    fill_at: float
    fill_for: float

    @classmethod
    def drawn(cls, seed: int, seconds: float) -> Plan:
        chance = random.Random(seed)
        lock_for = min(max(20.0, seconds / 3), 60.0)
        lock_at = chance.uniform(3, max(4.0, seconds - lock_for - 12))
        kills = tuple(
            sorted(chance.uniform(3, seconds - 3) for _ in range(max(2, int(seconds / 25))))
        )
        clears = tuple(
            sorted(
                chance.uniform(seconds * 0.3, seconds * 0.8) for _ in range(1 + int(seconds > 120))
            )
        )
        fill_at = chance.uniform(seconds * 0.5, seconds * 0.85)
        return cls(seed, seconds, lock_at, lock_for, clears, kills, fill_at, min(5.0, seconds / 12))


def _spawn(role: str, *args: object, env: dict[str, str]) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", "tests.history.torture", role, *map(str, args)],
        cwd=REPO,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )


PLANTED = {
    "export": "history.sqlite.log-export.jsonl",
    "second history": "history.sqlite.log-2",
    "headerless spill": "history.sqlite.spill-00112233445566aa",
    "foreign spill": "history.sqlite.spill-00112233445566bb",
    "symlinked spill": "history.sqlite.spill-00112233445566cc",
    "old-looking log": "history.sqlite.log-00112233445566dd",
}


def plant(directory: Path, victim: Path) -> dict[str, bytes | None]:
    """Files at names a history might take for its own; returns what each held (None for the
    symlink, whose target ``victim`` is checked instead)."""
    export = b"".join(
        json.dumps({"call_id": f"call_export{n}", "tool": "exported"}).encode() + b"\n"
        for n in range(3)
    )
    (directory / PLANTED["export"]).write_bytes(export)
    with contextlib.closing(sqlite3.connect(directory / PLANTED["second history"])) as conn:
        conn.execute("CREATE TABLE calls (seq INTEGER PRIMARY KEY, call_id TEXT, record TEXT)")
        conn.executemany(
            "INSERT INTO calls (call_id, record) VALUES (?, '{}')",
            [(f"call_other{n}",) for n in range(5)],
        )
        conn.commit()
    (directory / PLANTED["headerless spill"]).write_bytes(export)
    foreign = directory / PLANTED["foreign spill"]
    foreign.write_bytes(b"workbench-history-spill 1\n" + export)
    os.chown(foreign, 4321, 4321)
    (directory / PLANTED["old-looking log"]).write_bytes(export)
    victim.write_bytes(PLANTED_VICTIM)
    (directory / PLANTED["symlinked spill"]).symlink_to(victim)
    held: dict[str, bytes | None] = {}
    for key, name in PLANTED.items():
        planted = directory / name
        held[key] = None if planted.is_symlink() else planted.read_bytes()
    return held


def environment(spare: Path) -> dict[str, str]:
    """The environment of every process the torture starts: this checkout's workbench, and
    ``spare`` as the temporary folder (where a spill goes when the history's disk is full)."""
    return os.environ | {
        "TMPDIR": str(spare),
        "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")])),
    }


def conduct(
    directory: Path, logs: Path, spare: Path, plan: Plan, writers: int = 3
) -> dict[str, Any]:
    """Run every role on ``directory/history.sqlite`` for ``plan.seconds``; returns the
    conductor's own account: which writers were killed, which roles would not stop, and the
    end of the stderr of any role that failed."""
    path = directory / "history.sqlite"
    stop = logs / "stop"
    env = environment(spare)
    # The history exists before the others start, as when a notebook made calls first.
    first_stop = logs / "stop-w0"
    first_stop.touch()
    first = _spawn("writer", path, logs, first_stop, "w0", 1, plan.seed, env=env)
    first.communicate(timeout=300)
    live: dict[str, subprocess.Popen[bytes]] = {}
    ended: list[tuple[str, subprocess.Popen[bytes]]] = [("w0", first)]

    def start_writer(number: int) -> None:
        live[f"w{number}"] = _spawn("writer", path, logs, stop, f"w{number}", 2, plan.seed, env=env)

    started = time.monotonic()
    for number in range(1, writers + 1):
        start_writer(number)
    ended += [
        ("pool", _spawn("pool_writer", path, logs, stop, "p1", plan.seed, env=env)),
        ("reader", _spawn("reader", path, logs, stop, env=env)),
        ("opener", _spawn("opener", path, logs, stop, env=env)),
    ]
    events = sorted(
        [(plan.lock_at, "locker"), (plan.fill_at, "filler")]
        + [(at, "clearer") for at in plan.clears]
        + [(at, "kill") for at in plan.kills]
    )
    chance = random.Random(plan.seed + 1)
    next_writer = writers + 1
    kills: list[str] = []
    for at, what in events:
        time.sleep(max(0.0, started + at - time.monotonic()))
        if what == "kill":
            name = chance.choice(sorted(live))
            victim = live.pop(name)
            victim.send_signal(signal.SIGKILL)
            victim.wait()
            kills.append(name)
            start_writer(next_writer)
            next_writer += 1
        elif what == "locker":
            ended.append((what, _spawn(what, path, logs, plan.lock_for, env=env)))
        elif what == "filler":
            ended.append((what, _spawn(what, directory, logs, plan.fill_for, env=env)))
        else:
            ended.append((what, _spawn(what, path, logs, at, env=env)))
    time.sleep(max(0.0, started + plan.seconds - time.monotonic()))
    stop.touch()
    stuck: list[str] = []
    failed: dict[str, str] = {}
    for name, process in [*live.items(), *ended]:
        try:
            _, err = process.communicate(timeout=180)
        except subprocess.TimeoutExpired:
            process.kill()
            _, err = process.communicate()
            stuck.append(name)
        if process.returncode != 0:
            failed[name] = err.decode(errors="replace")[-3000:]
    return {"kills": kills, "stuck": stuck, "failed": failed}


# ── the checker ────────────────────────────────────────────────────────────────────────


def stored_rows(path: Path) -> list[tuple[str, str, str]]:
    """(call_id, receipt, record) of every row, read with plain ``sqlite3``."""
    with contextlib.closing(sqlite3.connect(path, timeout=60)) as conn:
        return [
            (row[0], json.loads(row[1] or "{}").get("receipt", ""), row[1] or "")
            for row in conn.execute("SELECT call_id, record FROM calls ORDER BY seq")
        ]


REOPEN = """
import json, sys, warnings
import workbench as wb

history = wb.History(sys.argv[1])
with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    len(history)
    history.rows()
history.close()
print(json.dumps([problem.message for problem in history.problems]))
"""


def _reopen(path: Path, spare: Path) -> list[str]:
    """Open the history once more, as the next person on this machine would, in a fresh
    process with the writers' temporary folder (a spill a killed process left in its private
    directory there, the disk being full, is written then); the problems it named."""
    env = environment(spare)
    ran = subprocess.run(
        [sys.executable, "-c", REOPEN, str(path)],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=True,
    )
    return list(json.loads(ran.stdout.splitlines()[-1]))


def _fate(began: float, ended: float, held: bool, clears: list[tuple[float, float]]) -> str:
    """What must have become of a call's row: "kept", "gone" (a clear began after the row was
    committed) or "unknown" (a clear overlapped the time the row may have been committed). A
    committed row was committed between the call's start and its end being seen; a row held
    outside SQLite reaches it at some moment after its start."""
    if not held and any(begin > ended for begin, _ in clears):
        return "gone"
    if any(end >= began for _, end in clears):
        return "unknown"
    return "kept"


def check(
    directory: Path, logs: Path, spare: Path, planted: dict[str, bytes | None], victim: Path
) -> dict[str, int]:
    """Count, against the accounts, everything the file got wrong (see ``MUST_BE_ZERO``)."""
    path = directory / "history.sqlite"
    accounts = list(lines(logs, "*.acks"))
    acks = {f[1]: f for f in accounts if f[0] == "A"}
    updates = [f for f in accounts if f[0] == "U"]
    clears = [(float(f[1]), float(f[2])) for f in lines(logs, "clearer.clears") if f[0] == "C"]
    fates = {
        call_id: _fate(float(f[2]), float(f[3]), f[4] == "1", clears) for call_id, f in acks.items()
    }

    plain = {call_id for call_id, _, _ in stored_rows(path)}
    missed_plain = sum(
        1
        for call_id, fate in fates.items()
        if fate == "kept" and acks[call_id][4] == "0" and call_id not in plain
    )
    problems = _reopen(path, spare)
    rows = stored_rows(path)
    ids = Counter(call_id for call_id, _, _ in rows)
    by_id = {call_id: (receipt, record) for call_id, receipt, record in rows}
    twice = sum(count - 1 for count in ids.values()) + sum(
        1 for call_id in ids if "~" in call_id and call_id.split("~")[0] in acks
    )
    phantom = sum(
        1
        for call_id, receipt, _ in rows
        if "~" not in call_id and not (TOKEN.match(receipt) and call_id.startswith("call_"))
    )
    other_content = sum(
        1 for call_id, f in acks.items() if call_id in by_id and by_id[call_id][0] != f[5]
    )
    lost_updates = sum(
        1
        for _, call_id, _, note in (f[:4] for f in updates)
        if fates.get(call_id) == "kept"
        and note.replace("_", " ") not in by_id.get(call_id, ("", ""))[1]
    )
    opens = [f for f in lines(logs, "opener.opens") if f[0] == "O"]
    moved = sum(".unreadable-" in p.name for p in directory.iterdir())
    touched = 0
    for key, name in PLANTED.items():
        here = directory / name
        if planted[key] is None:
            touched += int(not here.is_symlink() or victim.read_bytes() != PLANTED_VICTIM)
        else:
            touched += int(not here.exists() or here.read_bytes() != planted[key])
    reads = list(lines(logs, "reader.reads"))
    plain_reads = [f for f in reads if f[0] == "R"]
    seen_twice = sum(int(f[4]) for f in reads if f[0] in "RW")
    vanished = 0
    for earlier, later in itertools.pairwise(plain_reads):
        begin, end = float(earlier[1]), float(later[2])
        if not any(b <= end and e >= begin for b, e in clears):
            vanished += int(later[5])
    missing = [c for c, fate in fates.items() if fate == "kept" and c not in ids]
    if missing:  # where they came from, to find the cause
        print(
            "missing, by writer and held:",
            Counter((acks[c][5].split(".")[0], acks[c][4]) for c in missing),
            "first:",
            [acks[c] for c in missing[:3]],
            "problems:",
            problems,
        )
    return {
        "calls acknowledged": len(fates),
        "acknowledged as held outside SQLite": sum(f[4] == "1" for f in acks.values()),
        "rows at the end": len(rows),
        "late updates acknowledged": len(updates),
        "clears": len(clears),
        "opens by the opener": len(opens),
        "reads by the reader": len(reads),
        "problems named by the last open": len(problems),
        # What must be zero:
        "acknowledged rows missing": sum(
            1 for call_id, fate in fates.items() if fate == "kept" and call_id not in ids
        ),
        "committed rows a plain sqlite3 reader missed before any reopen": missed_plain,
        "rows present twice": twice,
        "rows whose latest version is lost": lost_updates,
        "phantom rows": phantom,
        "rows holding other than what their call produced": other_content,
        "cleared rows come back": sum(
            1 for call_id, fate in fates.items() if fate == "gone" and call_id in ids
        ),
        "histories moved aside (no damage injected)": moved + sum(int(f[3]) for f in opens),
        "planted files read, moved or removed": touched,
        "threads left by a closed history": sum(int(f[1]) for f in accounts if f[0] == "T"),
        "reads that saw a row twice": seen_twice,
        "rows that vanished between two reads": vanished,
    }


MUST_BE_ZERO = (
    "acknowledged rows missing",
    "committed rows a plain sqlite3 reader missed before any reopen",
    "rows present twice",
    "rows whose latest version is lost",
    "phantom rows",
    "rows holding other than what their call produced",
    "cleared rows come back",
    "histories moved aside (no damage injected)",
    "planted files read, moved or removed",
    "threads left by a closed history",
    "reads that saw a row twice",
    "rows that vanished between two reads",
)


def main() -> None:
    role, *args = sys.argv[1:]
    if role == "writer":
        path, logs, stop, name, threads, seed = args
        writer(Path(path), Path(logs), Path(stop), name, int(threads), int(seed))
    elif role == "pool_writer":
        path, logs, stop, name, seed = args
        pool_writer(Path(path), Path(logs), Path(stop), name, int(seed))
    elif role == "reader":
        reader(*map(Path, args))
    elif role == "opener":
        opener(*map(Path, args))
    elif role == "clearer":
        clearer(Path(args[0]), Path(args[1]), float(args[2]))
    elif role == "locker":
        locker(Path(args[0]), Path(args[1]), float(args[2]))
    elif role == "filler":
        filler(Path(args[0]), Path(args[1]), float(args[2]))
    else:
        raise SystemExit(f"no role {role!r}")


if __name__ == "__main__":
    main()
