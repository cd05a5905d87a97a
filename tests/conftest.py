"""What every test package shares: a fresh registry per test (in-memory history, its own
artifacts), the run's one execution of each notebook, helpers that watch real processes, and
how the suite is cut into units for ``make test``'s processes and into markers for ``make
check`` (``pytest_collection_modifyitems``, below)."""

from __future__ import annotations

import os
import select
import shutil
import signal
import subprocess
import time
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from hypothesis import settings

import workbench as wb
from workbench.preflight._json_schema import draft_2020_12

if TYPE_CHECKING:
    from tests.notebooks.support import Runs

# Property tests judge answers, never time: hypothesis's default 200 ms deadline per example
# is a wall-clock limit that a loaded machine fails for no fault of the code.
settings.register_profile("workbench", deadline=None)
settings.load_profile("workbench")

# jsonschema, imported by nbformat and the schema tests, builds rfc3987_syntax's grammars on
# import (seconds of every test process's collection); loaded the way the preflight loads it,
# without them. No test checks the "iri" format; the import tests run in fresh interpreters.
draft_2020_12()

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

OUTPUT = Path(__file__).resolve().parents[1] / "test-output"
RUNS = OUTPUT / "runs"
LAST_RUN = OUTPUT / "last-run"
RUN_FOLDER = "WORKBENCH_TEST_RUN"
"""The environment variable naming the run's folder, set where the run starts; xdist's workers
inherit it."""


def run_folder() -> Path:
    """The folder this test run shares between its processes: ``test-output/runs/<pid>/``, the
    pid of the process that hands out the tests; ``test-output/last-run/`` once the run ended.
    Two runs in one checkout, side by side, never share one."""
    return Path(os.environ[RUN_FOLDER])


def hands_out_the_tests() -> bool:
    """True in the process that hands out the tests (xdist's workers start after its session
    does and end before it ends), or the only one."""
    return "PYTEST_XDIST_WORKER" not in os.environ


def is_a_test_run(pid: int) -> bool:
    """True while ``pid`` is a live pytest process (a run that is still going)."""
    try:
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return False  # no such process: that run has ended
    return pid_alive(pid) and b"pytest" in cmdline


def _interrupted(signum: int, frame: object) -> None:
    raise KeyboardInterrupt(f"signal {signum}")


def pytest_configure(config: pytest.Config) -> None:
    """A run told to stop (SIGTERM) stops as after Ctrl-C: its session still finishes, so the
    JupyterLab it started (which outlives the process that started it) is stopped too."""
    if hands_out_the_tests():
        signal.signal(signal.SIGTERM, _interrupted)


def pytest_sessionstart(session: pytest.Session) -> None:
    """A run gets a folder of its own (``run_folder``). What a run killed before its end left
    (its folder, the JupyterLab it started) is cleared away, never what a run still going
    uses."""
    if not hands_out_the_tests():
        return
    from tests.browser.shared_lab import stop_shared_lab

    for left in RUNS.glob("*") if RUNS.exists() else ():
        if left.name.isdigit() and not is_a_test_run(int(left.name)):
            stop_shared_lab(left)
            shutil.rmtree(left)
    folder = RUNS / str(os.getpid())
    if folder.exists():  # a pid of an ended run, reused
        shutil.rmtree(folder)
    folder.mkdir(parents=True)
    os.environ[RUN_FOLDER] = str(folder)


# Where each process's minutes went: for each unit it ran, when it started and ended (wall
# clock, shared by the processes), written by each process at its end and gathered by the one
# that hands out the tests into ``units-timeline.md``, so a person can see which chain of
# units sets the run's wall.
_UNIT_TIMES: dict[str, list[float]] = {}


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> object:
    began = time.time()
    try:
        return (yield)
    finally:
        times = _UNIT_TIMES.setdefault(unit_of(item), [began, began, 0])
        times[1] = time.time()
        times[2] += 1


def _write_unit_times() -> None:
    worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
    lines = [f"{worker}\t{unit}\t{a:.1f}\t{b:.1f}\t{n}" for unit, (a, b, n) in _UNIT_TIMES.items()]
    (run_folder() / f"unit-times-{worker}.tsv").write_text("\n".join(lines) + "\n")


def _gather_unit_times(folder: Path) -> None:
    rows = []
    for part in sorted(folder.glob("unit-times-*.tsv")):
        for line in part.read_text().splitlines():
            worker, unit, began, ended, count = line.split("\t")
            rows.append((float(began), float(ended), worker, unit, int(count)))
        part.unlink()
    if not rows:
        return
    start = min(row[0] for row in rows)
    table = ["| process | from s | to s | s | tests | unit |", "|---|---:|---:|---:|---:|---|"]
    for began, ended, worker, unit, count in sorted(rows):
        table.append(
            f"| {worker} | {began - start:.0f} | {ended - start:.0f} | {ended - began:.0f} "
            f"| {count} | {unit} |"
        )
    title = (
        "# Where each process's minutes went\n\nEach unit's first test began, its last ended.\n\n"
    )
    (folder / "units-timeline.md").write_text(title + "\n".join(table) + "\n")


def pytest_sessionfinish(session: pytest.Session) -> None:
    """Once every test has run: the run's JupyterLab is stopped and the run's folder becomes
    ``test-output/last-run/`` (its executed notebooks, the server's log, where each process's
    minutes went) for a person to read."""
    if RUN_FOLDER not in os.environ:
        return
    if _UNIT_TIMES:
        _write_unit_times()
    if not hands_out_the_tests():
        return
    from tests.browser.shared_lab import stop_shared_lab

    folder = run_folder()
    _gather_unit_times(folder)
    stop_shared_lab(folder)
    if LAST_RUN.exists():
        shutil.rmtree(LAST_RUN)
    folder.rename(LAST_RUN)


# ── units and markers ───────────────────────────────────────────────────────────────────────

# Fixtures that mean a test needs a browser, a Jupyter kernel, or a fresh environment installed
# from the package index: such a test is marked so, wherever it is, whether or not it says so.
MARKED_BY_FIXTURE = {
    "browser_context": "browser",
    "lab_server": "browser",
    "executed": "kernel",
    "fresh_environment": "install",
}

# What ``make check`` leaves out beside the kernel, browser and install tests: each of these
# takes seconds (big generated files, servers and processes of their own, many property
# examples), where the unit tests take milliseconds. A whole file (``None``) or the named tests
# of a file, every parametrization of each; ``make test`` runs them all. A name that matches
# nothing fails the collection, so the table cannot go stale unnoticed.
SLOW: dict[str, frozenset[str] | None] = {
    "tests/builtins/test_reading.py": None,
    "tests/context/test_containment_processes.py": None,
    "tests/declare/test_dialects_properties.py": None,
    "tests/history/test_fault_table.py": None,
    "tests/history/test_history_fuzz.py": None,
    "tests/mcp/test_inspector.py": None,
    "tests/mcp/test_reading.py": None,
    "tests/mcp/test_stdio_limit.py": None,
    "tests/mcp/test_storm.py": None,
    "tests/preflight/test_json_schema_import.py": None,
    "tests/runtime/test_forks.py": None,
    "tests/runtime/test_raw_args.py": None,
    "tests/test_make_lab.py": None,
    "tests/transcripts/test_bombs.py": None,
    "tests/transcripts/test_hostile_inputs.py": None,
    "tests/transcripts/test_huge_values.py": None,
    "tests/transcripts/test_imports.py": None,
    "tests/transcripts/test_inspect_ai.py": None,
    "tests/transcripts/test_lazy.py": None,
    "tests/transcripts/test_log_streaming.py": None,
    "tests/transcripts/test_streaming.py": None,
    "tests/widgets/test_live_display.py": None,
    "tests/builtins/test_process.py": frozenset({"test_poll_then_wait_for_a_job_to_finish"}),
    "tests/check/test_check_command.py": frozenset(
        {
            "test_the_demo_and_built_in_tools_pass",
            "test_an_allow_list_accepts_differences_and_flags_rules_that_match_nothing",
        }
    ),
    "tests/families/test_compaction.py": frozenset(
        {"test_any_history_shrinks_keeps_its_promises_and_is_idempotent"}
    ),
    "tests/history/test_fault_matrix.py": frozenset(
        {"test_a_registry_served_over_mcp_keeps_every_call_after_the_client_disconnects"}
    ),
    "tests/history/test_insert.py": frozenset(
        {"test_a_row_under_an_id_another_process_already_stored_never_replaces_it"}
    ),
    "tests/history/test_pages.py": frozenset(
        {"test_painting_and_paging_do_the_same_work_for_twenty_times_the_rows"}
    ),
    "tests/history/test_salvage.py": frozenset(
        {"test_a_damaged_history_gives_back_every_row_on_an_intact_page"}
    ),
    "tests/mcp/test_client.py": frozenset(
        {
            "test_connecting_again_replaces_the_previous_connection",
            "test_the_servers_tools_are_registered_with_their_metadata",
            "test_a_server_killed_mid_call_ends_the_call_unavailable",
            "test_close_ends_the_server_process_and_unregisters_the_tools",
            "test_a_server_that_never_answers_is_given_up_and_stopped",
        }
    ),
    "tests/mcp/test_client_views.py": frozenset(
        {
            "test_the_inspector_shows_each_client_of_a_served_call_escaped",
            "test_the_sdk_client_gets_what_the_card_says_each_client_gets",
            "test_a_workbench_served_tool_connected_from_another_shows_each_client",
        }
    ),
    "tests/mcp/test_foreign.py": frozenset(
        {
            "test_a_tool_that_runs_only_as_a_task_is_called_as_one",
            "test_terminating_a_task_cancels_it_on_the_server",
        }
    ),
    "tests/mcp/test_listing.py": frozenset({"test_every_page_of_a_long_list_is_listed"}),
    "tests/mcp/test_offers.py": frozenset(
        {
            "test_subscribed_resources_updates_arrive_live_and_unsubscribe_stops_them",
            "test_a_form_of_many_arguments_asks_a_bounded_number_of_completions",
        }
    ),
    "tests/mcp/test_server.py": frozenset(
        {
            "test_elicitation_over_the_wire",
            "test_the_cli_refuses_what_is_not_a_registry",
            "test_streamed_output_arrives_as_progress_notifications",
            "test_each_builtin_over_the_wire",
            "test_unknown_keys_are_invalid_args_over_the_wire",
            "test_a_cancelled_call_is_terminated_and_its_processes_are_gone",
        }
    ),
    "tests/preflight/test_preflight.py": frozenset(
        {
            "test_any_argument_dict_gives_valid_arguments_or_an_invalid_args_envelope",
            "test_any_json_value_gives_arguments_or_an_invalid_args_envelope",
        }
    ),
    "tests/runtime/test_awaiting_loop.py": frozenset(
        {"test_awaiting_async_calls_wakes_no_other_thread_per_call"}
    ),
    "tests/runtime/test_lanes.py": frozenset(
        {"test_many_short_calls_run_in_a_lane_with_their_rows_committed_together"}
    ),
    "tests/runtime/test_stopping.py": frozenset(
        {"test_a_subprocess_ignoring_sigterm_is_killed_after_the_grace"}
    ),
    "tests/study/test_record_rows.py": frozenset(
        {"test_every_benchmark_format_gives_the_rows_a_history_gave"}
    ),
    "tests/transcripts/test_inspect_parts.py": frozenset(
        {"test_one_sample_larger_than_memory_should_hold_is_read_in_a_fraction_of_its_size"}
    ),
    "tests/transcripts/test_json_stream.py": frozenset(
        {
            "test_members_read_in_pieces_are_what_json_loads_reads",
            "test_each_value_comes_with_its_text_and_where_that_starts",
        }
    ),
    "tests/transcripts/test_verdicts.py": frozenset(
        {"test_remembered_verdicts_are_the_verdicts_of_checking_every_call"}
    ),
    "tests/transcripts/test_wrong_types.py": frozenset(
        {"test_any_value_swapped_for_one_of_another_type_is_read_or_refused_clearly"}
    ),
    "tests/widgets/test_saved_notebook.py": frozenset(
        {"test_its_config_enables_workbench_s_jupyter_server_extension"}
    ),
    "tests/widgets/test_views.py": frozenset({"test_no_core_module_imports_or_names_the_widgets"}),
}


SLOW_TIMEOUT_S = 1200
"""pytest-timeout's bound for a slow test that names none, unless ``--timeout`` is given (as
``make soak`` gives it): the suite's 300 s (pyproject.toml)
is there to end a test that hangs, and a slow test on a loaded machine (the history's fuzz
test took 218 s in a loaded run, over 300 s under ``make flakes``' CPU hog) is slow, not hung."""


def mark_slow(items: list[pytest.Item]) -> None:
    """Mark ``slow`` what ``SLOW`` names; fail on a name that matches no collected test of a
    file that was collected."""
    matched: dict[str, set[str]] = {}
    for item in items:
        path = item.nodeid.split("::")[0]
        if path not in SLOW:
            continue
        name = getattr(item, "originalname", item.name)
        names = SLOW[path]
        if names is None or name in names:
            item.add_marker(pytest.mark.slow)
            matched.setdefault(path, set()).add(name)
    root = Path(__file__).resolve().parents[1]
    missing = [path for path in SLOW if not (root / path).is_file()]
    collected = {item.nodeid.split("::")[0] for item in items}
    for path, names in SLOW.items():
        if names is not None and path in collected:
            missing += [f"{path}::{name}" for name in sorted(names - matched.get(path, set()))]
    if missing:
        raise pytest.UsageError(f"tests/conftest.py SLOW names what is not there: {missing}")


# Tests that share something costly run in one process, one unit of work for xdist
# (``--dist loadgroup``): the browser tests that judge the notebooks' journeys share those
# journeys (``tests/browser/journeys.py``), the other browser tests one chromium (all of them one
# JupyterLab, ``tests/browser/shared_lab.py``, whichever process runs them); the packaging
# tests one built wheel in one fresh environment; the tests that read the notebooks' executed
# copies sit together so that no process waits on a notebook another one is running. Every
# other test file is a unit of its own, with its module's fixtures.
UNITS = {
    "tests/browser/test_contrast_browser.py": "browser-journeys",
    "tests/browser/test_reopen_browser.py": "browser-journeys",
    "tests/browser/test_views_browser.py": "browser-journeys",
    "tests/browser/": "browser",
    "tests/packaging/": "fresh-environment",
}
NOTEBOOK_UNIT = "notebooks"

# The units that take minutes, slowest first: they are handed out first, each to a process of
# its own, so that none of them is left to run alone at the end of the suite. The rest follow in
# the order they were collected.
SLOW_UNITS = (
    "browser-journeys",
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
    """Mark each test by what it needs (``MARKED_BY_FIXTURE``) and costs (``SLOW``), put it
    in its unit (an
    ``xdist_group``, read by ``--dist loadgroup``) and order the units slowest first, which
    xdist keeps with ``--no-loadscope-reorder``. Runs before xdist reads the groups."""
    mark_slow(items)
    timeout_given = config.getoption("timeout") is not None  # `--timeout=N` decides it all
    for item in items:
        slow = item.get_closest_marker("slow")
        if slow and not timeout_given and not item.get_closest_marker("timeout"):
            item.add_marker(pytest.mark.timeout(SLOW_TIMEOUT_S))
        for fixture in getattr(item, "fixturenames", ()):
            if fixture in MARKED_BY_FIXTURE:
                item.add_marker(MARKED_BY_FIXTURE[fixture])
        item.add_marker(pytest.mark.xdist_group(unit_of(item)))
    rank = {unit: index for index, unit in enumerate(SLOW_UNITS)}
    items.sort(key=lambda item: rank.get(unit_of(item), len(SLOW_UNITS)))
