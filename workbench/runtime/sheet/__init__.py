"""What one call holds, in parts each with one job (the ``CallSheet``): its phase, what it was
asked, its times, its outcome, its output, its events and who hears of its end; and the
controls its lifecycle reads: the stop control and the gate where it waits for a person."""

from workbench.runtime.sheet._control import StopControl, StopReason, outcome_seen
from workbench.runtime.sheet._event_log import Subscriber
from workbench.runtime.sheet._events import TERMINAL_EVENTS, Event, EventType
from workbench.runtime.sheet._gate import Approver, Decision, Gate, GateRequest, binding_of
from workbench.runtime.sheet._sheet import CallSheet, CallState

__all__ = [
    "TERMINAL_EVENTS",
    "Approver",
    "CallSheet",
    "CallState",
    "Decision",
    "Event",
    "EventType",
    "Gate",
    "GateRequest",
    "StopControl",
    "StopReason",
    "Subscriber",
    "binding_of",
    "outcome_seen",
]
