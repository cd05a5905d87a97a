"""Calls run on workbench's own runtime loop: ``wait()`` works from any thread at any time,
``await call`` from any asyncio loop, and a tool that blocks the loop is named on the calls it
delayed."""

from __future__ import annotations

import asyncio
import threading
import time

import pytest

import workbench as wb
from workbench.runtime.threads._loop import runtime_loop


def test_wait_works_before_the_call_starts_while_it_runs_and_after_it_ended(tools):
    release = threading.Event()

    @tools.tool
    def held() -> str:
        """Wait to be released."""
        release.wait(10)
        return "released"

    early = tools.invoke("held")
    assert early.wait(5) if early.done else True  # not started yet: waiting is allowed
    threading.Timer(0.2, release.set).start()
    assert early.wait(10).result == "released"  # while it runs
    assert early.wait().result == "released"  # after it ended, at once


def test_wait_works_from_many_threads_at_once(tools):
    @tools.tool
    async def nap() -> str:
        """Sleep a little."""
        await asyncio.sleep(0.2)
        return "rested"

    call = tools.invoke("nap")
    results: list[str] = []
    threads = [
        threading.Thread(target=lambda: results.append(call.wait(10).result)) for _ in range(8)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(10)
    assert results == ["rested"] * 8


def test_await_works_on_any_loop_and_on_a_call_that_already_ended(tools):
    @tools.tool
    async def double(x: int) -> int:
        """Double."""
        return 2 * x

    finished = tools.invoke("double", {"x": 1})
    finished.wait(5)

    async def main() -> list[int]:
        return [(await tools.invoke("double", {"x": 2})).result, (await finished).result]

    assert asyncio.run(main()) == [4, 2]
    # a second, unrelated loop in another thread
    out: list[int] = []
    thread = threading.Thread(target=lambda: out.extend(asyncio.run(main())))
    thread.start()
    thread.join(10)
    assert out == [4, 2]


def test_wait_inside_an_async_tool_says_to_await_instead(tools):
    @tools.tool
    async def inner() -> int:
        """One."""
        return 1

    @tools.tool
    async def outer() -> int:
        """Wait the wrong way."""
        return tools.invoke("inner").wait(1).result

    envelope = tools.invoke("outer").wait(10)
    assert not envelope.ok and "await call" in envelope.error.message


def test_calls_nobody_runs_where_they_wait_share_one_runtime_loop_thread(tools):
    """A call waited for with a timeout, or started before anyone awaits it (a burst), runs
    on the one runtime loop; only a waiter that runs a call itself takes it off that loop."""

    @tools.tool
    async def loop_id() -> int:
        """Which loop."""
        return id(asyncio.get_running_loop())

    async def from_a_loop() -> list[int]:
        calls = tools.invoke_many([("loop_id", {}), ("loop_id", {})])
        return [(await call).result for call in calls]

    assert tools.invoke("loop_id").wait(5).result == id(runtime_loop())
    assert asyncio.run(from_a_loop()) == [id(runtime_loop())] * 2


def test_a_loop_blocked_for_over_a_second_is_named_on_the_calls_it_delayed(tools):
    @tools.tool
    async def hog() -> str:
        """Block the loop the wrong way."""
        time.sleep(1.6)
        return "done"

    @tools.tool
    async def bystander() -> str:
        """Sleep properly."""
        await asyncio.sleep(2.5)
        return "fine"

    waiting = tools.invoke("bystander")
    time.sleep(0.1)
    hogging = tools.invoke("hog")
    assert hogging.wait(10).ok and waiting.wait(10).ok
    for call in (hogging, waiting):
        blocked = [w for w in call.warnings if "runtime loop was blocked" in w]
        assert blocked and "`hog`" in blocked[0], call.warnings
        assert any(event.type == "tool.warning" for event in call.events)
    assert any("runtime loop was blocked" in w for w in tools.history.get(hogging.id)["warnings"])


def test_a_quick_async_tool_gets_no_blocked_loop_warning(tools):
    @tools.tool
    async def quick() -> int:
        """Return at once."""
        await asyncio.sleep(0.01)
        return 1

    call = tools.invoke("quick")
    assert call.wait(5).ok and call.warnings == []


def test_a_tool_name_that_is_not_a_string_ends_at_once_as_invalid_args(tools):
    for name in (None, 3, ["shell_exec"], {"a": 1}):
        envelope = tools.invoke(name).wait(5)  # type: ignore[arg-type]
        assert envelope.error.kind is wb.ErrorKind.INVALID_ARGS
        assert "must be a string" in envelope.error.message
    assert len(tools.history) == 4


def test_a_model_supplied_id_is_kept_beside_workbenchs_own(tools):
    @tools.tool
    def noop() -> None:
        """Nothing."""

    calls = [tools.invoke("noop", call_id="toolu_same") for _ in range(3)]
    envelopes = [call.wait(5) for call in calls]
    assert len({call.id for call in calls}) == 3
    assert all(call.model_call_id == "toolu_same" for call in calls)
    assert all(envelope.call_id == "toolu_same" for envelope in envelopes)
    assert len(tools.history) == 3


@pytest.mark.parametrize("where", ["thread", "loop"])
def test_the_row_is_committed_before_anyone_learns_the_call_ended(tmp_path, where):
    registry = wb.Registry(history=tmp_path / "h.sqlite")

    @registry.tool
    def noop() -> None:
        """Nothing."""

    seen: list[bool] = []

    def subscriber(event: wb.Event) -> None:
        if event.type == "tool.completed":
            seen.append(_committed(tmp_path / "h.sqlite", event.call_id))

    async def awaited() -> list[str]:
        calls = [registry.invoke("noop") for _ in range(20)]
        for call in calls:
            await call
        return [call.id for call in calls]

    if where == "thread":
        ids = []
        for _ in range(20):
            call = registry.invoke("noop")
            call.subscribe(subscriber)
            call.wait(5)
            ids.append(call.id)
    else:
        ids = asyncio.run(awaited())
    # read by a History of its own, as another process would, right after each end
    assert all(_committed(tmp_path / "h.sqlite", call_id) for call_id in ids)
    assert all(seen)
    registry.history.close()


def _committed(path, call_id: str) -> bool:
    """Whether a History of its own (as another process opens the file) reads the row: from
    SQLite, or from the commit log of the history that wrote it."""
    reader = wb.History(path)
    try:
        return reader.get(call_id) is not None
    finally:
        reader.close()
