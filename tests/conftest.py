"""Shared fixtures: a fresh registry per test with an in-memory history and its own artifacts."""

from __future__ import annotations

import os
import select
import subprocess
import time
from typing import TYPE_CHECKING

import pytest
from hypothesis import settings

import workbench as wb

if TYPE_CHECKING:
    from tests.notebook_runs import Runs

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
def executed(tmp_path_factory: pytest.TempPathFactory) -> Runs:
    """``executed(name)``: the notebook ``name`` run once in this session by nbclient, shared
    by every test that reads it (``tests/notebook_runs.py``); ``executed.workdir(name)`` is the
    folder it ran in (its kernel's cwd)."""
    from tests.notebook_runs import Runs  # nbclient is imported only where a notebook runs

    return Runs(tmp_path_factory.mktemp)


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

    if "browser" not in request.node.path.parts:
        assert asyncio._get_running_loop() is None, "an event loop was left running here"


# Units of work that take minutes, slowest first: they start at once, each on its own worker,
# so that none of them is left to run alone at the end of the suite.
SLOW_UNITS = (
    "tests/browser: notebooks",  # every notebook run, used, saved, reopened, exported in a browser
    "tests/browser",
    "tests/test_binder.py",
    "tests/transcripts/test_streaming.py",
    "tests/transcripts/test_log_streaming.py",
    "tests/test_dist.py",
    "tests/test_notebooks.py",
    "tests/test_headless_export.py",
)
# The browser tests that judge whole notebooks: a unit of their own, with its own JupyterLab, so
# that all share the one run of each notebook (the package-scoped ``journeys`` fixture).
NOTEBOOK_JOURNEYS = (
    "tests/browser/test_contrast_browser.py",
    "tests/browser/test_reopen_browser.py",
    "tests/browser/test_views_browser.py",
)
# The files that read the session's nbclient runs of the notebooks (the ``executed`` fixture):
# one unit, so that each notebook runs once.
NOTEBOOK_RUNS = ("tests/test_notebooks.py", "tests/mcp/test_notebook.py")


@pytest.hookimpl(tryfirst=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: object) -> object:
    """``make test`` runs several processes by file (``--dist loadfile``): a file's tests run
    together, with their module's fixtures. The browser tests are two units of it, each in
    one process with its own JupyterLab and chromium: the notebook journeys, and the rest.
    The files that read the notebooks' nbclient runs are one unit. The slow units
    (``SLOW_UNITS``) are handed out first."""
    if config.getvalue("dist") != "loadfile":
        return None
    from xdist.scheduler import LoadFileScheduling

    class SlowUnitsFirst(LoadFileScheduling):  # type: ignore[misc]
        _ordered = False

        def _split_scope(self, nodeid: str) -> str:
            if nodeid.startswith(NOTEBOOK_JOURNEYS):
                return SLOW_UNITS[0]
            if nodeid.startswith("tests/browser/"):
                return "tests/browser"
            if nodeid.split("::")[0] in NOTEBOOK_RUNS:
                return NOTEBOOK_RUNS[0]
            return str(super()._split_scope(nodeid))

        def _assign_work_unit(self, node: object) -> None:
            if not self._ordered:
                self._ordered = True
                for unit in reversed(SLOW_UNITS):
                    if unit in self.workqueue:
                        self.workqueue.move_to_end(unit, last=False)
            super()._assign_work_unit(node)

    return SlowUnitsFirst(config, log)
