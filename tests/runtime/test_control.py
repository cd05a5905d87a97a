"""Stopping is owned by one StopControl per call: no tool can hold the runtime hostage, and
tools that call tools never deadlock."""

from __future__ import annotations

import asyncio
import threading

import workbench as wb
from tests.conftest import wait_until
from workbench.runtime._lifecycle import MAX_NESTING_DEPTH


def test_an_async_tool_swallowing_cancellation_is_left_behind_and_frees_its_slot(tmp_path):
    tools = wb.Registry(history=":memory:", max_concurrency=1, terminate_grace=0.3)

    @tools.tool
    async def stubborn() -> str:
        """Refuse to stop."""
        while True:
            try:
                await asyncio.sleep(60)
            except asyncio.CancelledError:
                continue  # the bug: carries on after being cancelled

    @tools.tool
    async def next_one() -> str:
        """Queued behind it."""
        return "ran"

    call = tools.invoke("stubborn")
    assert wait_until(lambda: call.state == "running")
    queued = tools.invoke("next_one")
    call.terminate()
    envelope = call.wait(10)
    assert call.state == "terminated" and envelope.killed_by == "user"
    assert any("ignored cancellation" in w for w in call.warnings)
    assert queued.wait(10).result == "ran"  # the slot was freed after the grace
    assert tools.limits.concurrency.held == 0


def test_the_wall_clock_budget_also_leaves_a_stubborn_body_behind(tmp_path):
    tools = wb.Registry(history=":memory:", max_concurrency=1, terminate_grace=0.3)

    @tools.tool(timeout=0.2)
    async def stubborn() -> str:
        """Refuse to stop."""
        while True:
            try:
                await asyncio.sleep(60)
            except asyncio.CancelledError:
                continue

    envelope = tools.invoke("stubborn").wait(10)
    assert envelope.error.kind is wb.ErrorKind.TIMEOUT and envelope.killed_by == "timeout"
    assert tools.invoke("stubborn", dry_run=True).wait(5).ok


def test_recursion_to_depth_ten_with_two_slots_completes(tmp_path):
    tools = wb.Registry(history=":memory:", max_concurrency=2)

    @tools.tool
    def descend(depth: int, ctx: wb.ToolContext) -> int:
        """Call myself until depth 0, from a worker thread."""
        if depth == 0:
            return 0
        return 1 + ctx.invoke("descend", {"depth": depth - 1}).wait(30).result

    @tools.tool
    async def adescend(depth: int) -> int:
        """Call myself until depth 0, from the runtime loop, through the registry."""
        if depth == 0:
            return 0
        return 1 + (await tools.invoke("adescend", {"depth": depth - 1})).result

    calls = [tools.invoke("descend", {"depth": 10}), tools.invoke("adescend", {"depth": 10})]
    assert [call.wait(60).result for call in calls] == [10, 10]
    rows = tools.history.rows()
    assert len(rows) == 22
    children = [row for row in rows if row["arguments"] == {"depth": 9}]
    assert {row["tool"] for row in children} == {"descend", "adescend"}


def test_a_nested_call_knows_its_parent(tools):
    @tools.tool
    def child() -> str:
        """Leaf."""
        return "leaf"

    @tools.tool
    def parent(ctx: wb.ToolContext) -> str:
        """Calls child."""
        return ctx.invoke("child").wait(10).result

    call = tools.invoke("parent")
    assert call.wait(10).result == "leaf"
    (child_row,) = [row for row in tools.history.rows() if row["tool"] == "child"]
    assert child_row["parent_call_id"] == call.id


def test_runaway_recursion_is_refused_at_the_documented_depth(tools):
    @tools.tool
    def forever(ctx: wb.ToolContext) -> str:
        """Never stops on its own."""
        envelope = ctx.invoke("forever").wait(60)
        return envelope.error.message if envelope.error else envelope.result

    envelope = tools.invoke("forever").wait(60)
    assert envelope.ok
    assert f"the limit is {MAX_NESTING_DEPTH}" in envelope.result
    refused = [row for row in tools.history.rows() if row["kind"] == "invalid_args"]
    assert len(refused) == 1


def test_terminate_from_another_thread_while_the_loop_is_held_takes_effect_after(tools):
    release = threading.Event()

    @tools.tool
    async def slow() -> str:
        """Sleep long."""
        await asyncio.sleep(60)
        return "late"

    @tools.tool
    async def hog() -> str:
        """Hold the loop."""
        release.wait(5)
        return "held"

    victim = tools.invoke("slow")
    assert wait_until(lambda: victim.state == "running")
    hogging = tools.invoke("hog")
    assert wait_until(lambda: hogging.state == "running")
    victim.terminate()  # returns at once even though the loop is held
    release.set()
    assert victim.wait(10).killed_by == "user"


def test_a_nested_calls_card_names_the_call_that_made_it(tools):
    from workbench.widgets._card_html import header_html

    made: list[wb.Call] = []

    @tools.tool
    def child() -> str:
        """Leaf."""
        return "leaf"

    @tools.tool
    def parent(ctx: wb.ToolContext) -> str:
        """Calls child."""
        made.append(ctx.invoke("child"))
        return made[-1].wait(10).result

    call = tools.invoke("parent")
    call.wait(10)
    (child_call,) = made
    assert child_call.parent is call and child_call.parent_id == call.id
    header = header_html(child_call)
    assert "called by parent" in header and call.short_id in header
