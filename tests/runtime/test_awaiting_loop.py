"""``await call`` of an ``async def`` tool from a loop of the person's own runs the call as a
task on that loop: no thread is woken to run it or to hand its envelope back. Every promise
still holds there: the row is committed before the await returns, Terminate and the time
budget stop the body, a stubborn body is left behind after the grace, and cancelling the
awaiting task stops the call."""

from __future__ import annotations

import asyncio
import threading
import time

import workbench as wb
from tests.runtime.support import (
    STUBBORN_LINGER_S,
    declare_budgeted,
    declare_stubborn,
    terminate_soon,
)
from workbench.runtime._watchdog import BEAT_S


def _where(tools: wb.Registry) -> None:
    @tools.tool
    async def where(pause: float = 0.01) -> dict:
        """Name the thread and the loop, after awaiting something real."""
        await asyncio.sleep(pause)
        return {"thread": threading.get_ident(), "loop": id(asyncio.get_running_loop())}


def test_an_awaited_async_call_runs_on_the_awaiting_loop_and_is_committed_first(tmp_path):
    tools = wb.Registry(history=tmp_path / "history.sqlite")
    _where(tools)

    async def main() -> tuple[list[tuple[wb.Call, wb.Envelope, bool]], int, int]:
        seen = []
        for _ in range(3):
            call = tools.invoke("where")
            envelope = await call
            seen.append((call, envelope, tools.history.get(call.id) is not None))
        return seen, threading.get_ident(), id(asyncio.get_running_loop())

    seen, thread, loop = asyncio.run(main())
    for call, envelope, committed in seen:
        assert envelope.result == {"thread": thread, "loop": loop}
        assert call.sheet.phase.driver == "inline" and committed
        assert [event.type for event in call.events] == [
            "tool.queued",
            "tool.started",
            "tool.completed",
        ]
    tools.history.close()


def test_awaiting_async_calls_wakes_no_other_thread_per_call(tmp_path):
    """Counted by the kernel for every thread: the runtime loop's thread is not woken by the
    calls at all (it used to be, twice a call: run the body, hand the envelope back)."""
    tools = wb.Registry(history=tmp_path / "history.sqlite")

    @tools.tool
    async def add(a: int, b: int) -> int:
        """a + b."""
        return a + b

    async def many(count: int) -> None:
        for _ in range(count):
            await tools.invoke("add", {"a": 1, "b": "2"})

    asyncio.run(many(50))  # the runtime loop and the history writer are started by now
    runtime = next(t for t in threading.enumerate() if t.name == "workbench-runtime")
    before, started = _switches_of(runtime.native_id), time.monotonic()
    asyncio.run(many(2_000))
    woken = _switches_of(runtime.native_id) - before
    # Its heartbeat wakes it every BEAT_S whatever the calls do (and on a busy machine each
    # wake may wait for the GIL once more); the 2,000 calls woke it 4,000 times before.
    heartbeat = (time.monotonic() - started) / BEAT_S
    assert woken < 3 * heartbeat + 2_000 / 10, (woken, heartbeat)
    tools.history.close()


def _switches_of(native_id: int | None) -> int:
    with open(f"/proc/self/task/{native_id}/status", encoding="ascii") as status:
        for line in status:
            if line.startswith("voluntary_ctxt_switches"):
                return int(line.split()[1])
    raise AssertionError("no switch count")


def test_terminate_and_the_time_budget_stop_an_awaited_async_body(tools):
    @tools.tool
    async def sleeper(seconds: float) -> str:
        """Sleep."""
        await asyncio.sleep(seconds)
        return "woke"

    declare_budgeted(tools)

    press_terminate = terminate_soon(0.2)  # from another thread, as a button

    async def main() -> tuple[wb.Call, wb.Call, float]:
        terminated = press_terminate(tools.invoke("sleeper", {"seconds": 60}))
        started = time.monotonic()
        await terminated
        took = time.monotonic() - started
        timed_out = tools.invoke("budgeted")
        await timed_out
        return terminated, timed_out, took

    terminated, timed_out, took = asyncio.run(main())
    assert took < 30  # not the body's 60 s
    assert terminated.sheet.phase.driver == "inline" and terminated.state == "terminated"
    assert terminated.envelope.killed_by == "user"
    assert timed_out.sheet.phase.driver == "inline"
    assert timed_out.envelope.error.kind is wb.ErrorKind.TIMEOUT


def test_a_stubborn_awaited_body_is_left_behind_after_the_grace(tools):
    declare_stubborn(tools)

    async def main() -> tuple[wb.Call, float]:
        call = tools.invoke("stubborn")
        started = time.monotonic()
        await call
        took = time.monotonic() - started
        await asyncio.sleep(2)  # the body returns meanwhile; its result is discarded
        return call, took

    call, took = asyncio.run(main())
    assert took < STUBBORN_LINGER_S  # ended after budget and grace, not when the body returned
    assert call.envelope.error.kind is wb.ErrorKind.TIMEOUT
    assert "the tool's async body ignored cancellation" in " ".join(call.sheet.outcome.notes)
    row = tools.history.get(call.id)
    assert row is not None and "late result discarded after the call ended" in row["warnings"]


def test_cancelling_the_awaiting_task_stops_the_call(tools):
    @tools.tool
    async def sleeper(seconds: float) -> str:
        """Sleep."""
        await asyncio.sleep(seconds)
        return "woke"

    async def main() -> wb.Call:
        call = tools.invoke("sleeper", {"seconds": 60})
        try:
            await asyncio.wait_for(call, 0.2)
        except TimeoutError:
            pass  # what wait_for raises: the awaiting task was cancelled
        return call

    call = asyncio.run(main())
    assert call.wait(10).killed_by == "user"
    assert call.state == "terminated" and call.sheet.phase.driver == "inline"


def test_a_call_that_needs_a_person_or_a_hook_still_runs_on_the_runtime_loop(tools):
    _where(tools)

    @tools.tool(permission="always_ask")
    async def asking() -> str:
        """Ask first."""
        return threading.current_thread().name

    async def main() -> tuple[wb.Call, wb.Envelope]:
        call = tools.invoke("asking")
        threading.Timer(0.2, call.approve).start()
        return call, await call

    call, envelope = asyncio.run(main())
    assert envelope.result == "workbench-runtime" and call.sheet.phase.driver == "loop"


def test_an_awaited_body_is_the_current_call_and_its_failure_is_its_envelope(tools):
    """Inside the body run on the awaiting loop, a call made without ``parent=`` is the body's
    child; what the body raises ends the call as failed; once it ended, nothing is current."""

    @tools.tool
    async def leaf() -> str:
        """Return."""
        return "leaf"

    @tools.tool
    async def nesting() -> str:
        """Await a call made without naming its parent."""
        return (await tools.invoke("leaf")).result

    @tools.tool
    async def broken() -> str:
        """Raise."""
        raise LookupError("no such note")

    async def main() -> tuple[wb.Call, wb.Call, wb.Call]:
        outer = tools.invoke("nesting")
        await outer
        failing = tools.invoke("broken")
        await failing
        later = tools.invoke("leaf")
        await later
        return outer, failing, later

    outer, failing, later = asyncio.run(main())
    assert outer.sheet.phase.driver == "inline" and outer.envelope.result == "leaf"
    (child,) = [row for row in tools.history.rows() if row["parent_call_id"] == outer.id]
    assert child["tool"] == "leaf"
    assert failing.sheet.phase.driver == "inline" and failing.state == "failed"
    assert "no such note" in failing.envelope.error.message
    assert later.parent is None and later.envelope.result == "leaf"
