"""Plain ``def`` calls started in bulk run in lanes (``workbench/_lanes.py``): on worker
threads, never through the runtime loop, their rows committed together, and still no more at
once than ``max_concurrency``, each committed before anyone learns it ended, each stoppable."""

from __future__ import annotations

import asyncio
import sqlite3
import threading
import time
from pathlib import Path

import workbench as wb
from tests.conftest import wait_until

WAL_HEADER = 32
FRAME_HEADER = 24


def _wal_frames(path: Path) -> int:
    """Frames written to the history's WAL so far (no checkpoint has restarted it yet)."""
    wal = path.with_name(path.name + "-wal")
    with sqlite3.connect(path) as conn:
        page = conn.execute("PRAGMA page_size").fetchone()[0]
    return (wal.stat().st_size - WAL_HEADER) // (FRAME_HEADER + page)


def test_many_short_calls_run_in_a_lane_with_their_rows_committed_together(tmp_path):
    path = tmp_path / "history.sqlite"
    tools = wb.Registry(history=path)

    @tools.tool
    def where(n: int) -> str:
        """Name the thread."""
        return threading.current_thread().name

    tools.invoke("where", {"n": 0}).wait()
    # What one row a transaction writes: the frames of every page it changes, each time.
    alone = 40
    before = _wal_frames(path)
    for _ in range(alone):
        tools.invoke("where", {"n": 0}).wait()
    per_row_alone = (_wal_frames(path) - before) / alone
    before = _wal_frames(path)
    count = 200  # with those above, fewer than a checkpoint's worth of rows: the WAL only grows
    calls = tools.invoke_many([("where", {"n": n}) for n in range(count)])
    for call in calls:
        envelope = call.wait(10)
        # Committed before it was seen to end: a History of its own reads it now.
        reader = wb.History(path)
        found = reader.get(call.id)
        reader.close()
        assert found is not None and found["state"] == "succeeded"
        assert call.sheet.phase.driver == "inline" and envelope.result.startswith(
            "workbench-worker"
        )
    # Committed together, rows share each page they change: fewer frames a row than alone.
    tools.history.flush()
    written = _wal_frames(path) - before
    assert written / count < per_row_alone, (written, per_row_alone)
    assert {row["call_id"] for row in tools.history.rows()} >= {call.id for call in calls}
    tools.history.close()


def test_slow_calls_in_lanes_still_run_max_concurrency_at_once(tmp_path):
    tools = wb.Registry(history=tmp_path / "history.sqlite", max_concurrency=3)
    running = 0
    peak = 0
    lock = threading.Lock()

    @tools.tool
    def slow(n: int) -> int:
        """Take a while."""
        nonlocal running, peak
        with lock:
            running += 1
            peak = max(peak, running)
        time.sleep(0.3)
        with lock:
            running -= 1
        return n

    calls = tools.invoke_many([("slow", {"n": n}) for n in range(9)])
    assert [call.wait(20).result for call in calls] == list(range(9))
    assert peak == 3  # lanes open while bodies hold them, up to the limit and never past it
    assert all(call.sheet.phase.driver == "inline" for call in calls)
    tools.history.close()


def test_a_call_ended_in_a_lane_is_seen_while_the_next_body_still_runs(tmp_path):
    tools = wb.Registry(history=tmp_path / "history.sqlite", max_concurrency=1)
    release = threading.Event()

    @tools.tool
    def quick() -> int:
        """Return."""
        return 1

    @tools.tool
    def held() -> str:
        """Wait to be released."""
        release.wait(10)
        return "released"

    first, second = tools.invoke_many([("quick", {}), ("held", {})])
    try:
        # The lane holds the first row while it runs the second body; the ticker commits it.
        assert first.wait(5).result == 1
        assert wait_until(lambda: second.state == "running") and not second.done
    finally:
        release.set()
    assert second.wait(5).result == "released"
    tools.history.close()


def test_terminate_and_the_time_budget_stop_calls_in_lanes(tmp_path):
    tools = wb.Registry(history=tmp_path / "history.sqlite", max_concurrency=1)

    @tools.tool
    def polite(ctx: wb.ToolContext) -> str:
        """Loop until cancelled."""
        while not ctx.cancelled:
            time.sleep(0.01)
        return "stopped myself"

    @tools.tool(timeout=0.2)
    def budgeted(ctx: wb.ToolContext) -> str:
        """Loop until cancelled."""
        while not ctx.cancelled:
            time.sleep(0.01)
        return "stopped myself"

    stopped, timed, waiting = tools.invoke_many([("polite", {}), ("budgeted", {}), ("polite", {})])
    assert wait_until(lambda: stopped.state == "running")
    # Still waiting for the one lane: it ends now, without its body, while the lane is busy.
    waiting.terminate()
    assert waiting.wait(5).killed_by == "user" and waiting.state == "terminated"
    assert "tool.started" not in [event.type for event in waiting.events]
    assert not stopped.done and not timed.done
    stopped.terminate()
    assert stopped.wait(5).killed_by == "user" and stopped.state == "terminated"
    assert timed.wait(5).error.kind is wb.ErrorKind.TIMEOUT
    assert stopped.sheet.phase.driver == timed.sheet.phase.driver == "inline"
    tools.history.close()


def test_calls_made_inside_a_call_in_a_lane_never_wait_for_a_lane(tmp_path):
    tools = wb.Registry(history=tmp_path / "history.sqlite", max_concurrency=1)

    @tools.tool
    def leaf(n: int) -> int:
        """Return."""
        return n

    @tools.tool
    def fan_out(n: int) -> int:
        """Call leaf n times at once and add up."""
        children = tools.invoke_many([("leaf", {"n": 1})] * n)
        assert all(child.parent is not None for child in children)
        return sum(child.wait(10).result for child in children)

    # The one lane (one slot) runs fan_out; its children run in fan_out's slot, not a lane.
    outer = tools.invoke_many([("fan_out", {"n": 3}), ("fan_out", {"n": 2})])
    assert [call.wait(20).result for call in outer] == [3, 2]
    assert {call.sheet.phase.driver for call in outer} == {"inline"}
    tools.history.close()


def test_a_burst_with_a_call_that_needs_the_loop_runs_whole_on_the_loop(tools):
    @tools.tool
    def plain() -> str:
        """Return."""
        return "plain"

    @tools.tool(permission="always_ask")
    def guarded() -> str:
        """Ask first."""
        return "guarded"

    calls = tools.invoke_many([("plain", {}), ("guarded", {}), ("plain", {})])
    assert wait_until(lambda: calls[1].pending_action == "approval")
    calls[1].approve()
    assert [call.wait(5).result for call in calls] == ["plain", "guarded", "plain"]
    assert {call.sheet.phase.driver for call in calls} == {"loop"}


def test_a_burst_started_while_the_loop_runs_calls_joins_them_there(tools):
    release = threading.Event()

    @tools.tool
    async def held() -> str:
        """Wait to be released, awaiting."""
        while not release.is_set():
            await asyncio.sleep(0.01)
        return "held"

    @tools.tool
    def plain() -> str:
        """Return."""
        return "plain"

    first = tools.invoke("held")
    try:
        assert wait_until(lambda: first.state == "running")
        burst = tools.invoke_many([("plain", {})] * 3)
        assert [call.wait(5).result for call in burst] == ["plain"] * 3
        assert {call.sheet.phase.driver for call in burst} == {
            "loop"
        }  # not past the call before them
    finally:
        release.set()
    assert first.wait(5).result == "held"

    def drivers_of_a_burst() -> set[str | None]:
        later = tools.invoke_many([("plain", {})] * 2)
        assert [call.wait(5).result for call in later] == ["plain"] * 2
        return {call.sheet.phase.driver for call in later}

    # Once the loop has let go of the held call (its task ends just after the call does),
    # bursts run in lanes again.
    assert wait_until(lambda: drivers_of_a_burst() == {"inline"})
