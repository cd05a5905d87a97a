"""Running calls: the ``Call`` handle, the lifecycle, and the threads that drive it.

``Registry.invoke`` makes a ``Call`` and returns it at once. Every call runs the same lifecycle
(``_lifecycle``): preflight, hooks, the gate (approval), limits, the body, projection, the
receipt and the committed history row, in that order, and stopping (``terminate``, a time
budget) works at every step. Three drivers run it (``_dispatch``): the runtime loop, a thread of
its own (``_loop``) where every call may run; the thread that waits for a plain ``def`` call;
and lanes, worker threads that run a burst of such calls back to back. The handle reads what
the lifecycle writes (``Progress``) and never imports a driver, the history or the registry: a
registry is a ``Host`` by its shape.
"""

from workbench.runtime._body import current_call
from workbench.runtime._call import Call, PendingAction, new_call_id
from workbench.runtime._control import StopControl, StopReason
from workbench.runtime._dispatch import DRIVERS, launch, launch_many, limits_for
from workbench.runtime._display import call_html
from workbench.runtime._ending import record_of
from workbench.runtime._event_log import Subscriber
from workbench.runtime._events import TERMINAL_EVENTS, Event, EventType
from workbench.runtime._faults import Fault, Faults
from workbench.runtime._gate import Approver, Decision, GateRequest
from workbench.runtime._host import Host
from workbench.runtime._interrupted import CallInterrupted
from workbench.runtime._limits import LaneQueue, Limit, Limits
from workbench.runtime._loop import dedicated_loop, on_loop_thread, running_loop
from workbench.runtime._policy import AfterHook, BeforeHook, Policy
from workbench.runtime._raw_args import RAW_ARGS_ROW_CHARS, sent_raw_args
from workbench.runtime._sheet import CallSheet, CallState

__all__ = [
    "DRIVERS",
    "RAW_ARGS_ROW_CHARS",
    "TERMINAL_EVENTS",
    "AfterHook",
    "Approver",
    "BeforeHook",
    "Call",
    "CallInterrupted",
    "CallSheet",
    "CallState",
    "Decision",
    "Event",
    "EventType",
    "Fault",
    "Faults",
    "GateRequest",
    "Host",
    "LaneQueue",
    "Limit",
    "Limits",
    "PendingAction",
    "Policy",
    "StopControl",
    "StopReason",
    "Subscriber",
    "call_html",
    "current_call",
    "dedicated_loop",
    "launch",
    "launch_many",
    "limits_for",
    "new_call_id",
    "on_loop_thread",
    "record_of",
    "running_loop",
    "sent_raw_args",
]
