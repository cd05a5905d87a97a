"""What the history's tests share: reading a history file the way a plain reader does, the
spills beside it, and processes that hold SQLite's write lock or write calls of their own."""

from __future__ import annotations

import contextlib
import json
import os
import sqlite3
import subprocess
import sys
import textwrap
import traceback
from collections.abc import Callable, Iterator
from pathlib import Path

from workbench.history.spill import MAGIC, places

NOBODY = 65534

CHILD = """
import json, os, signal, sys
import workbench as wb

tools = wb.Registry(history=wb.History(sys.argv[1], busy_timeout=float(sys.argv[2])))

@tools.tool
def add(a: int, b: int = 0) -> int:
    '''Add two numbers.'''
    return a + b
"""


def stored_ids(path: Path) -> list[str]:
    """The call ids SQLite itself holds (a plain connection, not the History)."""
    with contextlib.closing(sqlite3.connect(path)) as conn:
        return [row[0] for row in conn.execute("SELECT call_id FROM calls ORDER BY seq")]


def spills(path: Path) -> list[Path]:
    """The spill files of the history at ``path``, beside it and in the private directory."""
    found = []
    for place in places(path):
        if place.directory.is_dir():
            found += [
                place.directory / name
                for name in place.names(p.name for p in place.directory.iterdir())
            ]
    return sorted(found)


def spilled_ids(path: Path) -> list[str]:
    """The call ids of the rows held in the spills of the history at ``path``."""
    ids = []
    for spill in spills(path):
        data = spill.read_bytes()
        if not data.startswith(MAGIC):
            continue
        for line in data.splitlines()[1:]:
            entry = json.loads(line[9:])
            if entry[0] == "row":
                ids.append(entry[1])
    return ids


def durable_ids(path: Path) -> list[str]:
    """The call ids on disk: in SQLite, or in a spill that the next open writes into it."""
    return stored_ids(path) + spilled_ids(path)


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


@contextlib.contextmanager
def child(
    tmp_path: Path, body: str, path: Path, busy_timeout: float = 60
) -> Iterator[subprocess.Popen[str]]:
    """A child process running ``body`` after ``CHILD`` on the history at ``path``; killed
    when the block ends, if it has not ended by then."""
    script = tmp_path / "child.py"
    script.write_text(CHILD + textwrap.dedent(body))
    with subprocess.Popen(
        [sys.executable, str(script), str(path), str(busy_timeout)],
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


def as_nobody(plant: Callable[[], None]) -> None:
    """Run ``plant`` in a forked child that is user ``nobody`` (another user, as on a shared
    machine); fail if it failed."""
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        code = 1
        try:
            os.setgid(NOBODY)
            os.setuid(NOBODY)
            plant()
            code = 0
        except BaseException:
            traceback.print_exc()
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
