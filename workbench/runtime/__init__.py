"""Running calls, in rooms each with one job (``docs/architecture.md`` draws them):

    call        the person's handle: ``Call``, its card, the interruption a person sees
    sheet       what one call holds (``CallSheet``: phase, asked, times, outcome, output, events)
    steps       the one lifecycle: admit, run the body, the outcome, the seal
    scheduling  the ``Scheduler``, and beneath it the drivers side by side: the runtime loop,
                the waiting thread, the lanes, the awaiting loop
    policy      what a registry's calls run under: ``Policy``, ``Limits``, and the ``Host``
    threads     the runtime loop, the worker threads, the watchdog

``Registry.invoke`` makes a ``Call`` and returns it at once; every call runs the same lifecycle
wherever it runs, and stopping (``terminate``, a time budget) works at every step. The handle
reads what the lifecycle writes and never imports a driver, the history or the registry: a
registry is a ``Host`` by its shape.
"""

from workbench.runtime.call import Call, CallInterrupted, PendingAction, call_html, new_call_id
from workbench.runtime.policy import (
    AfterHook,
    BeforeHook,
    Fault,
    Faults,
    Host,
    LaneQueue,
    Limit,
    Limits,
    Policy,
)
from workbench.runtime.scheduling import DRIVERS, launch, launch_many, limits_for
from workbench.runtime.sheet import (
    TERMINAL_EVENTS,
    Approver,
    CallSheet,
    CallState,
    Decision,
    Event,
    EventType,
    GateRequest,
    StopControl,
    StopReason,
    Subscriber,
)
from workbench.runtime.steps import RAW_ARGS_ROW_CHARS, current_call, record_of, sent_raw_args
from workbench.runtime.threads import dedicated_loop, on_loop_thread, running_loop

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
