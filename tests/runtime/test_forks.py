"""Forked workers and separate processes sharing one history: every call keeps its own id and
its own row.

A worker forked from a process that already ran calls (a notebook, then ``multiprocessing``)
gets fresh ids, its own runtime threads and its own SQLite connection; processes started apart
never repeat an id either. Each count below is read from the SQLite file with a plain
connection: rows written, rows stored, ids repeated.
"""

from __future__ import annotations

import contextlib
import json
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path

PRELUDE = """
import asyncio, json, os, sys
import workbench as wb

tools = wb.Registry(history=sys.argv[1], artifacts=sys.argv[2])

@tools.tool
def add(a: int, b: int = 0) -> int:
    '''Add two numbers.'''
    return a + b

@tools.tool
async def later(a: int) -> int:
    '''Add one, after a pause.'''
    await asyncio.sleep(0.01)
    return a + 1

def run_mix(label):
    '''Calls through every driver: the waiting thread, lanes and the runtime loop.'''
    ids = [tools.invoke("add", {"a": i, "b": label}).wait(60).call_id for i in range(5)]
    burst = tools.invoke_many([("add", {"a": i}) for i in range(5)])
    ids += [call.wait(60).call_id for call in burst]
    ids += [tools.invoke("later", {"a": i}).wait(60).call_id for i in range(2)]
    return [tools.history.get(call_id)["call_id"] for call_id in ids]
"""


def stored(path: Path) -> list[tuple[str, str]]:
    """(call_id, tool) of every row SQLite holds, read with a plain connection."""
    with contextlib.closing(sqlite3.connect(path)) as conn:
        return list(conn.execute("SELECT call_id, tool FROM calls ORDER BY seq"))


def test_workers_forked_after_calls_keep_every_row_under_ids_of_their_own(tmp_path):
    path = tmp_path / "history.sqlite"
    body = """
        parent = run_mix(100)
        workers = []
        for worker in range(3):
            reader, writer = os.pipe()
            pid = os.fork()
            if pid == 0:
                os.close(reader)
                try:
                    ids = run_mix(worker)
                    tools.history.flush()
                    os.write(writer, json.dumps(ids).encode())
                finally:
                    os._exit(0)
            os.close(writer)
            workers.append((pid, reader))
        written = list(parent)
        for pid, reader in workers:
            with os.fdopen(reader) as pipe:
                written += json.loads(pipe.read() or "[]")
            os.waitpid(pid, 0)
        tools.history.close()
        print(json.dumps(written))
        """
    child = subprocess.run(
        [sys.executable, "-c", PRELUDE + textwrap.dedent(body), str(path), str(tmp_path / "a")],
        capture_output=True,
        text=True,
        timeout=240,
        check=False,
    )
    assert child.returncode == 0, child.stderr
    written = json.loads(child.stdout)
    rows = stored(path)
    # Four processes, 12 calls each: each worker reported its 12 (none hung), each has its row.
    assert len(written) == 48
    assert len(set(written)) == 48  # no id repeated across the parent and its forks
    assert sorted(call_id for call_id, _ in rows) == sorted(written)  # 0 rows lost or replaced
    assert "HistoryWarning" not in child.stderr


def test_separate_processes_writing_at_once_never_repeat_an_id(tmp_path):
    path = tmp_path / "history.sqlite"
    script = tmp_path / "worker.py"
    script.write_text(PRELUDE + "\nprint(json.dumps(run_mix(0)))\n")
    workers = [
        subprocess.Popen(
            [sys.executable, str(script), str(path), str(tmp_path / "artifacts")],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            cwd=tmp_path,
        )
        for _ in range(6)
    ]
    written: list[str] = []
    for worker in workers:
        out, err = worker.communicate(timeout=240)
        assert worker.returncode == 0, err
        written += json.loads(out)
    assert len(written) == 72 and len(set(written)) == 72
    assert sorted(call_id for call_id, _ in stored(path)) == sorted(written)
