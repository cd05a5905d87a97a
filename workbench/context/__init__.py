"""What a tool body is handed: ``ToolContext``, its cancellation token, and its processes.

A parameter annotated ``wb.ToolContext`` is injected by the runtime and never appears in a
schema, an export, a receipt or the history. Through it a body streams output, watches for
cancellation, keeps artifacts, reads secrets, calls other tools, and starts commands that
always end: each runs under a small supervisor process that outlives nothing it started.
"""

from workbench.context._context import CancellationToken, ToolCancelled, ToolContext
from workbench.context._processes import (
    TERMINATE_GRACE_S,
    Owner,
    Supervision,
    end_owned_by,
    owner_for,
    popen,
)

__all__ = [
    "TERMINATE_GRACE_S",
    "CancellationToken",
    "Owner",
    "Supervision",
    "ToolCancelled",
    "ToolContext",
    "end_owned_by",
    "owner_for",
    "popen",
]
