"""wb.compact: the steps in order across a history, budgets, preserved fields, sources, and the
promises (deterministic, idempotent, never re-expanding) on real and generated histories."""

from __future__ import annotations

import asyncio
import shutil
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import workbench as wb
import workbench.builtins
from tests.conftest import wait_until
from tests.envelope.support import envelopes as any_envelopes
from workbench.envelope._truncate import preview
from workbench.families._base import references
from workbench.families._compaction import Compaction, compact

LINES = "".join(f"line {number} of the output\n" for number in range(1, 401))


def words(text: str) -> int:
    return len(text.split())


# ── synthetic records ────────────────────────────────────────────────────────────────────────
def listing(path: str = "src", count: int = 40) -> wb.Envelope:
    return wb.listing(path, [{"name": f"module_{n}.py"} for n in range(count)], tool="file_read")


def command(call_id: str = "call_cmd") -> wb.Envelope:
    cut = preview(LINES, 8_000)
    return wb.Envelope(
        tool_name="shell_exec",
        status="success",
        summary_text="command exited with status 0",
        result={
            "kind": "command",
            "background": False,
            "exit_code": 0,
            "cwd": ".",
            "duration_ms": 3,
            "stdout_preview": cut.text,
            "stdout_bytes": len(LINES),
            "stderr_preview": None,
            "stderr_bytes": 0,
            "truncated": True,
            "stdout_truncated": True,
            "stderr_truncated": False,
            "stdout_artifact": 0,
        },
        artifacts=[wb.ArtifactRef(path="/artifacts/stdout.log")],
        call_id=call_id,
    )


def small(text: str) -> wb.Envelope:
    return wb.success("echo", text=text)


def rules(result: Compaction) -> list[str]:
    return [step.rule for step in result.steps]


def same(first: Compaction, second: Compaction) -> None:
    assert first.receipts == second.receipts
    assert [e.canonical() for e in first.envelopes] == [e.canonical() for e in second.envelopes]
    assert first.steps == second.steps
    assert (first.before_chars, first.after_chars) == (second.before_chars, second.after_chars)


# ── the steps, in order, only as far as needed ───────────────────────────────────────────────
def test_a_history_within_budget_is_left_as_it_is():
    history = [listing(), command(), small("a"), small("b")]
    result = compact(history, 1_000_000)
    assert result.steps == () and not result.over_budget
    assert result.receipts == result.before_receipts
    assert result.envelopes == tuple(history)
    assert result.after_chars == result.before_chars == sum(map(len, result.receipts))


def test_each_step_is_reached_only_when_the_ones_before_are_not_enough():
    history = [listing(), command(), small("recent one"), small("recent two")]
    before = compact(history, 10**9).before_chars

    first = compact(history, before - 1)
    assert rules(first) == ["collapse_listings"]
    assert first.receipts[0] == "40 entries in src"
    assert first.receipts[1] == first.before_receipts[1]

    second = compact(history, first.after_chars - 1)
    assert rules(second) == ["collapse_listings", "shrink_previews"]
    assert "[output truncated: showing first" in second.receipts[1]
    assert len(second.receipts[1]) < 600

    third = compact(history, second.after_chars - 1)
    assert rules(third) == ["collapse_listings", "shrink_previews", "drop_to_artifacts"]
    assert "first 0 and last 0 lines" in third.receipts[1]
    assert "full stdout (" in third.receipts[1]

    fourth = compact(history, third.after_chars - 1)
    assert rules(fourth) == [
        "collapse_listings",
        "shrink_previews",
        "drop_to_artifacts",
        "collapse_to_line",
    ]
    assert fourth.receipts[:2] == (
        "40 entries in src",
        "shell_exec: command exited with status 0 (stdout: /artifacts/stdout.log)",
    )
    assert not fourth.over_budget
    assert [step.step for step in fourth.steps] == [1, 2, 3, 4]
    assert all(step.history_chars > fourth.budget for step in fourth.steps)


def test_a_step_goes_oldest_first_and_stops_once_the_budget_is_met():
    history = [listing("old"), listing("newer"), small("x"), small("y")]
    saving = len(compact(history, 10**9).receipts[0]) - len("40 entries in old")
    result = compact(history, compact(history, 10**9).before_chars - saving)
    assert rules(result) == ["collapse_listings"]
    assert result.receipts[0] == "40 entries in old"
    assert result.receipts[1] == result.before_receipts[1]


def test_step_1_runs_across_the_whole_history_before_step_2_touches_anything():
    history = [command(), listing(), small("x"), small("y")]
    result = compact(history, compact(history, 10**9).before_chars - 100)
    assert rules(result) == ["collapse_listings"]
    assert result.receipts[0] == result.before_receipts[0]  # older, but its step comes later


def test_the_newest_keep_recent_items_are_never_touched():
    history = [listing("a"), listing("b"), listing("c")]
    result = compact(history, 0, keep_recent=2)
    assert result.receipts[1:] == result.before_receipts[1:]
    assert result.envelopes[1:] == tuple(history[1:])
    assert result.over_budget
    assert [result.recent(i) for i in range(3)] == [False, True, True]
    everything = compact(history, 0, keep_recent=0)
    assert everything.receipts == ("40 entries in a", "40 entries in b", "40 entries in c")
    assert compact(history, 0, keep_recent=10).steps == ()


def test_count_can_be_a_word_counter():
    history = [listing(), command(), small("one two three"), small("four")]
    result = compact(history, 100, count=words)
    assert result.before_chars == sum(words(text) for text in result.before_receipts)
    assert result.after_chars == sum(words(text) for text in result.receipts) <= 100
    assert list(result.item_after_chars) == [words(text) for text in result.receipts]
    by_chars = compact(history, 100)
    assert result.receipts != by_chars.receipts  # 100 words is not 100 characters


def test_a_step_that_would_lengthen_a_receipt_is_not_taken():
    # Collapsing to "tool: summary" is longer than the bare result: the json result stays.
    history = [wb.success("calc", 42), small("x"), small("y")]
    result = compact(history, 0)
    assert result.receipts[0] == "42" and result.steps == ()


def test_budget_and_keep_recent_are_checked_and_unended_calls_refused(tools):
    with pytest.raises(ValueError, match="budget_chars"):
        compact([], -1)
    with pytest.raises(ValueError, match="keep_recent"):
        compact([], 10, keep_recent=-1)
    with pytest.raises(TypeError, match="not one item"):
        compact(small("x"), 10)  # type: ignore[arg-type]

    @tools.tool
    async def slow() -> str:
        """Sleep."""
        await asyncio.sleep(5)
        return "done"

    call = tools.invoke("slow")
    with pytest.raises(ValueError, match="has not ended"):
        compact([call], 10)
    call.terminate()
    call.wait(5)


def test_an_empty_history_compacts_to_nothing():
    result = compact([], 0)
    assert result.receipts == () and result.before_chars == result.after_chars == 0
    assert not result.over_budget and len(result.to_dataframe()) == 0


# ── the report ───────────────────────────────────────────────────────────────────────────────
def test_the_dataframe_has_one_row_per_item_with_both_receipts():
    history = [listing(), command(), small("x"), small("y")]
    result = compact(history, 0)
    frame = result.to_dataframe()
    assert list(frame.columns) == [
        "index",
        "call_id",
        "tool",
        "family",
        "family_after",
        "status",
        "recent",
        "before_chars",
        "after_chars",
        "steps",
        "rules",
        "receipt_before",
        "receipt_after",
    ]
    assert len(frame) == 4
    row = frame.iloc[1]
    assert (row["tool"], row["family"], row["family_after"]) == (
        "shell_exec",
        "command",
        "compacted",
    )
    assert row["steps"] == [2, 3, 4] and row["call_id"] == "call_cmd"
    assert row["receipt_after"] == result.receipts[1]
    assert row["receipt_before"] == result.before_receipts[1]
    assert frame["after_chars"].sum() == result.after_chars
    assert frame["recent"].tolist() == [False, False, True, True]


def test_the_notebook_summary_is_escaped_html():
    history = [wb.success("<script>alert(1)</script>", text=LINES), small("x"), small("y")]
    result = compact(history, 0)
    bundle = result._repr_mimebundle_()
    assert "<script>" not in bundle["text/html"]
    assert "wb-compaction-summary" in bundle["text/html"]
    assert "over budget" in bundle["text/html"] and "collapse_to_line" in bundle["text/html"]
    assert bundle["text/plain"].startswith("<Compaction: compaction of 3 calls:")


# ── a real history: terminated, denied, timed out, promoted, cut ─────────────────────────────
@pytest.fixture
def root(tmp_path: Path) -> Path:
    path = tmp_path / "root"
    path.mkdir()
    for number in range(30):
        (path / f"file_{number}.txt").write_text(f"content {number}\n")
    (path / "big.py").write_text(LINES)
    return path


@pytest.fixture
def real(tools: wb.Registry, root: Path):
    """Calls of every kind, made for real, oldest first, each ended before the next starts."""
    built = wb.builtins.register(tools, root=root, background_window=0.3)

    @tools.tool
    async def forever(ctx: wb.ToolContext) -> None:
        """Print, then sleep until stopped."""
        ctx.emit(LINES * 30)
        await asyncio.sleep(60)

    @tools.tool(permission="always_ask")
    def remove(path: str) -> str:
        """Remove a file (asks first)."""
        return f"removed {path}"

    @tools.tool(timeout=0.1)
    async def slow() -> str:
        """Take too long."""
        await asyncio.sleep(5)
        return "late"

    @tools.tool
    def lookup(user: str) -> dict[str, object]:
        """Look a user up."""
        return {"user_id": f"u_{user}", "groups": [f"group {n}" for n in range(40)]}

    @tools.tool(family="text")
    def report() -> str:
        """A long report."""
        return LINES * 60

    calls: list[wb.Call] = []

    def run(name: str, args: dict[str, object] | None = None) -> wb.Call:
        call = tools.invoke(name, args or {})
        call.wait(30)
        calls.append(call)
        return call

    run("file_read", {"path": "."})
    run("file_read", {"path": "big.py"})
    run("shell_exec", {"command": "seq 1 20000"})
    promoted = run("shell_exec", {"command": "echo ready; sleep 30", "background": True})
    assert promoted.envelope.result["background"] is True

    stopped = tools.invoke("forever")
    assert wait_until(lambda: len(stopped.output()) > 1000)
    stopped.terminate()
    stopped.wait(10)
    calls.append(stopped)

    denied = tools.invoke("remove", {"path": "x"})
    assert wait_until(lambda: denied.state == "awaiting_approval")
    denied.deny("not now")
    denied.wait(5)
    calls.append(denied)

    run("slow")
    run("shell_exec", {"command": "seq 1 5000; sleep 30", "timeout": 0.5})
    run("lookup", {"user": "ada"})
    run("report")
    run("file_read", {"path": "missing.txt"})
    run("lookup", {"user": "grace"})
    run("file_read", {"path": "file_1.txt"})

    kinds = [call.envelope.error.kind for call in calls if call.envelope.error is not None]
    assert kinds == ["terminated", "user_denied", "timeout", "timeout", "not_found"]
    yield tools, calls, built
    built.jobs.close()


def preserved(envelope: wb.Envelope) -> dict[str, object]:
    """Every field compaction promises to keep, whatever the budget."""
    error = envelope.error
    fields: dict[str, object] = {
        "tool_name": envelope.tool_name,
        "status": envelope.status,
        "summary_text": envelope.summary_text,
        "call_id": envelope.call_id,
        "killed_by": envelope.killed_by,
        "artifacts": envelope.artifacts,
    }
    if error is not None:
        fields["error"] = (error.kind, error.message, error.recovery_hint, error.retryable)
    return fields


def keeps_everything_promised(before: wb.Envelope, after: wb.Envelope) -> bool:
    if preserved(before) != preserved(after):
        return False
    if before.error is not None:
        kept = references(before.error.details or {})
        return kept.items() <= (after.error.details or {}).items()
    return references(before.result).items() <= references(after.result).items()


def test_a_real_history_keeps_every_promised_field_under_a_budget_of_0(real):
    tools, calls, _ = real
    result = compact(tools.history, 0)
    assert result.over_budget
    assert all(map(keeps_everything_promised, result.before_envelopes, result.envelopes))
    older = result.receipts[:-2]
    assert older[0] == "31 entries in ."
    assert older[1] == "file_read: read big.py (400 lines)"
    assert older[2].startswith("shell_exec: command exited with status 0 (stdout: ")
    pid = calls[3].envelope.result["pid"]
    log_file = calls[3].envelope.result["log_file"]
    assert older[3] == (
        f"shell_exec: command promoted to background task {pid} (log_file: {log_file})"
    )
    assert result.envelopes[3].result["pid"] == pid
    assert result.envelopes[3].result["log_file"] == log_file
    assert older[4].startswith("Error (terminated): ")
    assert "[output truncated: showing first 0 and last 0 lines]" in older[4]
    assert older[5].startswith("Error (user_denied): ")
    assert older[6].startswith("Error (timeout): ")
    assert older[8] == "lookup: lookup returned an object with 2 keys (user_id: u_ada)"
    assert older[9].startswith("report: line 1 of the output (text: ")
    assert result.receipts[-2:] == result.before_receipts[-2:]
    assert result.after_chars < result.before_chars / 20


def test_history_calls_and_envelopes_compact_alike(real):
    tools, calls, _ = real
    envelopes = [call.envelope for call in calls]
    for budget in (0, 5_000, 20_000, 10**9):
        from_history = compact(tools.history, budget)
        same(from_history, compact(calls, budget))
        same(from_history, compact(envelopes, budget))


def test_compaction_is_deterministic_and_idempotent_on_a_real_history(real):
    tools, _, _ = real
    total = compact(tools.history, 10**9).before_chars
    for budget in (0, 1_000, 4_000, total // 4, total // 2, total - 1):
        first = compact(tools.history, budget)
        same(first, compact(tools.history, budget))
        again = compact(list(first.envelopes), budget)
        assert again.steps == ()
        assert again.receipts == first.receipts
        assert again.before_chars == again.after_chars == first.after_chars


def test_compaction_never_reaches_back_into_artifacts(real, tmp_path):
    tools, _, built = real
    budgets = (0, 3_000, 10_000)
    before = [compact(tools.history, budget) for budget in budgets]
    built.jobs.close()
    shutil.rmtree(tmp_path / "artifacts")
    for budget, earlier in zip(budgets, before, strict=True):
        same(earlier, compact(tools.history, budget))


# ── properties over generated histories ──────────────────────────────────────────────────────
line_text = st.lists(
    st.text(alphabet="abc xyz0123456789", max_size=30), min_size=0, max_size=80
).map(lambda lines: "".join(f"{line}\n" for line in lines))


@st.composite
def commands(draw: st.DrawFn) -> wb.Envelope:
    text = draw(line_text)
    cut = preview(text, draw(st.integers(0, 600)))
    backed = cut.truncated and draw(st.booleans())
    result: dict[str, object] = {
        "kind": "command",
        "background": False,
        "exit_code": draw(st.integers(0, 3)),
        "cwd": ".",
        "duration_ms": 1,
        "stdout_preview": cut.text or None,
        "stdout_bytes": len(text),
        "stderr_preview": draw(st.none() | line_text),
        "stderr_bytes": 0,
        "truncated": cut.truncated,
        "stdout_truncated": cut.truncated,
        "stderr_truncated": False,
    }
    if backed:
        result["stdout_artifact"] = 0
    return wb.Envelope(
        tool_name="shell_exec",
        status="success",
        result=result,
        artifacts=[wb.ArtifactRef(path="/a/out.log")] if backed else [],
        warnings=draw(st.lists(st.text(max_size=20), max_size=2)),
    )


@st.composite
def backgrounds(draw: st.DrawFn) -> wb.Envelope:
    pid = draw(st.integers(1, 99_999))
    result = {
        "kind": "command",
        "background": True,
        "pid": pid,
        "cwd": ".",
        "log_file": f"/a/{pid}.log",
        "log_artifact": 0,
        "running": True,
        "exit_code": None,
        "duration_ms": 1,
        "initial_output_preview": draw(st.none() | line_text),
        "initial_output_truncated": False,
    }
    return wb.Envelope(
        tool_name="shell_exec",
        status="success",
        summary_text=f"command promoted to background task {pid}",
        result=result,
        artifacts=[wb.ArtifactRef(path=f"/a/{pid}.log")],
    )


@st.composite
def stopped_calls(draw: st.DrawFn) -> wb.Envelope:
    text = draw(line_text)
    cut = preview(text, draw(st.integers(0, 600)))
    details: dict[str, object] = {"stdout_preview": cut.text, "stdout_bytes": len(text)}
    if cut.truncated:
        details |= {"stdout_truncated": True, "stdout_artifact": 0}
    details |= draw(st.dictionaries(st.sampled_from(["trace", "task_id", "exception"]), line_text))
    envelope = wb.failure(
        draw(st.sampled_from(["timeout", "terminated"])),
        "stopped",
        tool="shell_exec",
        details=details,
        recovery_hint=draw(st.none() | st.just("retry later")),
    )
    return envelope.replace(
        killed_by="user", artifacts=[wb.ArtifactRef(path="/a/stdout.log")] if cut.truncated else []
    )


listings = st.builds(
    lambda path, count: listing(path, count),
    st.sampled_from(["src", ".", "a/b"]),
    st.integers(0, 30),
)
files = st.builds(lambda text: wb.file_result("f.py", text, tool="file_read"), line_text)
texts = st.builds(lambda text: wb.success("search", text=text), line_text)
records = st.one_of(
    listings, commands(), backgrounds(), stopped_calls(), files, texts, any_envelopes
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    history=st.lists(records, max_size=8),
    fraction=st.floats(0, 1.1),
    keep_recent=st.integers(0, 3),
    by_words=st.booleans(),
)
def test_any_history_shrinks_keeps_its_promises_and_is_idempotent(
    history, fraction, keep_recent, by_words
):
    count = words if by_words else len
    before = compact(history, 10**12, count=count).before_chars
    budget = int(before * fraction)
    result = compact(history, budget, keep_recent=keep_recent, count=count)

    assert result.after_chars <= result.before_chars
    assert all(
        a <= b for a, b in zip(result.item_after_chars, result.item_before_chars, strict=True)
    )
    assert result.over_budget == (result.after_chars > budget)
    assert all(map(keeps_everything_promised, result.before_envelopes, result.envelopes))
    assert all(step.history_chars > budget for step in result.steps)
    for index in range(len(history)):
        if result.recent(index):
            assert result.envelopes[index] is history[index]
    same(result, compact(history, budget, keep_recent=keep_recent, count=count))
    again = compact(list(result.envelopes), budget, keep_recent=keep_recent, count=count)
    assert again.steps == () and again.receipts == result.receipts
