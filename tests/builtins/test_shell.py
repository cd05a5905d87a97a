"""shell_exec on real processes: pipefail, warnings, streaming, idle timeout, Terminate, memory."""

from __future__ import annotations

import hashlib
import subprocess
import threading
import time
from pathlib import Path

import pytest

import workbench as wb
import workbench.builtins
from tests.conftest import group_left_after_exit, pid_alive, pids_in_group, wait_until
from workbench.builtins.commands import leftover_warning
from workbench.families.command import EMPTY_OUTPUT_WARNING, SIGPIPE_WARNING


@pytest.fixture
def root(tmp_path: Path) -> Path:
    path = tmp_path / "root"
    path.mkdir()
    return path


@pytest.fixture
def builtins(tools: wb.Registry, root: Path) -> workbench.builtins.Builtins:
    return wb.builtins.register(tools, root=root)


def run(tools: wb.Registry, args: dict[str, object], timeout: float = 30) -> wb.Call:
    call = tools.invoke("shell_exec", args)
    call.wait(timeout)
    return call


def values(text: str) -> dict[str, int]:
    """``name=123`` lines of a command's output."""
    pairs = (line.split("=", 1) for line in text.splitlines() if "=" in line)
    return {name: int(value) for name, value in pairs}


def test_output_is_a_seed_001_receipt(tools, builtins):
    call = run(tools, {"command": "printf 'a.py\\nb.py\\n'"})
    assert call.receipt == "Process exited with code 0\nstdout:\na.py\nb.py"
    result = call.envelope.result
    assert result["kind"] == "command" and result["exit_code"] == 0 and result["cwd"] == "."
    assert result["stdout_preview"] == "a.py\nb.py\n" and result["stderr_preview"] is None


def test_stderr_is_kept_apart_and_a_non_zero_exit_is_a_result(tools, builtins):
    call = run(tools, {"command": "echo out; echo 'no such thing' >&2; exit 3"})
    assert call.envelope.ok and call.state == "succeeded"
    assert call.receipt == ("Process exited with code 3\nstdout:\nout\nstderr:\nno such thing")


def test_pipefail_surfaces_an_upstream_failure(tools, builtins):
    call = run(tools, {"command": "false | true"})
    assert call.envelope.result["exit_code"] == 1
    assert call.receipt == "Process exited with code 1\n(no output)"


def test_sigpipe_is_a_soft_warning(tools, builtins):
    call = run(tools, {"command": "yes | head -1"})
    assert call.envelope.result["exit_code"] == 141
    assert call.envelope.warnings == (SIGPIPE_WARNING,)
    assert call.receipt == f"Process exited with code 141\nstdout:\ny\nwarning: {SIGPIPE_WARNING}"


@pytest.mark.parametrize("command", ["true | cat", "ls no-such-file 2>/dev/null || true"])
def test_silence_after_a_pipe_or_hidden_stderr_is_a_warning(tools, builtins, command):
    call = run(tools, {"command": command})
    assert call.envelope.result["exit_code"] == 0
    assert call.envelope.warnings == (EMPTY_OUTPUT_WARNING,)


def test_plain_silence_is_no_warning(tools, builtins):
    assert run(tools, {"command": "true"}).envelope.warnings == ()


def test_json_output_reads_as_json(tools, builtins):
    call = run(tools, {"command": """echo '{"ok": true, "n": 2}'"""})
    assert call.receipt == 'Process exited with code 0\nstdout:\n{\n  "ok": true,\n  "n": 2\n}'


def test_a_shell_killed_by_a_signal(tools, builtins):
    call = run(tools, {"command": "kill -9 $$"})
    assert call.envelope.result["exit_code"] == 137
    assert call.receipt == "Process exited with code 137 (killed by SIGKILL)\n(no output)"


def test_output_streams_live_in_chunks_not_lines(tools, builtins):
    call = tools.invoke(
        "shell_exec", {"command": "printf 'no newline yet'; sleep 1; printf ' end'"}
    )
    assert wait_until(lambda: call.output() == "no newline yet", timeout=5)
    assert not call.done
    call.wait(10)
    assert call.output() == "no newline yet end"
    texts = [event.text for event in call.events if event.type == "tool.output"]
    assert texts[0] == "no newline yet"


def test_stdout_and_stderr_are_read_concurrently(tools, builtins):
    # 512 KiB on stderr before any stdout: a reader that drained one pipe at a time would hang.
    command = "head -c 524288 /dev/zero | tr '\\0' e >&2; echo done"
    call = run(tools, {"command": command}, timeout=30)
    assert call.output("stderr") == "e" * 524288
    assert call.output("stdout") == "done\n"
    assert call.envelope.result["stderr_truncated"] is True


def test_cwd_is_confined_to_the_root(tools, builtins, root):
    (root / "sub").mkdir()
    (root / "file.txt").write_text("x")
    call = run(tools, {"command": "pwd", "cwd": "sub"})
    assert call.output() == f"{root / 'sub'}\n" and call.envelope.result["cwd"] == "sub"
    escaped = run(tools, {"command": "pwd", "cwd": "../"}).envelope.error
    assert escaped.kind == "invalid_args" and escaped.field == "cwd"
    assert "climbs out of the root" in escaped.message
    missing = run(tools, {"command": "pwd", "cwd": "nope"}).envelope.error
    assert missing.kind == "not_found" and missing.field == "cwd"
    not_dir = run(tools, {"command": "pwd", "cwd": "file.txt"}).envelope.error
    assert not_dir.kind == "invalid_args" and "not a directory" in not_dir.message


def test_idle_timeout_kills_the_group_and_keeps_the_output(tools, builtins):
    started = time.monotonic()
    call = run(tools, {"command": "echo shell=$$; sleep 30 & wait", "timeout": 0.5})
    assert time.monotonic() - started < 5
    envelope = call.envelope
    assert envelope.error.kind == "timeout" and envelope.killed_by == "idle_timeout"
    assert envelope.error.retryable is True
    assert call.state == "failed"
    shell = values(call.output())["shell"]
    assert envelope.error.details["stdout_preview"] == f"shell={shell}\n"
    assert call.receipt == (
        "Error (timeout): `shell_exec` printed nothing for 0.5 s (its idle timeout) and was "
        "stopped\n"
        "hint: raise `timeout`, make the command print progress, or run it with background: true\n"
        "killed_by: idle_timeout\n"
        "retry may help\n"
        f"stdout before it stopped:\nshell={shell}"
    )
    assert wait_until(lambda: not pids_in_group(shell), timeout=5)


def test_every_byte_of_output_restarts_the_idle_clock(tools, builtins):
    call = run(
        tools, {"command": "for i in 1 2 3 4 5 6; do echo $i; sleep 0.3; done", "timeout": 1.2}
    )
    assert call.envelope.ok and call.envelope.result["exit_code"] == 0
    assert call.output() == "1\n2\n3\n4\n5\n6\n"


def test_terminate_mid_stream_ends_children_and_grandchildren(tools, builtins):
    command = (
        "echo shell=$$; (sleep 60 & echo grandchild=$!; wait) & echo child=$!; "
        "while true; do echo tick; sleep 0.05; done"
    )
    call = tools.invoke("shell_exec", {"command": command})
    assert wait_until(lambda: {"shell", "child", "grandchild"} <= set(values(call.output())))
    assert wait_until(lambda: call.output().count("tick") >= 3)
    pids = values(call.output())
    assert all(pid_alive(pid) for pid in pids.values())
    call.terminate()
    envelope = call.wait(10)
    assert envelope.killed_by == "user" and call.state == "terminated"
    assert "tick" in envelope.error.details["stdout_preview"]
    assert wait_until(lambda: not any(pid_alive(pid) for pid in pids.values()), timeout=5)
    assert group_left_after_exit(pids["shell"]) == []


def test_processes_left_behind_by_a_finished_command_are_stopped(tools, builtins):
    call = run(tools, {"command": "sleep 30 > /dev/null 2>&1 & echo left=$!"})
    left = values(call.output())["left"]
    assert call.envelope.ok and call.envelope.warnings == (leftover_warning(1),)
    assert wait_until(lambda: not pid_alive(left), timeout=5)


def test_a_descendant_that_keeps_printing_does_not_hold_the_call_open(tools, builtins):
    command = "(while true; do echo x; sleep 0.01; done) & echo started"
    started = time.monotonic()
    call = run(tools, {"command": command}, timeout=15)
    assert time.monotonic() - started < 5
    assert call.envelope.ok
    assert call.envelope.warnings in ((leftover_warning(1),), (leftover_warning(2),))
    assert "started\n" in call.output()


def _rss_mb() -> float:
    with open("/proc/self/status") as handle:
        for line in handle:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    raise AssertionError("no VmRSS")


def _sha256_of(command: str) -> tuple[str, int]:
    digest, size = hashlib.sha256(), 0
    with subprocess.Popen(["bash", "-c", command], stdout=subprocess.PIPE) as process:
        assert process.stdout is not None
        while chunk := process.stdout.read(1 << 20):
            digest.update(chunk)
            size += len(chunk)
    return digest.hexdigest(), size


@pytest.mark.slow
def test_100_mb_streams_with_bounded_memory_into_a_byte_exact_artifact(tools, builtins):
    command = "seq 1 12500000"  # 101,388,897 bytes
    baseline = _rss_mb()
    peak = [baseline]
    done = threading.Event()

    def sample() -> None:
        while not done.is_set():
            peak[0] = max(peak[0], _rss_mb())
            time.sleep(0.01)

    sampler = threading.Thread(target=sample)
    sampler.start()
    try:
        call = run(tools, {"command": command}, timeout=240)
    finally:
        done.set()
        sampler.join()
    assert peak[0] - baseline < 64, f"RSS grew by {peak[0] - baseline:.0f} MB"

    result = call.envelope.result
    expected_hash, expected_size = _sha256_of(command)
    assert result["stdout_bytes"] == expected_size > 100_000_000
    artifact = call.envelope.artifacts[result["stdout_artifact"]].path
    digest = hashlib.sha256()
    with open(artifact, "rb") as handle:
        while chunk := handle.read(1 << 20):
            digest.update(chunk)
    assert digest.hexdigest() == expected_hash
    assert call.receipt.startswith("Process exited with code 0\nstdout:\n1\n2\n3\n")
    assert call.receipt.endswith(
        f"12499999\n12500000\nfull stdout ({expected_size} bytes): {artifact} "
        "(read more with artifact_read)"
    )

    middle = tools.invoke("artifact_read", {"path": artifact, "offset": 6_000_000, "limit": 3})
    middle.wait(60)
    assert middle.envelope.result["text"] == "6000000\n6000001\n6000002\n"
    assert middle.envelope.result["total_lines"] == 12_500_000
    assert middle.receipt == (
        f"{artifact} (lines 6000000-6000002 of 12500000)\n6000000\n6000001\n6000002"
    )
