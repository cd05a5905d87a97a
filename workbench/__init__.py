"""workbench: see exactly what a language model sees of your tools.

The core (envelopes, registry, preflight, runtime, families, history, compaction) runs in plain
Python; ``workbench.widgets`` draws it in Jupyter. Everything public is re-exported here.

This facade is the one place that joins the two: the core finds views through
``workbench._views`` and never names the widgets; inside a Jupyter kernel the facade has the
widgets imported on the first look-up, so they register their views.
"""

import warnings as _warnings

from workbench import _extras, _views
from workbench.context import CancellationToken, ToolCancelled, ToolContext
from workbench.declare import Tool, ToolSpec
from workbench.envelope import (
    ArtifactRef,
    Envelope,
    ErrorKind,
    ToolError,
    ToolFailure,
    failure,
    failure_message,
    file_result,
    from_exception,
    is_error,
    is_success,
    listing,
    success,
    success_payload,
    truncate_for_model,
    wire_schema,
)
from workbench.families import Compaction, compact
from workbench.history import History
from workbench.models import Run, compare_runs, run
from workbench.preflight import Coercion, PreflightResult
from workbench.registry import Registry, default_registry, invoke, tool
from workbench.runtime import Approver, Call, Decision, Event, GateRequest
from workbench.study import open_dataset

__version__ = "0.1.0"

_LAB_EXTRA_HINT = _extras.install_hint("lab")


def _load_widgets() -> bool:
    """Inside a Jupyter kernel, import the widgets so they register their views; elsewhere
    stay pending (False). Without the widgets' packages, say which extra brings them."""
    from workbench._views import in_kernel

    if not in_kernel():
        return False
    try:
        import workbench.widgets  # noqa: F401  (registers its views on import)
    except ImportError as exc:
        _warnings.warn(
            f"workbench shows static cards: live cards need {exc.name or 'ipywidgets'} "
            f"({_LAB_EXTRA_HINT})",
            stacklevel=2,
        )
    return True


_views.add_loader(_load_widgets)

# Subpackages loaded on first use, so `import workbench` stays light and free of Jupyter.
_SUBPACKAGES = frozenset({"builtins", "mcp", "transcripts", "widgets"})


# The extra that brings each subpackage's optional dependencies.
_EXTRAS = {"mcp": "mcp", "widgets": "lab", "builtins": "lab"}


def __getattr__(name: str) -> object:
    if name in _SUBPACKAGES:
        import importlib

        try:
            module = importlib.import_module(f"workbench.{name}")
        except ModuleNotFoundError as exc:
            if (exc.name or "").split(".")[0] == "workbench":
                raise
            raise ModuleNotFoundError(
                f"wb.{name} needs the package {exc.name!r}: "
                f"{_extras.install_hint(_EXTRAS[name])} (or the 'lab' extra, which brings "
                "everything the notebooks use)",
                name=exc.name,
            ) from exc
        globals()[name] = module
        return module
    raise AttributeError(f"module 'workbench' has no attribute {name!r}")


__all__ = [
    "Approver",
    "ArtifactRef",
    "Call",
    "CancellationToken",
    "Coercion",
    "Compaction",
    "Decision",
    "Envelope",
    "ErrorKind",
    "Event",
    "GateRequest",
    "History",
    "PreflightResult",
    "Registry",
    "Run",
    "Tool",
    "ToolCancelled",
    "ToolContext",
    "ToolError",
    "ToolFailure",
    "ToolSpec",
    "compact",
    "compare_runs",
    "default_registry",
    "failure",
    "failure_message",
    "file_result",
    "from_exception",
    "invoke",
    "is_error",
    "is_success",
    "listing",
    "open_dataset",
    "run",
    "success",
    "success_payload",
    "tool",
    "truncate_for_model",
    "wire_schema",
]
