"""Shared fixtures: a fresh registry per test with an in-memory history and its own artifacts."""

from __future__ import annotations

import os
import subprocess
import time

import pytest

import workbench as wb


@pytest.fixture
def tools(tmp_path):
    """A registry whose artifacts live in the test's temporary directory."""
    registry = wb.Registry(
        history=":memory:", artifacts=tmp_path / "artifacts", terminate_grace=0.5
    )
    yield registry
    registry.history.close()


def pids_in_group(pgid: int) -> list[int]:
    """Live (non-zombie) processes of a process group, read from /proc."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as handle:
                fields = handle.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        state, pgrp = fields[0], int(fields[2])
        if pgrp == pgid and state != "Z":
            found.append(int(entry))
    return found


def pid_alive(pid: int) -> bool:
    """True while ``pid`` exists and is not a zombie."""
    try:
        with open(f"/proc/{pid}/stat") as handle:
            return handle.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def children_of(pid: int) -> list[int]:
    """Direct children of a process."""
    out = subprocess.run(["ps", "-o", "pid=", "--ppid", str(pid)], capture_output=True, text=True)
    return [int(line) for line in out.stdout.split()]


def wait_until(predicate, timeout: float = 5.0) -> bool:
    """Poll ``predicate`` until it is true or ``timeout`` seconds pass; its last answer."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.01)
    return bool(predicate())


@pytest.fixture(autouse=True)
def _no_running_loop_leaks_into_tests(request):
    """Each test outside the browser package (where Playwright's loop runs by design) starts
    with no event loop marked running in its thread: a leaked one would take every call the
    test makes and never run it."""
    import asyncio

    if "browser" not in request.node.path.parts:
        assert asyncio._get_running_loop() is None, "an event loop was left running here"
