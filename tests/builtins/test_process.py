"""Background jobs: shell_exec background: true, then the process tool's poll, wait and kill."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

import workbench as wb
import workbench.builtins
from tests.conftest import group_left_after_exit, pid_alive, wait_until


@pytest.fixture
def root(tmp_path: Path) -> Path:
    path = tmp_path / "root"
    path.mkdir()
    return path


@pytest.fixture
def builtins(tools: wb.Registry, root: Path) -> workbench.builtins.Builtins:
    built = wb.builtins.register(tools, root=root, background_window=1.0)
    yield built
    built.jobs.close()


def invoke(tools: wb.Registry, name: str, args: dict[str, object], timeout: float = 30) -> wb.Call:
    call = tools.invoke(name, args)
    call.wait(timeout)
    return call


def start(tools: wb.Registry, command: str) -> dict[str, object]:
    call = invoke(tools, "shell_exec", {"command": command, "background": True})
    assert call.envelope.ok, call.receipt
    return call.envelope.result


def test_a_background_command_returns_at_once_with_its_handles(tools, builtins):
    started = time.monotonic()
    call = invoke(tools, "shell_exec", {"command": "echo ready; sleep 30", "background": True})
    assert time.monotonic() - started < 3
    result = call.envelope.result
    pid, log_file = result["pid"], result["log_file"]
    assert result["background"] is True and result["running"] is True
    assert result["cwd"] == "." and result["initial_output_preview"] == "ready\n"
    assert Path(log_file).read_text().startswith("ready\n")
    assert call.envelope.artifacts[result["log_artifact"]].path == log_file
    assert pid_alive(pid)
    assert call.receipt == (
        "Command promoted to background task\n"
        f"Task: {pid}\n"
        f"Log file: {log_file}\n"
        "Initial output:\nready\n"
        f"Use the process tool with pid {pid} to poll, wait for or kill it."
    )


def test_poll_then_wait_for_a_job_to_finish(tools, builtins):
    result = start(tools, "echo one; sleep 3; echo two; exit 4")
    pid = result["pid"]
    polled = invoke(tools, "process", {"action": "poll", "pid": pid})
    assert polled.envelope.result["running"] is True
    assert polled.receipt.startswith(f"Task {pid} is still running\n")
    waited = invoke(tools, "process", {"action": "wait", "pid": pid, "timeout": 10})
    assert waited.envelope.result["running"] is False
    assert waited.envelope.result["exit_code"] == 4
    assert waited.receipt == (
        f"Task {pid} exited with code 4\n"
        "Command: echo one; sleep 3; echo two; exit 4\n"
        "Output:\none\ntwo"
    )


def test_wait_is_bounded_by_its_timeout(tools, builtins):
    pid = start(tools, "sleep 30")["pid"]
    started = time.monotonic()
    waited = invoke(tools, "process", {"action": "wait", "pid": pid, "timeout": 0.5})
    assert 0.4 < time.monotonic() - started < 5
    assert waited.envelope.result["running"] is True
    assert waited.receipt.startswith(f"Task {pid} is still running after waiting ")


def test_kill_ends_the_job_and_everything_it_started(tools, builtins):
    result = start(tools, "(sleep 60 & echo grandchild=$!; wait) & echo child=$!; wait")
    pid = result["pid"]
    assert wait_until(lambda: "grandchild=" in Path(result["log_file"]).read_text())
    lines = Path(result["log_file"]).read_text().splitlines()
    pids = [int(line.split("=")[1]) for line in lines if "=" in line]
    assert len(pids) == 2 and all(pid_alive(p) for p in pids)
    killed = invoke(tools, "process", {"action": "kill", "pid": pid})
    assert killed.envelope.result["killed"] is True
    assert killed.envelope.result["running"] is False
    assert killed.receipt.startswith(f"Task {pid} was killed by SIGTERM (exit code 143)\n")
    assert wait_until(lambda: not any(pid_alive(p) for p in [pid, *pids]), timeout=5)
    assert group_left_after_exit(pid) == []
    again = invoke(tools, "process", {"action": "kill", "pid": pid})
    assert again.envelope.result["killed"] is False
    assert again.receipt.startswith(f"Task {pid} had already exited with code 143")


def test_only_jobs_this_registry_started_are_reachable(tools, builtins, tmp_path):
    other = wb.Registry(history=":memory:", artifacts=tmp_path / "other")
    other_builtins = wb.builtins.register(other, root=tmp_path / "root")
    try:
        foreign = invoke(other, "shell_exec", {"command": "sleep 30", "background": True})
        foreign_pid = foreign.envelope.result["pid"]
        mine = start(tools, "sleep 30")["pid"]
        refused = invoke(tools, "process", {"action": "kill", "pid": foreign_pid}).envelope
        assert refused.error.kind == "invalid_args" and refused.error.field == "pid"
        assert refused.error.message == (
            f"No background task with pid {foreign_pid} was started by shell_exec here; "
            f"the tasks it started: {mine}."
        )
        assert pid_alive(foreign_pid)
    finally:
        other_builtins.jobs.close()
        other.history.close()


def test_terminate_during_the_first_moment_kills_the_job(tools, root):
    built = wb.builtins.register(tools, root=root, background_window=30)
    call = tools.invoke("shell_exec", {"command": "echo pid=$$; sleep 60", "background": True})
    assert wait_until(lambda: "pid=" in call.output())
    pid = int(call.output().split("=")[1])
    call.terminate()
    envelope = call.wait(10)
    assert envelope.killed_by == "user"
    assert envelope.error.details["stdout_preview"] == f"pid={pid}\n"
    assert wait_until(lambda: not pid_alive(pid), timeout=5)
    built.jobs.close()


def test_a_background_timeout_is_ignored_with_a_warning(tools, builtins):
    call = invoke(tools, "shell_exec", {"command": "true", "background": True, "timeout": 5})
    assert call.envelope.warnings == (
        "timeout was ignored: it applies to foreground commands only",
    )
    assert call.receipt.endswith(
        "\nwarning: timeout was ignored: it applies to foreground commands only"
    )


def test_a_job_log_is_readable_through_artifact_read(tools, builtins):
    result = start(tools, "seq 1 5000; sleep 30")
    assert wait_until(lambda: Path(result["log_file"]).stat().st_size >= 23_893)
    read = invoke(tools, "artifact_read", {"path": result["log_file"], "offset": 2500, "limit": 2})
    assert read.envelope.result["text"] == "2500\n2501\n"
