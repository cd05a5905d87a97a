"""Running an ``async def`` call on the event loop of the task that awaits it.

``await call`` from a loop of the person's own (a script's ``asyncio.run``, an agent's loop)
suspends that task until the call ends. When nobody runs the call yet and it needs nobody
(the test ``call.wait()`` applies before running a call inline), its steps run as a task on
that same loop: no thread is woken to run the body and none to hand the envelope back, where
the runtime loop costs a hop there and a hop back.

Not in a Jupyter kernel: there the awaiting loop is the kernel's, and an ``async def`` body
that blocks (``time.sleep``, a synchronous client) would freeze the notebook; on the runtime
loop it delays only other async tools, and the watchdog names it.

Stopping keeps its promises, as for a call run inline by a waiting thread: Terminate and the
time budget cancel the task on its own loop (the stop control takes the loop from the task),
the ticker enforces the budget and the grace, and a body that ignores cancellation past the
grace is left behind while the call ends. A loop closed under the task (``asyncio.run``
returning) cancels it, and the call ends stopped; a loop closed by hand while the task is still
pending never runs it again, and that call stays unended (on the runtime loop it would end).
"""

from __future__ import annotations

import asyncio
import sys
from typing import TYPE_CHECKING, Any

from workbench.envelope import Envelope
from workbench.runtime._body import bind_arguments
from workbench.runtime._exits import guarded
from workbench.runtime._outcome import failed
from workbench.runtime._waiting_thread import (
    InlineBody,
    admitted_arguments,
    body_failure,
    end_inline,
    take_inline,
    tool_if_inline,
)

if TYPE_CHECKING:
    from workbench.declare import Tool
    from workbench.runtime._call import Call

_RUNNING: set[asyncio.Task[Any]] = set()  # strong references to the tasks running calls


def in_a_jupyter_kernel() -> bool:
    """True in a process that is a Jupyter kernel (its loop is the notebook's)."""
    app = sys.modules.get("ipykernel.kernelapp")
    return app is not None and bool(app.IPKernelApp.initialized())


def run_on_awaiting_loop(call: Call, loop: asyncio.AbstractEventLoop) -> bool:
    """Run ``call`` as a task on ``loop`` (the running loop of the task awaiting it) if it is
    an ``async def`` call that qualifies to run inline and nobody runs it yet; True when the
    task was made (it ends the call, whatever happens to it)."""
    if in_a_jupyter_kernel():
        return False
    tool = tool_if_inline(call, here=True)
    if tool is None or tool.kind != "coroutine":
        return False
    inline = take_inline(call, tool)
    if inline is None:
        return False
    task = loop.create_task(_run(call, tool))
    call.sheet.control.attach(task)
    _RUNNING.add(task)
    task.add_done_callback(_RUNNING.discard)
    task.add_done_callback(lambda done: end_inline(inline, _envelope_of(call, done)))
    return True


async def _run(call: Call, tool: Tool) -> Envelope:
    admitted = admitted_arguments(call, tool)
    if isinstance(admitted, Envelope):
        return admitted
    tool, arguments = admitted
    # The body's own exits end the call (``guarded``); a person's Ctrl-C goes on to the loop,
    # which stops on it.
    with InlineBody(call, passing=(KeyboardInterrupt, SystemExit)) as body:
        args, kwargs = bind_arguments(tool, call, arguments)
        body.value = await guarded(tool.fn(*args, **kwargs))  # type: ignore[misc]
    return body.envelope(tool)


def _envelope_of(call: Call, task: asyncio.Task[Envelope]) -> Envelope:
    """What the task ended the call with; a task cancelled before its first step (its loop
    closing) or a step after the body that failed still ends the call."""
    if task.cancelled():
        return body_failure(call, asyncio.CancelledError())
    problem = task.exception()
    if problem is not None:
        return failed(call, problem)
    return task.result()
