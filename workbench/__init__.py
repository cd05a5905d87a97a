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
from workbench._call import Call
from workbench._compaction import Compaction, compact
from workbench._context import CancellationToken, ToolCancelled, ToolContext
from workbench._default import default_registry, invoke, tool
from workbench._detect import failure_message, is_error, is_success, success_payload
from workbench._envelope import ArtifactRef, Envelope
from workbench._errors import ErrorKind, ToolError
from workbench._events import Event
from workbench._history import History
from workbench._preflight import Coercion, PreflightResult
from workbench._registry import Registry
from workbench._spec import ToolSpec
from workbench._tool import Tool
from workbench._truncate import truncate_for_model
from workbench._wire import wire_schema

__version__ = "0.1.0"

# Subpackages loaded on first use, so `import workbench` stays light and free of Jupyter.
_SUBPACKAGES = frozenset({"builtins", "mcp", "transcripts", "widgets"})


def __getattr__(name: str) -> object:
    if name in _SUBPACKAGES:
        import importlib

        module = importlib.import_module(f"workbench.{name}")
        globals()[name] = module
        return module
    raise AttributeError(f"module 'workbench' has no attribute {name!r}")


__all__ = [
    "ArtifactRef",
    "Call",
    "CancellationToken",
    "Coercion",
    "Compaction",
    "Envelope",
    "ErrorKind",
    "Event",
    "History",
    "PreflightResult",
    "Registry",
    "Tool",
    "ToolCancelled",
    "ToolContext",
    "ToolError",
    "ToolFailure",
    "ToolSpec",
    "compact",
    "default_registry",
    "failure",
    "failure_message",
    "file_result",
    "from_exception",
    "invoke",
    "is_error",
    "is_success",
    "listing",
    "success",
    "success_payload",
    "tool",
    "truncate_for_model",
    "wire_schema",
]
