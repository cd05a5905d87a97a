"""The person's handle on one invocation of a tool: ``Call`` (state, events, output, controls,
the envelope once it ends), its card for a notebook, and the interruption a person sees."""

from workbench.runtime.call._call import Call, PendingAction, new_call_id
from workbench.runtime.call._display import call_html
from workbench.runtime.call._interrupted import CallInterrupted

__all__ = [
    "Call",
    "CallInterrupted",
    "PendingAction",
    "call_html",
    "new_call_id",
]
