"""The runtime loop as a driver: each call a task that runs every step of its lifecycle.

A call that may need a person (approval, a form), a hook, an injected fault, a stream, an
``async def`` body or a card watching it runs here; so does any call started on the loop.
"""

from __future__ import annotations

import asyncio
import traceback
from typing import TYPE_CHECKING

from workbench.envelope import Envelope, from_exception
from workbench.runtime import _watchdog as watchdog
from workbench.runtime._asking import run_hook
from workbench.runtime._ending import seal
from workbench.runtime._lifecycle import steps
from workbench.runtime._loop import on_loop_thread
from workbench.runtime._outcome import stopped_envelope
from workbench.runtime._tasks import handed, launched

if TYPE_CHECKING:
    from workbench.runtime._call import Call


def start(*calls: Call) -> None:
    """Start ``calls`` on the runtime loop (tasks made now when already there, else on the
    loop's next pass, all with one wake-up); returns at once."""
    if not calls:
        return
    loop = calls[0].sheet.loop
    if on_loop_thread(loop):
        _launch(calls)
    else:
        handed(calls)
        loop.call_soon_threadsafe(_launch, calls)


def _launch(calls: tuple[Call, ...]) -> None:
    loop = asyncio.get_running_loop()
    for call in calls:
        # A call someone else took meanwhile (a thread waiting for it) is theirs to run.
        launched(call, loop.create_task(drive(call)) if call.sheet.phase.driver is None else None)


async def drive(call: Call) -> None:
    """Run ``call`` to its end on the runtime loop; always finishes it with an envelope.

    Stopping (Terminate, a time budget) cancels this task through the call's stop control;
    the reason is recorded there, and whatever step was waiting turns into the stopped
    envelope.
    """
    sheet = call.sheet
    if not sheet.phase.claim("loop"):
        return  # a thread waiting for it took it first
    sheet.times.clock.wait_ends()  # picked up: the time since invocation was spent in the queue
    control = sheet.control
    task = asyncio.current_task()
    assert task is not None
    control.attach(task)
    watchdog.running(task, call)
    try:
        try:
            if control.reason is not None:
                envelope = stopped_envelope(call, control.reason)
            else:
                envelope = await steps(call)
        except asyncio.CancelledError:
            # A stop while the call waited outside its body (the gate, a slot, a hook), or the
            # runtime loop shutting down: either way the call ends, as stopped.
            task.uncancel()
            envelope = stopped_envelope(call, control.note_reason(control.reason or "user"))
        except Exception as exc:
            sheet.outcome.traceback = traceback.format_exc()
            envelope = from_exception(exc, tool=str(call.tool_name))
        for problem in control.finishing():
            call.warn(problem)
        await _conclude(call, envelope)
    finally:
        watchdog.finished(task)


async def _conclude(call: Call, envelope: Envelope) -> None:
    """The ``after_tool`` hooks, then the end."""
    for hook in call.registry.policy.after:
        try:
            changed = await run_hook(hook, "after_tool", call, envelope)
        except Exception as exc:
            call.sheet.outcome.notes.append(f"after_tool hook {hook!r} failed: {exc!r}")
            continue
        if isinstance(changed, Envelope):
            envelope = changed
    seal(call, envelope)
