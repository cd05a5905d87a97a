"""The lifecycle, one for every call wherever it runs: admit (preflight, hooks, faults, the gate
and approval), run the body (its own exits never ending the host), the outcome (projection,
the envelope), and the seal (the receipt, the row committed, then the end announced)."""

from workbench.runtime.steps._asking import run_hook
from workbench.runtime.steps._body import bind_arguments, current_call
from workbench.runtime.steps._commit import LaneGroup, lane_runs, lane_thread
from workbench.runtime.steps._ending import record_of, seal
from workbench.runtime.steps._exits import awaited, guard, guarded
from workbench.runtime.steps._inline_steps import InlineBody, admitted_arguments
from workbench.runtime.steps._left_behind import BodyKind, leave_behind, let_go
from workbench.runtime.steps._lifecycle import MAX_NESTING_DEPTH, steps
from workbench.runtime.steps._outcome import body_failure, failed, stopped_envelope
from workbench.runtime.steps._own_loop import run_here
from workbench.runtime.steps._raw_args import RAW_ARGS_ROW_CHARS, sent_raw_args

__all__ = [
    "MAX_NESTING_DEPTH",
    "RAW_ARGS_ROW_CHARS",
    "BodyKind",
    "InlineBody",
    "LaneGroup",
    "admitted_arguments",
    "awaited",
    "bind_arguments",
    "body_failure",
    "current_call",
    "failed",
    "guard",
    "guarded",
    "lane_runs",
    "lane_thread",
    "leave_behind",
    "let_go",
    "record_of",
    "run_here",
    "run_hook",
    "seal",
    "sent_raw_args",
    "steps",
    "stopped_envelope",
]
