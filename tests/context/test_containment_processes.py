"""Every process a tool starts ends with its call: escape patterns counted by pid and by content.

Each scenario runs all seven escape patterns at once inside one command: ``setsid``,
``setsid -f``, a double fork with ``setsid``, ``setpgid``, ``nohup``, ``disown`` and a process
ignoring SIGTERM. Each escapee writes its pid to a file and then runs ``sleep MARKER``, so the
survivors are counted twice: the pids from the files that still live, and every live process
whose command line holds the scenario's unique marker. Both numbers must be zero once the grace
has passed.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
import uuid
from pathlib import Path

import pytest

import workbench as wb
import workbench.builtins
from tests.conftest import children_of, pid_alive, wait_until
from tests.context.support import with_marker
from workbench.builtins.shell import make_shell_exec

PATTERNS = ("setsid", "setsid_f", "double_fork", "setpgid", "nohup", "disown", "ignore_term")
SETTLE_S = 8.0  # grace (0.5 s in these registries) plus room for a loaded machine

ESCAPE_PY = """
import os, signal, sys
how, pid_file, marker = sys.argv[1:4]
if how == "double_fork":
    if os.fork():
        os._exit(0)
    os.setsid()
    if os.fork():
        os._exit(0)
elif how == "setpgid":
    os.setpgid(0, 0)
elif how == "ignore_term":
    signal.signal(signal.SIGTERM, signal.SIG_IGN)  # kept across exec: sleep ignores it too
with open(pid_file + ".tmp", "w") as handle:
    handle.write(str(os.getpid()))
os.rename(pid_file + ".tmp", pid_file)
os.execvp("sleep", ["sleep", marker])
"""


class Escapes:
    """The seven escape patterns of one scenario: the bash that starts them, and their count."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        directory.mkdir(parents=True, exist_ok=True)
        # A unique, valid sleep duration: found in /proc/*/cmdline of every escapee.
        self.marker = f"{90000 + uuid.uuid4().int % 9999}.{uuid.uuid4().int % 10**8:08d}"
        self.script = directory / "escape.py"
        self.script.write_text(ESCAPE_PY)

    def pid_file(self, name: str) -> Path:
        return self.directory / f"{name}.pid"

    def bash(self) -> str:
        """Start every pattern; each writes its pid file once it has escaped."""
        py, mark, d = sys.executable, self.marker, self.directory
        record = "echo $$ > {file}.tmp; mv {file}.tmp {file}; exec sleep " + mark
        in_bash = {name: f"'{record.format(file=self.pid_file(name))}'" for name in PATTERNS}
        return textwrap.dedent(
            f"""\
            setsid bash -c {in_bash["setsid"]} &
            setsid -f bash -c {in_bash["setsid_f"]} > /dev/null 2>&1
            {py} {self.script} double_fork {d}/double_fork.pid {mark} > /dev/null 2>&1
            {py} {self.script} setpgid {d}/setpgid.pid {mark} &
            nohup bash -c {in_bash["nohup"]} > /dev/null 2>&1 &
            bash -c {in_bash["disown"]} > /dev/null 2>&1 & disown
            {py} {self.script} ignore_term {d}/ignore_term.pid {mark} > /dev/null 2>&1 &
            """
        )

    def all_started(self) -> bool:
        return all(self.pid_file(name).exists() for name in PATTERNS)

    def pids(self) -> dict[str, int]:
        return {name: int(self.pid_file(name).read_text()) for name in PATTERNS}

    def assert_escaped(self) -> None:
        """The patterns really left the command's group and session (``disown`` stays in
        both): otherwise this test would prove nothing."""
        pids = self.pids()
        assert all(pid_alive(pid) for pid in pids.values()), pids
        command_session = os.getsid(pids["disown"])
        assert os.getpgid(pids["setpgid"]) == pids["setpgid"] != os.getpgid(pids["disown"])
        for name in ("setsid", "setsid_f", "double_fork"):
            assert os.getsid(pids[name]) != command_session, name

    def survivors(self) -> tuple[int, int]:
        """(escapees alive by pid, processes alive with the marker)."""
        by_pid = sum(pid_alive(pid) for pid in self.pids().values())
        return by_pid, len(with_marker(self.marker))

    def assert_none_survive(self) -> None:
        wait_until(lambda: self.survivors() == (0, 0), timeout=SETTLE_S)
        assert self.survivors() == (0, 0)


@pytest.fixture
def root(tmp_path: Path) -> Path:
    path = tmp_path / "root"
    path.mkdir()
    return path


@pytest.fixture
def builtins(tools: wb.Registry, root: Path):
    built = wb.builtins.register(tools, root=root, background_window=0.3)
    yield built
    tools.close()


@pytest.fixture
def escapes(tmp_path: Path):
    found = Escapes(tmp_path / "escapes")
    yield found
    for pid in with_marker(found.marker):  # never leave a process behind, even on failure
        os.kill(pid, signal.SIGKILL)


def running(tools: wb.Registry, escapes: Escapes, name: str = "shell_exec", **args: object):
    call = tools.invoke(name, {"command": escapes.bash() + f"sleep {escapes.marker}", **args})
    assert wait_until(escapes.all_started, timeout=20), call.output()
    escapes.assert_escaped()
    return call


def test_terminate_ends_every_escapee(tools, builtins, escapes):
    call = running(tools, escapes)
    call.terminate()
    assert call.wait(15).killed_by == "user"
    escapes.assert_none_survive()


def test_idle_timeout_ends_every_escapee(tools, builtins, escapes):
    call = running(tools, escapes, timeout=1.5)
    envelope = call.wait(20)
    assert envelope.killed_by == "idle_timeout"
    escapes.assert_none_survive()


def test_wall_clock_timeout_ends_every_escapee(tools, builtins, escapes, root):
    tools.register(
        make_shell_exec(root, builtins.jobs, 0.3), name="shell_budget", family="command", timeout=3
    )
    call = running(tools, escapes, "shell_budget")
    envelope = call.wait(20)
    assert envelope.killed_by == "timeout"
    escapes.assert_none_survive()


@pytest.mark.slow
def test_a_spawned_process_tree_ends_at_the_wall_clock_timeout(tools, escapes):
    script = escapes.bash() + f"sleep {escapes.marker}"

    @tools.tool(timeout=3)
    def spawner(ctx: wb.ToolContext) -> int:
        """Start the escape patterns through ctx.spawn and wait."""
        return ctx.spawn(["bash", "-c", script]).wait()

    call = tools.invoke("spawner")
    assert wait_until(escapes.all_started, timeout=20)
    escapes.assert_escaped()
    assert call.wait(20).killed_by == "timeout"
    escapes.assert_none_survive()


def test_a_normal_end_ends_the_leftovers_and_names_how_many(tools, builtins, escapes):
    wait_all = " ".join(f"[ -e {escapes.pid_file(name)} ] &&" for name in PATTERNS)
    command = escapes.bash() + f"until {wait_all} true; do sleep 0.05; done; echo done"
    call = tools.invoke("shell_exec", {"command": command})
    envelope = call.wait(30)
    assert envelope.ok and call.output().endswith("done\n")
    (warning,) = envelope.warnings
    left = int(warning.split("left ")[1].split()[0])
    assert left >= len(PATTERNS), warning
    escapes.assert_none_survive()


def test_registry_close_ends_background_jobs_and_running_calls(tools, builtins, tmp_path):
    background = Escapes(tmp_path / "background")
    foreground = Escapes(tmp_path / "foreground")
    try:
        job = tools.invoke(
            "shell_exec",
            {"command": background.bash() + f"sleep {background.marker}", "background": True},
        )
        assert job.wait(20).ok
        call = running(tools, foreground)
        assert wait_until(background.all_started, timeout=20)
        background.assert_escaped()
        time.sleep(0.5)  # a background job is exempt while it is meant to run
        alive, marked = background.survivors()
        assert alive == len(PATTERNS) and marked > len(PATTERNS)
        tools.close()
        assert background.survivors() == (0, 0)  # close returns once they ended
        foreground.assert_none_survive()
        assert call.wait(15) is not None
    finally:
        for marker in (background.marker, foreground.marker):
            for pid in with_marker(marker):
                os.kill(pid, signal.SIGKILL)


def test_process_kill_ends_a_job_and_every_descendant(tools, builtins, escapes):
    job = tools.invoke(
        "shell_exec",
        {"command": escapes.bash() + f"sleep {escapes.marker}", "background": True},
    )
    pid = job.wait(20).result["pid"]
    assert wait_until(escapes.all_started, timeout=20)
    escapes.assert_escaped()
    killed = tools.invoke("process", {"action": "kill", "pid": pid}).wait(20)
    assert killed.result["killed"] is True and killed.result["running"] is False
    escapes.assert_none_survive()


CHILD_PROGRAM = """
import sys, time
import workbench as wb
import workbench.builtins
tools = wb.Registry(history=":memory:", terminate_grace=0.5)
wb.builtins.register(tools, root=sys.argv[1], background_window=0.3)
tools.invoke("shell_exec", {"command": sys.argv[2]})
tools.invoke("shell_exec", {"command": sys.argv[3], "background": True})
print("started", flush=True)
if sys.argv[4] == "exit":
    sys.stdin.readline()
    sys.exit(0)
time.sleep(120)
"""


@pytest.mark.parametrize("end", ["SIGKILL", "SIGTERM", "exit"])
def test_the_python_running_the_registry_ending_ends_every_escapee(root, tmp_path, end):
    foreground, background = Escapes(tmp_path / "fg"), Escapes(tmp_path / "bg")
    env = {**os.environ, "PYTHONPATH": str(Path(wb.__file__).parent.parent)}
    child = subprocess.Popen(
        [
            sys.executable,
            "-c",
            CHILD_PROGRAM,
            str(root),
            foreground.bash() + f"sleep {foreground.marker}",
            background.bash() + f"sleep {background.marker}",
            end,
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        env=env,
        cwd=tmp_path,
    )
    try:
        assert wait_until(lambda: foreground.all_started() and background.all_started(), 30)
        foreground.assert_escaped()
        background.assert_escaped()
        if end == "exit":
            assert child.stdin is not None
            child.stdin.write(b"\n")
            child.stdin.flush()
        else:
            child.send_signal(getattr(signal, end))
        child.wait(15)
        foreground.assert_none_survive()
        background.assert_none_survive()
    finally:
        child.kill()
        child.wait()
        for marker in (foreground.marker, background.marker):
            for pid in with_marker(marker):
                os.kill(pid, signal.SIGKILL)


FORKING_PROGRAM = """
import os, sys, time
import workbench as wb
import workbench.builtins
tools = wb.Registry(history=":memory:", terminate_grace=0.5)
wb.builtins.register(tools, root=sys.argv[1])
with open(sys.argv[2]) as script:  # not in argv: the fork must not carry the marker
    tools.invoke("shell_exec", {"command": script.read()})
time.sleep(1.0)
if os.fork() == 0:  # a fork of the registry's Python that outlives it
    time.sleep(60)
    os._exit(0)
print("forked", flush=True)
time.sleep(120)
"""


@pytest.mark.slow
def test_a_fork_of_the_python_does_not_keep_its_processes_alive(root, tmp_path):
    escapes = Escapes(tmp_path / "escapes")
    env = {**os.environ, "PYTHONPATH": str(Path(wb.__file__).parent.parent)}
    script = tmp_path / "command.sh"
    script.write_text(escapes.bash() + f"sleep {escapes.marker}")
    child = subprocess.Popen(
        [sys.executable, "-c", FORKING_PROGRAM, str(root), str(script)],
        stdout=subprocess.PIPE,
        env=env,
    )
    forked = []
    try:
        assert child.stdout is not None and child.stdout.readline() == b"forked\n"
        forked = with_python_children(child.pid)
        assert wait_until(escapes.all_started, timeout=20)
        child.kill()
        child.wait(15)
        assert forked and all(pid_alive(pid) for pid in forked)
        escapes.assert_none_survive()
    finally:
        child.kill()
        child.wait()
        for pid in [*forked, *with_marker(escapes.marker)]:
            if pid_alive(pid):
                os.kill(pid, signal.SIGKILL)


def with_python_children(pid: int) -> list[int]:
    """Children of ``pid`` that are Python processes (the fork), not supervisors."""
    found = []
    for child in children_of(pid):
        try:
            with open(f"/proc/{child}/cmdline", "rb") as handle:
                cmdline = handle.read()
        except OSError:
            continue
        if b"_supervisor" not in cmdline:
            found.append(child)
    return found


def test_end_processes_ends_what_a_tool_spawned_and_left_running(tools, escapes):
    script = escapes.bash() + f"sleep {escapes.marker}"

    @tools.tool
    def leaves_it_running(ctx: wb.ToolContext) -> str:
        """Spawn the escape patterns, end them as the runtime does when a call ends."""
        ctx.spawn(["bash", "-c", script])
        assert wait_until(escapes.all_started, timeout=20)
        escapes.assert_escaped()
        ctx.end_processes()
        return "returned"

    assert tools.invoke("leaves_it_running").wait(30).result == "returned"
    escapes.assert_none_survive()
