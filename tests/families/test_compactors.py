"""Each family's compactor: what every step does to one old record, and what it keeps."""

from __future__ import annotations

import pytest

import workbench as wb
from workbench.envelope._truncate import MARKER_RE, preview
from workbench.families import DEFAULT_BUDGETS, family_of
from workbench.families._base import ARTIFACT_ONLY, CompactStep, references, summary_line
from workbench.families.compacted import COMPACTED, is_compacted_result

STEPS = list(CompactStep)
LOG = "/artifacts/call_1/shell_exec.log"
STDOUT = "/artifacts/call_1/stdout.log"
LINES = "".join(f"line {number} of the output\n" for number in range(1, 401))


def step(envelope: wb.Envelope, number: int) -> wb.Envelope | None:
    return family_of(envelope).compact(envelope, number, DEFAULT_BUDGETS)


def receipt(envelope: wb.Envelope) -> str:
    if is_compacted_result(envelope.result):
        return COMPACTED.render(envelope, DEFAULT_BUDGETS)
    return wb.families.render(envelope)


def foreground(stdout: str = LINES, artifact: bool = True) -> wb.Envelope:
    cut = preview(stdout, 8_000) if artifact else preview(stdout, len(stdout))
    result = {
        "kind": "command",
        "background": False,
        "exit_code": 0,
        "cwd": ".",
        "duration_ms": 5,
        "stdout_preview": cut.text,
        "stdout_bytes": len(stdout),
        "stderr_preview": "warning: deprecated flag\n",
        "stderr_bytes": 25,
        "truncated": cut.truncated,
        "stdout_truncated": cut.truncated,
        "stderr_truncated": False,
    }
    if artifact:
        result["stdout_artifact"] = 0
    return wb.Envelope(
        tool_name="shell_exec",
        status="success",
        summary_text="command exited with status 0",
        result=result,
        artifacts=[wb.ArtifactRef(path=STDOUT)] if artifact else [],
        warnings=["exit code 141 (SIGPIPE)"],
        call_id="call_1",
    )


def promoted() -> wb.Envelope:
    return wb.Envelope(
        tool_name="shell_exec",
        status="success",
        summary_text="command promoted to background task 4242",
        result={
            "kind": "command",
            "background": True,
            "pid": 4242,
            "cwd": ".",
            "log_file": LOG,
            "log_artifact": 0,
            "running": True,
            "exit_code": None,
            "duration_ms": 500,
            "initial_output_preview": LINES[:1500],
            "initial_output_truncated": False,
        },
        artifacts=[wb.ArtifactRef(path=LOG)],
    )


def listing(count: int = 12, artifact: bool = False) -> wb.Envelope:
    envelope = wb.listing("src", [{"name": f"m{n}.py"} for n in range(count)], tool="file_read")
    if not artifact:
        return envelope.replace(warnings=["2 entries could not be read"])
    result = {**envelope.result, "truncated": True, "entry_count": 500, "entries_artifact": 0}
    return envelope.replace(result=result, artifacts=[wb.ArtifactRef(path="/a/listing.txt")])


# ── listing ──────────────────────────────────────────────────────────────────────────────────
def test_step_1_collapses_a_listing_to_its_count_and_path():
    before = listing()
    after = step(before, 1)
    assert after is not None
    assert receipt(after) == "12 entries in src"
    assert after.result == {
        "kind": "compacted",
        "family": "listing",
        "line": "12 entries in src",
        "path": "src",
        "entry_count": 12,
    }
    assert after.warnings == ()
    assert (after.tool_name, after.status, after.summary_text) == (
        before.tool_name,
        before.status,
        before.summary_text,
    )


def test_a_cut_listing_collapses_to_its_full_count_and_keeps_its_artifact():
    after = step(listing(artifact=True), 1)
    assert receipt(after) == "500 entries in src"
    assert after.result["entries_artifact"] == 0
    assert after.artifacts == (wb.ArtifactRef(path="/a/listing.txt"),)


def test_listings_have_no_other_step_and_an_empty_one_is_left_alone():
    assert [step(listing(), number) for number in (2, 3, 4)] == [None, None, None]
    assert step(wb.listing("empty", []), 1) is None
    assert step(listing(1), 1) is not None
    assert receipt(step(listing(1), 1)) == "1 entry in src"


# ── command ──────────────────────────────────────────────────────────────────────────────────
def test_step_2_cuts_command_previews_to_a_short_head_and_tail():
    after = step(foreground(), 2)
    stdout = after.result["stdout_preview"]
    assert len(stdout) < 500 and MARKER_RE.search(stdout)
    assert stdout.startswith("line 1 of the output\n")
    assert stdout.endswith("line 400 of the output\n")
    assert after.result["stdout_truncated"] is True and after.result["truncated"] is True
    assert after.result["stderr_preview"] == "warning: deprecated flag\n"  # already short
    assert after.result["stdout_artifact"] == 0
    assert after.warnings == foreground().warnings
    assert f"full stdout ({len(LINES)} bytes): {STDOUT}" in receipt(after)


def test_step_2_says_a_preview_without_artifact_was_cut_for_good():
    after = step(foreground(artifact=False), 2)
    assert after.result["stdout_truncated"] is True and "stdout_artifact" not in after.result
    assert f"[stdout ({len(LINES)} bytes) was cut; the complete value was not kept]" in receipt(
        after
    )


def test_step_3_drops_a_preview_its_artifact_holds_and_keeps_the_rest():
    after = step(step(foreground(), 2), 3)
    assert after.result["stdout_preview"] == ARTIFACT_ONLY
    assert after.result["stderr_preview"] == "warning: deprecated flag\n"
    assert receipt(after) == (
        "Process exited with code 0\n"
        "stdout:\n"
        "[output truncated: showing first 0 and last 0 lines]\n"
        f"full stdout ({len(LINES)} bytes): {STDOUT} (read more with artifact_read)\n"
        "stderr:\n"
        "warning: deprecated flag\n"
        "warning: exit code 141 (SIGPIPE)"
    )
    assert step(foreground(artifact=False), 3) is None


def test_step_4_collapses_a_command_to_one_line_naming_its_artifact():
    after = step(foreground(), 4)
    assert receipt(after) == f"shell_exec: command exited with status 0 (stdout: {STDOUT})"
    assert after.result == {
        "kind": "compacted",
        "family": "command",
        "line": f"shell_exec: command exited with status 0 (stdout: {STDOUT})",
        "stdout_artifact": 0,
    }
    assert after.call_id == "call_1" and after.warnings == ()


def test_a_background_promotion_keeps_its_pid_and_log_through_every_step():
    before = promoted()
    shrunk = step(before, 2)
    assert shrunk.result["initial_output_truncated"] is True
    dropped = step(shrunk, 3)
    assert dropped.result["initial_output_preview"] == ARTIFACT_ONLY
    assert f"full log: {LOG}" in receipt(dropped)
    line = step(dropped, 4)
    assert receipt(line) == (
        f"shell_exec: command promoted to background task 4242 (log_file: {LOG})"
    )
    assert {"pid": 4242, "log_file": LOG, "log_artifact": 0}.items() <= line.result.items()


def test_a_job_status_preview_shrinks_and_drops_like_any_log():
    job = promoted().result | {"action": "poll", "command": "make", "output_bytes": 9000}
    job.pop("initial_output_preview")
    job.pop("initial_output_truncated")
    job |= {"output_preview": LINES, "output_truncated": False}
    envelope = promoted().replace(result=job, summary_text="task 4242 is running")
    assert step(envelope, 2).result["output_truncated"] is True
    assert step(envelope, 3).result["output_preview"] == ARTIFACT_ONLY


# ── file ─────────────────────────────────────────────────────────────────────────────────────
def file_envelope() -> wb.Envelope:
    return wb.file_result("src/big.py", LINES, tool="file_read")


def test_file_text_shrinks_then_drops_and_the_receipt_says_how_to_read_it_again():
    shrunk = step(file_envelope(), 2)
    assert shrunk.result["truncated"] is True and len(shrunk.result["text"]) < 500
    dropped = step(shrunk, 3)
    assert dropped.result["text"] == ARTIFACT_ONLY
    assert receipt(dropped) == (
        "src/big.py (lines 1-400 of 400)\n"
        "[output truncated: showing first 0 and last 0 lines]\n"
        "[text cut to fit: read other lines with file_read using offset and limit]"
    )
    line = step(dropped, 4)
    assert receipt(line) == "file_read: read src/big.py (400 lines)"
    assert line.result["path"] == "src/big.py"
    assert step(file_envelope(), 1) is None


# ── text and json ────────────────────────────────────────────────────────────────────────────
def cut_text() -> wb.Envelope:
    result = {
        "text": preview(LINES, 2_000).text,
        "truncated": True,
        "chars": len(LINES),
        "text_artifact": 0,
    }
    return wb.Envelope(
        tool_name="search",
        status="success",
        result=result,
        artifacts=[wb.ArtifactRef(path="/a/text.txt")],
    )


def test_text_is_only_dropped_when_an_artifact_holds_it():
    assert step(cut_text(), 2) is None
    dropped = step(cut_text(), 3)
    assert dropped.result["text"] == ARTIFACT_ONLY
    assert receipt(dropped).endswith(
        f"full text ({len(LINES)} chars): /a/text.txt (read more with artifact_read)"
    )
    assert step(wb.success("search", text=LINES), 3) is None
    assert receipt(step(wb.success("search", text=LINES), 4)) == "search: line 1 of the output"


def test_a_cut_json_result_drops_its_preview_and_a_collapsed_one_keeps_its_handles():
    cut = {
        "kind": "json",
        "preview": preview(LINES, 2_000).text,
        "truncated": True,
        "chars": 99_999,
        "result_artifact": 0,
    }
    envelope = wb.Envelope(
        tool_name="query", status="success", result=cut, artifacts=[wb.ArtifactRef(path="/r.json")]
    )
    assert step(envelope, 3).result == cut | {"preview": ARTIFACT_ONLY}
    value = {"id": 7, "task_handle": {"task_id": "task_9"}, "rows": list(range(50))}
    line = step(wb.success("query", value), 4)
    assert line.result == {
        "kind": "compacted",
        "family": "json",
        "line": (
            "query: query returned an object with 3 keys "
            '(id: 7; task_handle: {"task_id": "task_9"})'
        ),
        "id": 7,
        "task_handle": {"task_id": "task_9"},
    }
    assert step(wb.success("query", value), 3) is None


# ── failure ──────────────────────────────────────────────────────────────────────────────────
def stopped() -> wb.Envelope:
    envelope = wb.failure(
        "timeout",
        "`shell_exec` printed nothing for 2 s and was stopped",
        tool="shell_exec",
        recovery_hint="raise `timeout`",
        details={
            "stdout_preview": preview(LINES, 8_000).text,
            "stdout_bytes": len(LINES),
            "stdout_truncated": True,
            "stdout_artifact": 0,
            "stderr_preview": LINES[:3_000],
            "stderr_bytes": 3_000,
            "traceback": "Traceback\n" * 200,
            "job_id": "job_" + "x" * 500,
            "exception": "TimeoutError",
        },
    )
    return envelope.replace(killed_by="idle_timeout", artifacts=[wb.ArtifactRef(path=STDOUT)])


def test_a_failure_keeps_its_error_fields_and_only_its_details_shrink():
    before = stopped()
    shrunk = step(before, 2)
    details = shrunk.error.details
    assert len(details["stdout_preview"]) < 500 and len(details["stderr_preview"]) < 500
    assert details["stderr_truncated"] is True
    dropped = step(shrunk, 3)
    details = dropped.error.details
    assert details["stdout_preview"] == ARTIFACT_ONLY
    assert details["stderr_preview"] == shrunk.error.details["stderr_preview"]
    assert "traceback" not in details and details["dropped_details"] == ["traceback"]
    assert details["job_id"] == before.error.details["job_id"]  # a handle, however long
    assert details["exception"] == "TimeoutError" and details["stdout_artifact"] == 0
    for after in (shrunk, dropped):
        assert after.error.model_dump(exclude={"details"}) == before.error.model_dump(
            exclude={"details"}
        )
        assert after.killed_by == "idle_timeout" and after.artifacts == before.artifacts
    assert receipt(dropped).startswith(
        "Error (timeout): `shell_exec` printed nothing for 2 s and was stopped\n"
        "hint: raise `timeout`\nkilled_by: idle_timeout\nretry may help\n"
    )
    assert step(dropped, 4) is None and step(before, 1) is None


def test_step_3_alone_trims_a_failure_as_far_as_step_2_would_have():
    dropped = step(stopped(), 3)
    assert len(dropped.error.details["stderr_preview"]) < 500
    assert dropped.error.details["stdout_preview"] == ARTIFACT_ONLY


def test_a_failure_without_details_has_nothing_to_compact():
    denied = wb.failure("user_denied", "the person denied it", tool="rm")
    assert [step(denied, number) for number in STEPS] == [None] * 4


# ── shared promises ──────────────────────────────────────────────────────────────────────────
ALL = [listing, foreground, promoted, file_envelope, cut_text, stopped]


@pytest.mark.parametrize("make", ALL, ids=lambda make: make.__name__)
@pytest.mark.parametrize("number", STEPS)
def test_every_step_is_idempotent_and_never_makes_a_receipt_longer(make, number):
    once = step(make(), number)
    if once is None:
        return
    assert len(receipt(once)) <= len(receipt(make()))
    family = COMPACTED if is_compacted_result(once.result) else family_of(once)
    assert family.compact(once, number, DEFAULT_BUDGETS) is None


def test_a_collapsed_record_is_never_compacted_again():
    line = step(foreground(), 4)
    assert [COMPACTED.compact(line, number, DEFAULT_BUDGETS) for number in STEPS] == [None] * 4


def test_the_line_does_not_repeat_a_handle_the_summary_already_names():
    envelope = promoted()
    kept = {"pid": 4242, "log_file": LOG, "log_artifact": 0}
    assert summary_line(envelope, kept).count("4242") == 1
    assert summary_line(envelope.replace(summary_text="started 42424"), {"pid": 4242}) == (
        "shell_exec: started 42424 (pid: 4242)"
    )


def test_references_are_top_level_handles_and_artifact_indices():
    result = {
        "pid": 1,
        "log_file": "/l",
        "session_id": "s",
        "task_handle": {"task_id": "t"},
        "stdout_artifact": 0,
        "bogus_artifact": True,
        "path": "x",
        "exit_code": 0,
    }
    assert list(references(result)) == [
        "pid",
        "log_file",
        "session_id",
        "task_handle",
        "stdout_artifact",
    ]
    assert references(["pid"]) == {}
