"""Running calls: the ``Call`` handle, the lifecycle, and the threads that drive it.

``Registry.invoke`` makes a ``Call`` and returns it at once; the call runs on workbench's own
runtime loop thread (a blocking body on a worker), or on the thread that waits for it, or in a
lane beside other calls of a burst. Every way runs the same lifecycle: preflight, hooks, the
gate (approval), limits, the body, projection, the receipt, and the committed history row,
in that order. Stopping (``terminate``, a time budget) works at every step.
"""

from __future__ import annotations

from workbench.runtime._body import current_call
from workbench.runtime._call import Call, Subscriber
from workbench.runtime._display import call_html
from workbench.runtime._events import TERMINAL_EVENTS, Event
from workbench.runtime._faults import Fault, Faults
from workbench.runtime._gate import Approver, Decision, GateRequest
from workbench.runtime._lanes import Lanes
from workbench.runtime._lifecycle import start
from workbench.runtime._limits import Limit
from workbench.runtime._loop import dedicated_loop, on_loop_thread, running_loop
from workbench.runtime._waiting_thread import run_inline, start_calls, start_or_defer, watch_lanes

__all__ = [
    "TERMINAL_EVENTS",
    "Approver",
    "Call",
    "Decision",
    "Event",
    "Fault",
    "Faults",
    "GateRequest",
    "Lanes",
    "Limit",
    "Subscriber",
    "call_html",
    "current_call",
    "dedicated_loop",
    "on_loop_thread",
    "run_inline",
    "running_loop",
    "start",
    "start_calls",
    "start_or_defer",
    "watch_lanes",
]
