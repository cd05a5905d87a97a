"""Calls: returning at once, states, events in order, streaming, waiting and subscribers."""

from __future__ import annotations

import asyncio
import threading
import time

import pytest

import workbench as wb
from tests.conftest import wait_until


def test_invoke_returns_before_the_tool_ends(tools):
    release = threading.Event()

    @tools.tool
    def blocked(x: int) -> int:
        """Wait for the test to release it."""
        release.wait(10)
        return x * 2

    call = tools.invoke("blocked", {"x": "21"})
    assert isinstance(call, wb.Call)
    assert not call.done and call.envelope is None
    # Started by the runtime a moment later (how long is up to the machine's load: a fresh
    # run beside the browser tests once took over 0.1 s), and still not done while it runs.
    assert wait_until(lambda: call.state == "running")
    assert not call.done and call.envelope is None
    release.set()
    envelope = call.wait(5)
    assert envelope.ok and envelope.result == 42
    assert call.state == "succeeded"
    assert call.envelope is envelope
    assert call.receipt == "42"


def test_call_records_raw_and_coerced_arguments_and_coercions(tools):
    @tools.tool
    def add(a: int, b: int = 1) -> int:
        """Add two numbers."""
        return a + b

    call = tools.invoke("add", {"a": "5", "b": "7"})
    assert call.wait(5).result == 12
    assert call.raw_args == {"a": "5", "b": "7"}
    assert call.arguments == {"a": 5, "b": 7}
    assert [str(c) for c in call.coercions] == ['a: "5" → 5', 'b: "7" → 7']


def test_events_arrive_in_lifecycle_order_with_timestamps(tools):
    @tools.tool
    def talk(ctx: wb.ToolContext) -> str:
        """Say two things."""
        ctx.emit("one\n")
        ctx.emit("two\n", "stderr")
        return "done"

    call = tools.invoke("talk")
    call.wait(5)
    assert [e.type for e in call.events] == [
        "tool.queued",
        "tool.started",
        "tool.output",
        "tool.output",
        "tool.completed",
    ]
    outputs = [(e.stream, e.text) for e in call.events if e.type == "tool.output"]
    assert outputs == [("stdout", "one\n"), ("stderr", "two\n")]
    times = [e.at for e in call.events]
    assert times == sorted(times)
    assert all(e.call_id == call.id for e in call.events)


def test_generators_stream_and_return_their_result(tools):
    @tools.tool
    def count(n: int):
        """Count to n, streaming each number."""
        for i in range(1, n + 1):
            yield f"{i}\n"
        return {"counted": n}

    call = tools.invoke("count", {"n": 3})
    envelope = call.wait(5)
    assert envelope.result == {"counted": 3}
    assert call.output("stdout") == "1\n2\n3\n"
    assert tools.spec("count").streaming is True


def test_async_generators_stream_and_their_last_value_is_the_result(tools):
    @tools.tool
    async def ticks(n: int):
        """Tick n times."""
        for i in range(n):
            await asyncio.sleep(0)
            yield f"tick {i}\n"
        yield {"ticks": n}

    call = tools.invoke("ticks", {"n": 2})
    assert call.wait(5).result == {"ticks": 2}
    assert [e.text for e in call.events if e.type == "tool.output"] == ["tick 0\n", "tick 1\n"]


def test_unknown_tool_fails_closed_and_keeps_the_call_id(tools):
    call = tools.invoke("nope", {"x": 1}, call_id="call_from_model_1")
    envelope = call.wait(5)
    assert envelope.error.kind == "tool_not_found"
    assert envelope.error.retryable is False
    assert envelope.call_id == "call_from_model_1"
    assert call.state == "failed"


def test_invalid_arguments_keep_the_call_id_and_never_run_the_body(tools):
    ran = []

    @tools.tool
    def write(content: str) -> str:
        """Write content."""
        ran.append(content)
        return "ok"

    call = tools.invoke("write", {"colour": "red"})
    envelope = call.wait(5)
    assert envelope.error.kind == "invalid_args"
    assert envelope.call_id == call.id
    assert ran == []
    assert [e.type for e in call.events] == ["tool.queued", "tool.failed"]


def test_a_crashing_tool_becomes_an_execution_error_with_the_traceback_kept_for_authors(tools):
    @tools.tool
    def boom() -> None:
        """Fail."""
        raise ZeroDivisionError("division by zero")

    call = tools.invoke("boom")
    envelope = call.wait(5)
    assert envelope.error.kind == "execution_error"
    assert "ZeroDivisionError" in envelope.error.message
    assert "Traceback" in call.traceback
    assert "Traceback" not in call.receipt


def test_tool_failure_exception_and_returned_failures_pass_through(tools):
    @tools.tool
    def find(name: str) -> dict:
        """Find a user."""
        if name == "raise":
            raise wb.ToolFailure("not_found", "no user named raise", field="name")
        return wb.failure("no_match", f"no user named {name}")

    assert tools.invoke("find", {"name": "raise"}).wait(5).error.kind == "not_found"
    assert tools.invoke("find", {"name": "ada"}).wait(5).error.kind == "no_match"


def test_a_failing_subscriber_never_breaks_the_call(tools):
    subscribed = threading.Event()

    @tools.tool
    def chatty(ctx: wb.ToolContext) -> int:
        """Emit then return."""
        subscribed.wait(5)
        ctx.emit("hello\n")
        return 1

    seen = []
    call = tools.invoke("chatty")

    def bad(event: wb.Event) -> None:
        seen.append(event.type)
        raise RuntimeError("subscriber bug")

    call.subscribe(bad)
    subscribed.set()
    assert call.wait(5).result == 1
    assert "tool.output" in seen
    assert "tool.completed" in seen
    assert any("subscriber bug" in note for note in call.notes)


def test_a_slow_subscriber_never_breaks_the_call(tools):
    @tools.tool
    def chatty(ctx: wb.ToolContext) -> int:
        """Emit a few lines."""
        for i in range(5):
            ctx.emit(f"{i}\n")
        return 5

    call = tools.invoke("chatty")
    call.subscribe(lambda event: time.sleep(0.05))
    assert call.wait(10).result == 5
    assert call.output() == "0\n1\n2\n3\n4\n"


def test_unsubscribe_stops_delivery(tools):
    @tools.tool
    def quick() -> int:
        """Return."""
        return 1

    seen: list[str] = []
    release = threading.Event()

    @tools.tool
    def gated() -> int:
        """Wait."""
        release.wait(5)
        return 2

    call = tools.invoke("gated")
    unsubscribe = call.subscribe(lambda e: seen.append(e.type))
    unsubscribe()
    release.set()
    call.wait(5)
    assert seen == []


def test_wait_with_a_timeout_raises_timeout_error_while_the_call_runs(tools):
    release = threading.Event()

    @tools.tool
    def slow() -> int:
        """Wait."""
        release.wait(10)
        return 1

    call = tools.invoke("slow")
    with pytest.raises(TimeoutError):
        call.wait(0.05)
    release.set()
    assert call.wait(5).ok


def test_await_call_in_an_asyncio_program_leaves_the_caller_s_loop_free(tools):
    """The awaited ``async def`` body runs as a task on the caller's loop (no thread hop), so
    the program's other tasks run while it awaits."""

    @tools.tool
    async def where() -> str:
        """Name the thread, after a pause."""
        await asyncio.sleep(0.3)
        return threading.current_thread().name

    async def main() -> tuple[str, str, int]:
        ticks = 0

        async def ticker() -> None:
            nonlocal ticks
            while True:
                await asyncio.sleep(0.01)
                ticks += 1

        beside = asyncio.create_task(ticker())
        envelope = await tools.invoke("where")
        beside.cancel()
        return envelope.result, threading.current_thread().name, ticks

    ran_on, caller, ticks = asyncio.run(main())
    assert caller == "MainThread" and ran_on == "MainThread"
    assert ticks >= 5  # the caller's other task went on while the call ran


def test_calls_run_on_the_runtime_loop_and_blocking_bodies_on_workers(tools):
    @tools.tool
    async def loop_thread() -> str:
        """Name the thread."""
        return threading.current_thread().name

    @tools.tool
    def worker_thread() -> str:
        """Name the thread."""
        return threading.current_thread().name

    assert tools.invoke("loop_thread").wait(5).result == "workbench-runtime"
    assert tools.invoke("worker_thread").wait(5).result.startswith("workbench-worker")


def test_a_blocking_tool_never_blocks_the_loop(tools):
    release = threading.Event()

    @tools.tool
    def blocking() -> int:
        """Block a thread."""
        release.wait(10)
        return 1

    @tools.tool
    async def quick() -> int:
        """Return at once."""
        return 2

    slow = tools.invoke("blocking")
    assert tools.invoke("quick").wait(5).result == 2
    assert not slow.done
    release.set()
    assert slow.wait(5).result == 1


def test_elapsed_ticks_while_running_and_stops_at_the_end(tools):
    release = threading.Event()

    @tools.tool
    def slow() -> int:
        """Wait."""
        release.wait(10)
        return 1

    call = tools.invoke("slow")
    assert wait_until(lambda: call.elapsed > 0)  # (under load the body may start late)
    first = call.elapsed
    time.sleep(0.05)
    assert call.elapsed > first
    release.set()
    call.wait(5)
    final = call.elapsed
    time.sleep(0.02)
    assert call.elapsed == final


def test_output_kept_complete_in_the_artifact_while_memory_and_events_stay_bounded(tools):
    chunk = "x" * 1023 + "\n"

    @tools.tool
    def flood(ctx: wb.ToolContext) -> str:
        """Emit 5 MiB."""
        for _ in range(5 * 1024):
            ctx.emit(chunk)
        return "done"

    call = tools.invoke("flood")
    assert call.wait(30).ok
    assert call.output_size("stdout") == 5 * 1024 * 1024
    assert call.sheet.output.streams["stdout"].spilled
    assert len(call.events) <= 2_000 + 3
    assert call.sheet.log.dropped_output_events > 0
    assert call.output("stdout") == chunk * 5 * 1024


def test_a_call_displays_as_static_html_before_and_after_it_ends(tools):
    release = threading.Event()

    @tools.tool
    def shout(text: str, ctx: wb.ToolContext) -> str:
        """Shout."""
        ctx.emit("<b>working</b>\n")
        release.wait(5)
        return text.upper()

    call = tools.invoke("shout", {"text": "<script>x</script>"})
    time.sleep(0.1)
    running = call._repr_mimebundle_()["text/html"]
    assert "wb-card" in running and "&lt;b&gt;working" in running
    release.set()
    call.wait(5)
    ended = call._repr_mimebundle_()["text/html"]
    assert "&lt;SCRIPT&gt;" in ended and "<script>" not in ended


def test_short_ids_tell_calls_apart(tools):
    @tools.tool
    def noop() -> None:
        """Nothing."""

    ids = {tools.invoke("noop").short_id for _ in range(300)}
    assert len(ids) == 300


def test_cancelling_the_task_that_awaits_a_call_terminates_it(tools):
    @tools.tool
    async def slow() -> str:
        """Sleep a minute."""
        await asyncio.sleep(60)
        return "late"

    @tools.tool
    async def quick(x: int) -> int:
        """Double."""
        return 2 * x

    async def main() -> tuple[wb.Envelope, wb.Call]:
        assert (await tools.invoke("quick", {"x": "4"})).result == 8
        call = tools.invoke("slow")
        with pytest.raises(TimeoutError):
            await asyncio.wait_for(call, 0.1)
        return call.envelope, call

    _, call = asyncio.run(main())
    envelope = call.wait(5)  # the stop reaches the runtime loop a moment later
    assert call.state == "terminated" and envelope.killed_by == "user"


def test_a_call_awaited_in_a_cancelled_anyio_scope_still_ends(tools):
    import anyio

    @tools.tool
    async def slow() -> str:
        """Sleep a minute."""
        await asyncio.sleep(60)
        return "late"

    async def main() -> wb.Call:
        call = tools.invoke("slow")
        with anyio.move_on_after(0.1):
            await call
        await asyncio.sleep(0.05)
        return call

    call = asyncio.run(main())
    assert call.wait(5).killed_by == "user" and call.state == "terminated"
