"""Hooks never hold the runtime loop: a plain ``def`` ``before_tool`` or ``after_tool`` hook that
blocks runs on a worker thread, so every other call goes on and ``terminate()`` ends the call
it holds; an ``async def`` hook that blocks the loop is named as the hook, not as the tool."""

from __future__ import annotations

import asyncio
import threading
import time

import workbench as wb
from tests.conftest import wait_until


def watched(tools: wb.Registry, name: str) -> wb.Call:
    """A call on the runtime loop (a card watching it keeps it there)."""
    return tools.invoke(name, subscriber=lambda event: None)


def test_a_blocking_def_before_tool_hook_holds_neither_other_calls_nor_terminate(tools):
    release = threading.Event()
    entered = threading.Event()

    @tools.tool
    def guarded() -> str:
        """Run after the hook."""
        return "ran"

    @tools.tool
    async def other() -> str:
        """Another call on the loop."""
        return "other"

    @tools.before_tool
    def slow_check(call: wb.Call, arguments: dict) -> None:
        if call.tool_name == "guarded":
            entered.set()
            release.wait(60)  # a synchronous policy service that hangs

    try:
        held = watched(tools, "guarded")
        assert entered.wait(30)
        # The loop is free: another call runs to its end while the hook still blocks.
        assert watched(tools, "other").wait(30).result == "other"
        held.terminate()
        envelope = held.wait(30)  # base: the loop is held until the hook returns
        assert envelope.killed_by == "user"
        assert not release.is_set()
    finally:
        release.set()
    assert not any("runtime loop was blocked" in note for note in held.notes)


def test_a_blocking_def_after_tool_hook_holds_no_other_call(tools):
    release = threading.Event()
    entered = threading.Event()

    @tools.tool
    async def first() -> str:
        """The call whose hook blocks."""
        return "first"

    @tools.tool
    async def second() -> str:
        """Another call."""
        return "second"

    @tools.after_tool
    def slow_audit(call: wb.Call, envelope: wb.Envelope) -> None:
        if call.tool_name == "first":
            entered.set()
            release.wait(60)

    try:
        held = watched(tools, "first")
        assert entered.wait(30)
        assert watched(tools, "second").wait(30).result == "second"
        assert not held.done
    finally:
        release.set()
    assert held.wait(30).result == "first"


def test_an_async_hook_that_blocks_the_loop_is_named_not_the_tool(tools):
    @tools.tool
    async def innocent() -> str:
        """Does nothing wrong."""
        await asyncio.sleep(0)
        return "fine"

    async def blocking_hook(call: wb.Call, arguments: dict) -> None:
        time.sleep(1.5)  # blocks the loop past the watchdog's 1 s

    tools.before_tool(blocking_hook)
    call = watched(tools, "innocent")
    assert call.wait(30).result == "fine"
    assert wait_until(lambda: any("was blocked" in note for note in call.notes), timeout=10)
    blamed = [note for note in call.notes if "was blocked" in note]
    assert all("before_tool hook (" in note and "blocking_hook" in note for note in blamed)
    assert not any("by `innocent`" in note for note in blamed)
