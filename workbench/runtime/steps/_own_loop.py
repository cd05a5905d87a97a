"""Running an ``async def`` body on the thread that waits for it, on that thread's own loop.

``call.wait()`` blocks its thread until the call ends; for an ``async def`` tool that needs
nobody, that thread runs the body itself on an event loop of its own instead of handing it to
the runtime loop and waiting to be woken (two thread hops saved, as for a plain ``def``). A
cell in a notebook runs while the kernel's loop is marked running on the same thread, and the
cell blocks that loop anyway until ``wait()`` returns, so the mark is set aside for the body's
run and put back after it.

Stopping keeps its promise: the stop control cancels the body's task on this loop (from any
thread), exactly as it cancels a task on the runtime loop. Tasks the body started and left
running are cancelled when it returns, as ``asyncio.run`` does: this loop runs only while
someone waits here, so they would otherwise be frozen until the next call.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Coroutine
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from workbench.runtime.sheet import StopControl

_THREAD = threading.local()


def _loop_of_this_thread() -> asyncio.AbstractEventLoop:
    loop: asyncio.AbstractEventLoop | None = getattr(_THREAD, "loop", None)
    if loop is None or loop.is_closed():
        loop = _THREAD.loop = asyncio.new_event_loop()
    return loop


def run_here(body: Coroutine[Any, Any, Any], control: StopControl) -> Any:
    """Run ``body`` to its end on this thread's own loop and return what it returns.

    Raises what the body raises; ``asyncio.CancelledError`` when a stop cancelled it."""
    loop = _loop_of_this_thread()
    outer = asyncio._get_running_loop()  # a notebook cell's kernel loop, blocked meanwhile
    asyncio._set_running_loop(None)
    task = loop.create_task(body)
    control.attach(task)
    control.phase = "in_body"
    try:
        return loop.run_until_complete(task)
    finally:
        _cancel_what_was_left(loop, task)
        asyncio._set_running_loop(outer)


def _cancel_what_was_left(loop: asyncio.AbstractEventLoop, body: asyncio.Task[Any]) -> None:
    if not body.done():  # Ctrl-C left it mid-step
        body.cancel()
    left = [task for task in asyncio.all_tasks(loop) if not task.done()]
    if not left:
        return
    for task in left:
        task.cancel()
    loop.run_until_complete(asyncio.gather(*left, return_exceptions=True))
