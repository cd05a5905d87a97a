"""The driver that runs a plain ``def`` tool (or, for ``call.wait()``, an ``async def`` one) on
the thread that waits for it.

``call.wait()`` blocks its thread until the call ends. When nobody runs the call yet and it
needs nothing from a person (no approval, no form, no hooks, no injected fault, no stream, no
card watching it), that thread runs it itself, exactly where a worker would have: the same
preflight, the same ``StopControl`` and cancellation token, the same envelope, receipt and row,
committed before anyone learns the call ended. It saves the four thread hops (caller → runtime
loop → worker → loop → caller) that dominate a short call. Someone who waits without blocking
their thread (``await call``, ``wait(timeout=...)``) gets the same run on a worker thread
instead: two hops, none through the runtime loop. The scheduler watches the time budget and the
grace; Ctrl-C of the person there terminates the call and is re-raised.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from workbench.envelope import Envelope
from workbench.runtime.scheduling._qualify import tool_if_inline
from workbench.runtime.scheduling._scheduler import end_inline, kick, left_for_a_waiter, take_inline
from workbench.runtime.steps import (
    InlineBody,
    admitted_arguments,
    awaited,
    bind_arguments,
    failed,
    guard,
    run_here,
    stopped_envelope,
)
from workbench.runtime.threads import WORKERS

if TYPE_CHECKING:
    from workbench.declare import Tool
    from workbench.runtime.call import Call


def run_on_worker(call: Call) -> None:
    """For someone who waits without blocking this thread (``await``, ``wait`` with a
    timeout): run a call that qualifies inline on a worker thread, which ends it there (two
    thread hops, not four); anything else starts now on the loop."""
    if not left_for_a_waiter(call):
        return  # started already: the loop or a lane runs it
    if call.sheet.phase.driver is not None or tool_if_inline(call) is None:
        kick(call)
        return

    def job() -> None:
        try:
            if not run_inline(call):
                kick(call)
        except Exception as exc:  # run_inline ends the call itself; this is a last resort
            call.warn(f"running the call on a worker failed: {exc!r}")

    WORKERS.submit(job)


def run_inline(call: Call, *, here: bool = False) -> bool:
    """Run ``call`` to its end on this thread if it qualifies and nobody runs it yet; True
    when it did (the envelope is then published or being committed by the history's writer).
    ``here`` as for ``tool_if_inline``."""
    tool = tool_if_inline(call, here=here)
    if tool is None:
        return False
    inline = take_inline(call, tool)
    if inline is None:
        return False
    interrupted: KeyboardInterrupt | None = None
    try:
        envelope = _steps(call, tool)
    except Exception as exc:  # a step after the body failed: the call still ends, with it
        envelope = failed(call, exc)
    except KeyboardInterrupt as exc:  # Ctrl-C while the body ran here: Terminate, then re-raise
        control = call.sheet.control
        control.stop("user")
        envelope = stopped_envelope(call, control.note_reason("user"))
        interrupted = exc
    end_inline(inline, envelope)
    if interrupted is not None:
        raise interrupted
    return True


def _steps(call: Call, tool: Tool) -> Envelope:
    """The lifecycle's steps that a call needing nobody has, on this thread (Ctrl-C goes on to
    ``run_inline``, which terminates the call and re-raises it)."""
    admitted = admitted_arguments(call, tool)
    if isinstance(admitted, Envelope):
        return admitted
    tool, arguments = admitted
    with InlineBody(call, passing=(KeyboardInterrupt,)) as body:
        args, kwargs = bind_arguments(tool, call, arguments)
        body.value = guard(tool.fn, *args, **kwargs)  # type: ignore[arg-type]
        if tool.kind == "coroutine":
            body.value = run_here(awaited(body.value), call.sheet.control)
    return body.envelope(tool)
