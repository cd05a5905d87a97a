"""What every test package shares: a fresh registry per test (in-memory history, its own
artifacts), the run's one execution of each notebook, helpers that watch real processes, and
how the suite is cut into units for ``make test``'s processes and into markers for ``make
check`` (``pytest_collection_modifyitems``, below)."""

from __future__ import annotations

import os
import select
import shutil
import subprocess
import time
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from hypothesis import settings

import workbench as wb

if TYPE_CHECKING:
    from tests.notebooks.support import Runs

# Property tests judge answers, never time: hypothesis's default 200 ms deadline per example
# is a wall-clock limit that a loaded machine fails for no fault of the code.
settings.register_profile("workbench", deadline=None)
settings.load_profile("workbench")

EXIT_WAIT_LIMIT_S = 120.0


@pytest.fixture
def tools(tmp_path):
    """A registry whose artifacts live in the test's temporary directory."""
    registry = wb.Registry(
        history=":memory:", artifacts=tmp_path / "artifacts", terminate_grace=0.5
    )
    yield registry
    registry.history.close()


@pytest.fixture(scope="session")
def executed() -> Runs:
    """``executed(name)``: the notebook ``name`` run once in this test run by nbclient, in
    whichever process asked first, and shared by every test that reads it
    (``tests/notebooks/support.py``); ``executed.workdir(name)`` is the folder it ran in (its
    kernel's cwd), ``executed.created(name)`` the classes of the widgets its kernel made."""
    from tests.notebooks.support import Runs  # nbclient is imported only where a notebook runs

    return Runs()


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


def wait_for_exit(pids: list[int], limit: float = EXIT_WAIT_LIMIT_S) -> list[int]:
    """Block until every process in ``pids`` has ended (its pidfd turns readable); returns
    those still running after ``limit`` seconds, a bound only a process that never ends hits."""
    descriptors: dict[int, int] = {}
    for pid in pids:
        try:
            descriptors[os.pidfd_open(pid)] = pid
        except ProcessLookupError:
            continue  # already gone
    deadline = time.monotonic() + limit
    try:
        waiting = set(descriptors)
        while waiting and (left := deadline - time.monotonic()) > 0:
            ended, _, _ = select.select(list(waiting), [], [], left)
            waiting -= set(ended)
        return sorted(descriptors[fd] for fd in waiting)
    finally:
        for fd in descriptors:
            os.close(fd)


def group_left_after_exit(pgid: int, limit: float = EXIT_WAIT_LIMIT_S) -> list[int]:
    """The live members of process group ``pgid`` once each one seen has had up to ``limit``
    seconds in all to end: a member signalled with the rest of its group is still running
    until the scheduler lets it exit, which takes a while on a loaded machine."""
    deadline = time.monotonic() + limit
    while (members := pids_in_group(pgid)) and (left := deadline - time.monotonic()) > 0:
        wait_for_exit(members, left)
    return members


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

    if "browser" in request.node.path.parts:
        return
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:
        return  # no loop running here, as it should be
    raise AssertionError(f"an event loop was left running here: {loop!r}")


# ── the run's output folder ─────────────────────────────────────────────────────────────────

RUN_OUTPUT = Path(__file__).resolve().parents[1] / "test-output" / "notebooks"


def pytest_sessionstart(session: pytest.Session) -> None:
    """A run starts with an empty ``test-output/notebooks/``: every process of the run (xdist's
    workers start after this, in the process that hands out the tests) shares the notebooks
    executed into it, and none reads a notebook an earlier run executed."""
    if "PYTEST_XDIST_WORKER" not in os.environ and RUN_OUTPUT.exists():
        shutil.rmtree(RUN_OUTPUT)


# ── units and markers ───────────────────────────────────────────────────────────────────────

# Fixtures that mean a test needs a browser, a Jupyter kernel, or a fresh environment installed
# from the package index: such a test is marked so, wherever it is, whether or not it says so.
MARKED_BY_FIXTURE = {
    "browser_context": "browser",
    "lab_server": "browser",
    "executed": "kernel",
    "fresh_environment": "install",
}

# Tests that share something costly run in one process, one unit of work for xdist
# (``--dist loadgroup``): the browser tests share one JupyterLab and one chromium; the packaging
# tests one built wheel in one fresh environment; the tests that read the notebooks' executed
# copies sit together so that no process waits on a notebook another one is running. Every
# other test file is a unit of its own, with its module's fixtures.
UNITS = {
    "tests/browser/": "browser",
    "tests/packaging/": "fresh-environment",
}
NOTEBOOK_UNIT = "notebooks"

# The units that take minutes, slowest first: they are handed out first, each to a process of
# its own, so that none of them is left to run alone at the end of the suite. The rest follow in
# the order they were collected.
SLOW_UNITS = (
    "browser",
    "fresh-environment",
    NOTEBOOK_UNIT,
    "tests/transcripts/test_streaming.py",
    "tests/transcripts/test_log_streaming.py",
    "tests/notebooks/test_headless_export.py",
)


def unit_of(item: pytest.Item) -> str:
    """The unit of work ``item`` belongs to."""
    path = item.nodeid.split("::")[0]
    for prefix, unit in UNITS.items():
        if path.startswith(prefix):
            return unit
    if "executed" in getattr(item, "fixturenames", ()):
        return NOTEBOOK_UNIT
    return path


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark each test by what it needs (``MARKED_BY_FIXTURE``), put it in its unit (an
    ``xdist_group``, read by ``--dist loadgroup``) and order the units slowest first, which
    xdist keeps with ``--no-loadscope-reorder``. Runs before xdist reads the groups."""
    for item in items:
        for fixture in getattr(item, "fixturenames", ()):
            if fixture in MARKED_BY_FIXTURE:
                item.add_marker(MARKED_BY_FIXTURE[fixture])
        item.add_marker(pytest.mark.xdist_group(unit_of(item)))
    rank = {unit: index for index, unit in enumerate(SLOW_UNITS)}
    items.sort(key=lambda item: rank.get(unit_of(item), len(SLOW_UNITS)))
