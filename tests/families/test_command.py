"""The command family: canonical results and receipts of commands and background jobs."""

from __future__ import annotations

import hashlib
import shutil
from pathlib import Path

import pytest

from workbench.families import Budgets, Completed, family_of, project, render
from workbench.families.command import (
    EMPTY_OUTPUT_WARNING,
    SIGPIPE_WARNING,
    CommandOutput,
    JobStatus,
)
from workbench.output._artifacts import ArtifactSink, ArtifactStore
from workbench.output._spool import Spool

SMALL = Budgets(stdout_chars=40, stderr_chars=40, initial_output_chars=40, log_chars=40)
HUNDRED_LINES = "".join(f"line {i}\n" for i in range(1, 101))
CUT_HUNDRED = (
    "line 1\nline 2\n[output truncated: showing first 2 and last 3 lines]\n"
    "line 98\nline 99\nline 100\n"
)


def completed(
    root: Path, value: object, streams: dict[str, bytes] | None = None, memory_limit: int = 1 << 20
) -> Completed:
    sink = ArtifactSink(ArtifactStore(root / "artifacts"), "call_test")
    spools = {}
    for name, data in (streams or {}).items():
        spool = Spool(sink, f"{name}.log", memory_limit=memory_limit)
        spool.write(data)
        spools[name] = spool
    return Completed("shell_exec", value, sink, spools)


def output(command: str = "ls", exit_code: int | None = 0, **fields: object) -> CommandOutput:
    return CommandOutput(command=command, cwd=".", exit_code=exit_code, duration_ms=7, **fields)


def test_a_foreground_command_projects_to_the_seed_001_shape(tmp_path):
    envelope = project("command", completed(tmp_path, output(), {"stdout": b"a.py\nb.py\n"}))
    assert envelope.canonical() == {
        "tool_name": "shell_exec",
        "status": "success",
        "summary_text": "command exited with status 0",
        "result": {
            "kind": "command",
            "background": False,
            "exit_code": 0,
            "cwd": ".",
            "duration_ms": 7,
            "stdout_preview": "a.py\nb.py\n",
            "stdout_bytes": 10,
            "stderr_preview": None,
            "stderr_bytes": 0,
            "truncated": False,
            "stdout_truncated": False,
            "stderr_truncated": False,
        },
        "error": None,
        "warnings": [],
        "artifacts": [],
        "call_id": None,
    }
    assert render(envelope) == "Process exited with code 0\nstdout:\na.py\nb.py"
    assert family_of(envelope).name == "command"


def test_stderr_follows_stdout_and_a_non_zero_exit_is_a_result(tmp_path):
    streams = {"stdout": b"partial\n", "stderr": b"boom: no such file\n"}
    envelope = project("command", completed(tmp_path, output(exit_code=2), streams))
    assert envelope.ok
    assert render(envelope) == (
        "Process exited with code 2\nstdout:\npartial\nstderr:\nboom: no such file"
    )


def test_a_silent_command_says_so(tmp_path):
    envelope = project("command", completed(tmp_path, output(exit_code=1)))
    assert render(envelope) == "Process exited with code 1\n(no output)"


def test_json_output_is_shown_indented_not_escaped(tmp_path):
    streams = {"stdout": b'{"name": "ada", "tags": ["x"]}\n'}
    envelope = project("command", completed(tmp_path, output(), streams))
    assert envelope.result["stdout_preview"] == '{"name": "ada", "tags": ["x"]}\n'
    assert render(envelope) == (
        'Process exited with code 0\nstdout:\n{\n  "name": "ada",\n  "tags": [\n    "x"\n  ]\n}'
    )


def test_output_that_only_looks_like_json_is_verbatim(tmp_path):
    streams = {"stdout": b"{not json}\n"}
    envelope = project("command", completed(tmp_path, output(), streams))
    assert render(envelope) == "Process exited with code 0\nstdout:\n{not json}"


def test_a_long_stream_is_cut_head_and_tail_and_kept_whole_as_an_artifact(tmp_path):
    streams = {"stdout": HUNDRED_LINES.encode()}
    envelope = project("command", completed(tmp_path, output(), streams), SMALL)
    result = envelope.result
    assert result["stdout_preview"] == CUT_HUNDRED
    assert result["truncated"] is True and result["stdout_truncated"] is True
    assert result["stderr_truncated"] is False
    assert result["stdout_artifact"] == 0
    path = envelope.artifacts[0].path
    assert Path(path).read_text() == HUNDRED_LINES
    assert render(envelope, SMALL) == (
        "Process exited with code 0\nstdout:\n"
        + CUT_HUNDRED.rstrip("\n")
        + f"\nfull stdout (792 bytes): {path} (read more with artifact_read)"
    )


def test_a_spilled_stream_is_adopted_not_copied(tmp_path):
    data = HUNDRED_LINES.encode() * 50
    done = completed(tmp_path, output(), {"stdout": data}, memory_limit=100)
    envelope = project("command", done, SMALL)
    call_dir = tmp_path / "artifacts" / "call_test"
    assert [p.name for p in call_dir.iterdir()] == ["stdout.log"]
    assert Path(envelope.artifacts[0].path) == call_dir / "stdout.log"
    assert hashlib.sha256((call_dir / "stdout.log").read_bytes()).digest() == (
        hashlib.sha256(data).digest()
    )


def test_each_cut_stream_has_its_own_artifact_index(tmp_path):
    streams = {"stderr": HUNDRED_LINES.encode(), "stdout": HUNDRED_LINES.encode()}
    envelope = project("command", completed(tmp_path, output(), streams), SMALL)
    result = envelope.result
    assert {result["stdout_artifact"], result["stderr_artifact"]} == {0, 1}
    for stream in ("stdout", "stderr"):
        path = envelope.artifacts[result[f"{stream}_artifact"]].path
        assert Path(path).name == f"{stream}.log"


@pytest.mark.parametrize(
    ("command", "exit_code", "stdout", "expected"),
    [
        ("yes | head -1", 141, b"y\n", [SIGPIPE_WARNING]),
        ("true | cat", 0, b"", [EMPTY_OUTPUT_WARNING]),
        ("ls missing 2>/dev/null", 0, b"", [EMPTY_OUTPUT_WARNING]),
        ("true", 0, b"", []),
        ("false | cat", 1, b"", []),
        ("echo hi | cat", 0, b"hi\n", []),
    ],
)
def test_pipeline_diagnostics_follow_seed_000(tmp_path, command, exit_code, stdout, expected):
    streams = {"stdout": stdout} if stdout else {}
    envelope = project("command", completed(tmp_path, output(command, exit_code), streams))
    assert list(envelope.warnings) == expected


def test_warnings_come_last_in_the_receipt(tmp_path):
    done = completed(tmp_path, output("yes | head -1", 141), {"stdout": b"y\n"})
    assert render(project("command", done)) == (
        f"Process exited with code 141\nstdout:\ny\nwarning: {SIGPIPE_WARNING}"
    )


def test_a_shell_killed_by_a_signal_says_which(tmp_path):
    done = completed(tmp_path, output(exit_code=137, signal="SIGKILL"))
    envelope = project("command", done)
    assert envelope.result["signal"] == "SIGKILL"
    assert envelope.summary_text == "command exited with status 137 (killed by SIGKILL)"
    assert render(envelope) == "Process exited with code 137 (killed by SIGKILL)\n(no output)"


def test_a_tool_may_return_complete_output_as_a_mapping(tmp_path):
    value = {"exit_code": 3, "stdout": HUNDRED_LINES, "stderr": "bad\n"}
    envelope = project("command", completed(tmp_path, value), SMALL)
    result = envelope.result
    assert result["exit_code"] == 3 and result["stderr_preview"] == "bad\n"
    assert result["stdout_preview"] == CUT_HUNDRED
    assert Path(envelope.artifacts[result["stdout_artifact"]].path).read_text() == HUNDRED_LINES


def test_a_promoted_command_renders_as_a_background_task(tmp_path):
    log = tmp_path / "artifacts" / "call_test" / "background.log"
    log.parent.mkdir(parents=True)
    log.write_text("Starting server on :3000\nmore later\n")
    value = output("serve", None, background=True, pid=4242, log_file=log, log_size=25)
    envelope = project("command", completed(tmp_path, value))
    assert envelope.result == {
        "kind": "command",
        "background": True,
        "pid": 4242,
        "cwd": ".",
        "log_file": str(log),
        "log_artifact": 0,
        "running": True,
        "exit_code": None,
        "duration_ms": 7,
        "initial_output_preview": "Starting server on :3000\n",
        "initial_output_truncated": False,
    }
    assert envelope.summary_text == "command promoted to background task 4242"
    assert render(envelope) == (
        "Command promoted to background task\n"
        "Task: 4242\n"
        f"Log file: {log}\n"
        "Initial output:\n"
        "Starting server on :3000\n"
        "Use the process tool with pid 4242 to poll, wait for or kill it."
    )


def test_a_background_task_that_already_exited_says_so(tmp_path):
    log = tmp_path / "artifacts" / "call_test" / "background.log"
    log.parent.mkdir(parents=True)
    log.write_text("")
    value = output("false", 1, background=True, pid=7, log_file=log, log_size=0)
    assert render(project("command", completed(tmp_path, value))) == (
        "Command promoted to background task\nTask: 7\nAlready exited with code 1\n"
        f"Log file: {log}\nInitial output: (none yet)\n"
        "Use the process tool with pid 7 to poll, wait for or kill it."
    )


def job(log: Path, **fields: object) -> JobStatus:
    defaults: dict[str, object] = {
        "action": "poll",
        "pid": 99,
        "command": "make build",
        "cwd": ".",
        "running": True,
        "exit_code": None,
        "log_file": log,
        "log_size": log.stat().st_size,
    }
    return JobStatus(**{**defaults, **fields})  # type: ignore[arg-type]


@pytest.fixture
def log(tmp_path: Path) -> Path:
    path = tmp_path / "artifacts" / "call_job" / "background.log"
    path.parent.mkdir(parents=True)
    path.write_text(HUNDRED_LINES)
    return path


def test_a_job_snapshot_reads_the_log_as_it_was(tmp_path, log):
    value = job(log, log_size=14)
    with log.open("a") as handle:
        handle.write("written after the snapshot\n")
    envelope = project("command", completed(tmp_path, value))
    assert envelope.result["output_preview"] == "line 1\nline 2\n"
    assert envelope.result["output_bytes"] == 14
    assert (
        render(envelope) == "Task 99 is still running\nCommand: make build\nOutput:\nline 1\nline 2"
    )


def test_job_receipts_for_exit_wait_and_kill(tmp_path, log):
    exited = project("command", completed(tmp_path, job(log, running=False, exit_code=0)), SMALL)
    assert render(exited, SMALL) == (
        "Task 99 exited with code 0\nCommand: make build\nOutput:\n"
        + CUT_HUNDRED.rstrip("\n")
        + f"\nfull log (792 bytes): {exited.result['log_file']} (read more with artifact_read)"
    )
    waited = project("command", completed(tmp_path, job(log, action="wait", waited_ms=1500)))
    assert render(waited).startswith("Task 99 is still running after waiting 1.5 s\n")
    killed = job(log, action="kill", killed=True, running=False, exit_code=143, signal="SIGTERM")
    assert render(project("command", completed(tmp_path, killed))).startswith(
        "Task 99 was killed by SIGTERM (exit code 143)\n"
    )
    late = job(log, action="kill", running=False, exit_code=0)
    assert render(project("command", completed(tmp_path, late))).startswith(
        "Task 99 had already exited with code 0\n"
    )


def test_projection_and_rendering_are_deterministic(tmp_path):
    streams = {"stdout": HUNDRED_LINES.encode() * 3, "stderr": b"warn\n"}
    outcomes = []
    for _ in range(2):
        shutil.rmtree(tmp_path / "artifacts", ignore_errors=True)
        envelope = project("command", completed(tmp_path, output("x | y"), streams), SMALL)
        outcomes.append((envelope.canonical(), render(envelope, SMALL)))
    assert outcomes[0] == outcomes[1]


def test_an_already_canonical_command_result_passes_through(tmp_path):
    first = project("command", completed(tmp_path, output(), {"stdout": b"hi\n"}))
    again = project("command", completed(tmp_path, first))
    assert again.canonical() == first.canonical()
