"""The failure family: receipts that say what went wrong, what to do, and what was printed."""

from __future__ import annotations

from pathlib import Path

import workbench as wb
from workbench.families import Budgets, Completed, attach_output, family_of, project, render
from workbench.output._artifacts import ArtifactSink, ArtifactStore
from workbench.output._spool import Spool


def sink_in(root: Path) -> ArtifactSink:
    return ArtifactSink(ArtifactStore(root / "artifacts"), "c1")


def test_a_failure_receipt_gives_every_field_the_model_acts_on():
    envelope = wb.failure(
        "invalid_args",
        "Missing required argument `content` (string).",
        field="content",
        expected="non-empty string of file contents",
        recovery_hint="send the file's text as `content`",
    )
    assert family_of(envelope).name == "failure"
    assert render(envelope) == (
        "Error (invalid_args): Missing required argument `content` (string).\n"
        "field: content\n"
        "expected: non-empty string of file contents\n"
        "hint: send the file's text as `content`\n"
        "retry may help"
    )


def test_a_not_found_failure_says_not_to_retry_unchanged():
    envelope = wb.failure("not_found", "`a/b` does not exist.")
    assert render(envelope) == "Error (not_found): `a/b` does not exist.\ndo not retry unchanged"


def test_a_stopped_call_keeps_its_output_with_the_complete_stream_as_an_artifact(tmp_path):
    sink = sink_in(tmp_path)
    stdout = Spool(sink, "stdout.log")
    text = "".join(f"step {i}\n" for i in range(100))
    stdout.write(text.encode())
    stderr = Spool(sink, "stderr.log")
    stderr.write(b"oops\n")
    stopped = wb.failure("timeout", "`t` printed nothing for 1 s").replace(killed_by="idle_timeout")
    policy = Budgets(stdout_chars=30)
    envelope = project(
        "command", Completed("t", stopped, sink, {"stderr": stderr, "stdout": stdout}), policy
    )
    details = envelope.error.details
    assert details["stdout_bytes"] == len(text) and details["stdout_truncated"] is True
    assert details["stderr_preview"] == "oops\n" and "stderr_artifact" not in details
    path = envelope.artifacts[details["stdout_artifact"]].path
    assert Path(path).read_text() == text
    assert render(envelope, policy) == (
        "Error (timeout): `t` printed nothing for 1 s\n"
        "killed_by: idle_timeout\n"
        "retry may help\n"
        "stdout before it stopped:\n"
        "step 0\nstep 1\n[output truncated: showing first 2 and last 2 lines]\nstep 98\nstep 99\n"
        f"full stdout ({len(text)} bytes): {path} (read more with artifact_read)\n"
        "stderr before it stopped:\noops"
    )


def test_a_returned_failure_that_was_not_stopped_is_kept_as_it_is(tmp_path):
    sink = sink_in(tmp_path)
    spool = Spool(sink, "stdout.log")
    spool.write(b"chatter\n")
    returned = wb.failure("execution_error", "it broke")
    envelope = project("json", Completed("t", returned, sink, {"stdout": spool}))
    assert envelope == returned


def test_attaching_output_twice_changes_nothing(tmp_path):
    sink = sink_in(tmp_path)
    spool = Spool(sink, "stdout.log")
    spool.write(b"x\n" * 10_000)
    stopped = wb.failure("terminated", "stopped").replace(killed_by="user")
    once = attach_output(stopped, {"stdout": spool}, sink, Budgets())
    twice = attach_output(once, {"stdout": spool}, sink, Budgets())
    assert once.canonical() == twice.canonical()
    assert len(sink) == 1
