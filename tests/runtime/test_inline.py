"""A plain ``def`` tool waited for with ``call.wait()`` runs on the waiting thread, and every
promise of stopping still holds there: the time budget, Terminate, the grace after which a
stubborn body is left behind (its slot freed, its late result discarded), Ctrl-C."""

from __future__ import annotations

import signal
import threading
import time

import pytest

import workbench as wb
from tests.conftest import wait_until
from tests.runtime.support import declare_budgeted, declare_stubborn, terminate_soon


def test_wait_runs_a_plain_def_tool_on_the_waiting_thread_and_commits_first(tmp_path):
    path = tmp_path / "history.sqlite"
    tools = wb.Registry(history=path)

    @tools.tool
    def where() -> str:
        """Name the thread."""
        return threading.current_thread().name

    call = tools.invoke("where")
    envelope = call.wait()
    assert envelope.result == threading.current_thread().name
    assert call.sheet.phase.driver == "inline" and call.state == "succeeded"
    reader = wb.History(path)  # a History of its own, as another process would read
    found = reader.get(call.id)
    reader.close()
    assert found is not None and found["state"] == "succeeded"
    assert [event.type for event in call.events] == [
        "tool.queued",
        "tool.started",
        "tool.completed",
    ]
    tools.history.close()


def test_a_call_nobody_waits_for_still_starts_on_a_worker(tools):
    @tools.tool
    def where() -> str:
        """Name the thread."""
        return threading.current_thread().name

    call = tools.invoke("where")
    assert wait_until(lambda: call.done)
    # Run in a lane (workbench/_lanes.py): inline, on a worker thread, never on the loop.
    assert call.sheet.phase.driver == "inline" and call.envelope.result.startswith(
        "workbench-worker"
    )


def test_a_call_that_needs_a_person_is_never_run_inline(tools):
    @tools.tool(permission="always_ask")
    def guarded() -> str:
        """Ask first."""
        return threading.current_thread().name

    call = tools.invoke("guarded")
    threading.Timer(0.1, call.approve).start()
    assert call.wait().result.startswith("workbench-worker") and call.sheet.phase.driver == "loop"


def test_the_time_budget_stops_a_body_run_inline(tools):
    @tools.tool(timeout=0.2)
    def polite(ctx: wb.ToolContext) -> str:
        """Loop until cancelled."""
        while not ctx.cancelled:
            time.sleep(0.01)
        return "stopped myself"

    call = tools.invoke("polite")
    envelope = call.wait()
    assert call.sheet.phase.driver == "inline"
    assert envelope.error.kind is wb.ErrorKind.TIMEOUT and envelope.killed_by == "timeout"


def test_a_stubborn_inline_body_is_left_behind_after_the_grace_and_frees_its_slot(tmp_path):
    tools = wb.Registry(history=tmp_path / "h.sqlite", max_concurrency=1, terminate_grace=0.3)
    release = threading.Event()

    @tools.tool
    def stubborn() -> str:
        """Ignore cancellation."""
        release.wait(120)  # released by the test; the bound is for a broken run only
        return "late"

    @tools.tool
    def quick() -> int:
        """Return."""
        return 1

    made: list[wb.Call] = []

    def make_and_wait() -> None:
        # Made and waited for on one thread, as a notebook cell does, so the waiter is there
        # within the ticker's few milliseconds however slowly a new thread would start.
        made.append(tools.invoke("stubborn"))
        made[0].wait()

    waiter = threading.Thread(target=make_and_wait)
    waiter.start()
    assert wait_until(lambda: bool(made) and made[0].state == "running", 60)
    call = made[0]
    assert call.sheet.phase.driver == "inline"
    call.terminate()
    # The call ends without its body; the waiting thread is still inside the body.
    assert wait_until(lambda: call.done, 60)
    assert waiter.is_alive()
    assert call.envelope.killed_by == "user" and call.envelope.result is None
    assert any("ignored cancellation" in note for note in call.notes)
    assert tools.invoke("quick").wait(60).result == 1  # the slot was freed
    release.set()
    waiter.join(60)
    assert not waiter.is_alive()
    assert wait_until(
        lambda: (
            "late result discarded after the call ended" in tools.history.get(call.id)["warnings"]
        ),
        60,
    )
    tools.history.close()


def test_ctrl_c_while_the_body_runs_inline_terminates_the_call(tools):
    running = threading.Event()

    @tools.tool
    def long() -> str:
        """Sleep in small steps."""
        running.set()
        for _ in range(500):
            time.sleep(0.01)
        return "done"

    def ctrl_c() -> None:
        # A real SIGINT, as Ctrl-C or a kernel interrupt sends, to the main thread once the
        # body runs. It wakes the main thread wherever it waits: in the body it runs itself,
        # or blocked on the call if a busy machine let the ticker start it in a lane first
        # (a signal the process gets on another thread, or interrupt_main's flag, does not).
        if running.wait(10):
            signal.pthread_kill(threading.main_thread().ident or 0, signal.SIGINT)

    previous = signal.signal(signal.SIGINT, signal.default_int_handler)  # Python's own Ctrl-C
    try:
        threading.Thread(target=ctrl_c, daemon=True).start()
        call = tools.invoke("long")
        with pytest.raises(KeyboardInterrupt):
            call.wait()
    finally:
        signal.signal(signal.SIGINT, previous)
    assert call.sheet.phase.driver == "inline"
    assert call.wait(5).killed_by == "user" and call.state == "terminated"


def test_a_call_made_inside_a_body_run_inline_is_its_child_and_runs_inline_too(tools):
    threads: list[str] = []

    @tools.tool
    def child() -> str:
        """Leaf."""
        threads.append(threading.current_thread().name)
        return "leaf"

    @tools.tool
    def parent(ctx: wb.ToolContext) -> str:
        """Calls child."""
        threads.append(threading.current_thread().name)
        return ctx.invoke("child").wait().result

    call = tools.invoke("parent")
    assert call.wait().result == "leaf"
    assert threads == [threading.current_thread().name] * 2
    (row,) = [row for row in tools.history.rows() if row["tool"] == "child"]
    assert row["parent_call_id"] == call.id
    # the parent's context is gone once it ended: a later call has no parent
    later = tools.invoke("child")
    assert later.wait().ok and later.parent is None


def test_await_and_a_wait_with_a_timeout_run_it_whole_on_one_worker(tools):
    import asyncio

    @tools.tool
    def where() -> str:
        """Name the thread."""
        return threading.current_thread().name

    async def main() -> wb.Call:
        call = tools.invoke("where")
        await call
        return call

    awaited = asyncio.run(main())
    timed = tools.invoke("where")
    timed.wait(5)
    for call in (awaited, timed):
        # the whole lifecycle ran on the worker (no hop through the runtime loop)
        assert call.sheet.phase.driver == "inline" and call.envelope.result.startswith(
            "workbench-worker"
        )


def test_wait_runs_an_async_def_body_on_the_waiting_thread_s_own_loop(tools):
    import asyncio

    @tools.tool
    async def where(pause: float = 0.01) -> dict:
        """Name the thread and the loop, after awaiting something real."""
        await asyncio.sleep(pause)
        return {"thread": threading.current_thread().name, "loop": id(asyncio.get_running_loop())}

    calls, results = [], []
    for _ in range(3):
        calls.append(tools.invoke("where"))
        results.append(calls[-1].wait().result)
    here = threading.current_thread().name
    assert [result["thread"] for result in results] == [here] * 3
    assert {call.sheet.phase.driver for call in calls} == {"inline"}
    assert id(calls[0].sheet.loop) not in {result["loop"] for result in results}
    assert [event.type for event in calls[0].events] == [
        "tool.queued",
        "tool.started",
        "tool.completed",
    ]


def test_an_async_def_body_run_inline_is_stopped_by_terminate_and_its_budget(tools):
    import asyncio

    left_running: list[asyncio.Task] = []

    @tools.tool
    async def sleeper(seconds: float) -> str:
        """Sleep, leaving a helper task running too."""
        left_running.append(asyncio.ensure_future(asyncio.sleep(3600)))
        await asyncio.sleep(seconds)
        return "woke"

    declare_budgeted(tools)

    press_terminate = terminate_soon(0.2)
    terminated = press_terminate(tools.invoke("sleeper", {"seconds": 60}))
    started = time.monotonic()
    envelope = terminated.wait()
    assert time.monotonic() - started < 30  # not the body's 60 s
    assert terminated.sheet.phase.driver == "inline" and terminated.state == "terminated"
    assert envelope.killed_by == "user"
    assert left_running and left_running[0].cancelled()  # nothing left frozen on the loop
    timed_out = tools.invoke("budgeted")
    assert timed_out.wait().error.kind is wb.ErrorKind.TIMEOUT
    assert timed_out.sheet.phase.driver == "inline"


def test_a_wait_inside_a_running_loop_runs_the_async_body_and_gives_the_loop_back(tools):
    """A notebook cell is code run while the kernel's loop is marked running on its thread."""
    import asyncio

    @tools.tool
    async def double(n: int) -> int:
        """Twice n."""
        await asyncio.sleep(0)
        return 2 * n

    async def cell() -> tuple[int, bool]:
        outer = asyncio.get_running_loop()
        value = tools.invoke("double", {"n": 21}).wait().result  # a blocking wait, as in a cell
        return value, asyncio.get_running_loop() is outer

    assert asyncio.run(cell()) == (42, True)


def test_a_burst_of_async_def_calls_awaited_one_by_one_still_runs_at_once(tools):
    import asyncio

    @tools.tool
    async def nap() -> str:
        """Sleep half a second."""
        await asyncio.sleep(0.5)
        return threading.current_thread().name

    async def main() -> list[wb.Call]:
        calls = [tools.invoke("nap") for _ in range(8)]
        for call in calls:
            await call
        return calls

    started = time.monotonic()
    calls = asyncio.run(main())
    # eight half-second sleeps at once, not one after another: the first awaited runs on the
    # awaiting loop, and taking it started the seven made after it on the runtime loop
    assert time.monotonic() - started < 3.5
    assert [call.sheet.phase.driver for call in calls] == ["inline"] + ["loop"] * 7
    assert [call.envelope.result for call in calls[1:]] == ["workbench-runtime"] * 7


def test_a_stubborn_async_body_run_inline_is_left_behind_and_named_as_one(tools):
    declare_stubborn(tools)

    call = tools.invoke("stubborn")
    envelope = call.wait()
    assert call.sheet.phase.driver == "inline"
    assert envelope.error.kind is wb.ErrorKind.TIMEOUT
    notes = " ".join(call.sheet.outcome.notes)
    assert "the tool's async body ignored cancellation" in notes
