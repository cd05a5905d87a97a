"""workbench: see exactly what a language model sees of your tools.

The core (envelopes, registry, preflight, runtime, families, history, compaction) runs in plain
Python; ``workbench.widgets`` draws it in Jupyter. Everything public is re-exported here.
"""

from __future__ import annotations

from workbench._builders import (
    ToolFailure,
    failure,
    file_result,
    from_exception,
    listing,
    success,
)
from workbench._detect import failure_message, is_error, is_success, success_payload
from workbench._envelope import ArtifactRef, Envelope
from workbench._errors import ErrorKind, ToolError
from workbench._truncate import truncate_for_model
from workbench._wire import wire_schema

__version__ = "0.1.0"

__all__ = [
    "ArtifactRef",
    "Envelope",
    "ErrorKind",
    "ToolError",
    "ToolFailure",
    "failure",
    "failure_message",
    "file_result",
    "from_exception",
    "is_error",
    "is_success",
    "listing",
    "success",
    "success_payload",
    "truncate_for_model",
    "wire_schema",
]
