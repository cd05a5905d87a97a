"""The tools a registry holds, by name: declared once, redefined by re-running their cell,
looked up, followed by views, and what a model sees of them (exports, their checks, the
preflight and its resilience matrix).

Re-running a notebook cell that defines a tool replaces it: a function defined in the same
module under the same qualified name as the registered one is the same tool, redefined. A
*different* function under an existing name is refused unless ``replace=True``.
"""

from __future__ import annotations

import threading
import warnings
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

from workbench.declare import Invoker, Tool, ToolSpec
from workbench.envelope import unknown_tool
from workbench.preflight import PreflightResult

if TYPE_CHECKING:
    import pandas as pd

    from workbench.declare import Target


class ToolSet:
    """Tools by name, in the order they were added; safe to change from any thread."""

    def __init__(self) -> None:
        self._tools: dict[str, Tool] = {}
        self._lock = threading.Lock()
        self._change_listeners: list[Callable[[], None]] = []

    def add(self, tool: Tool, owner: Invoker, *, replace: bool = False) -> Tool:
        """Add ``tool`` (``owner`` invokes it: its ``registry``), or redefine the one of its
        name from the same place; ``ValueError`` for another tool under a taken name unless
        ``replace``."""
        with self._lock:
            existing = self._tools.get(tool.name)
            redefined = (
                existing is not None
                and tool.origin is not None
                and (existing.origin == tool.origin)
            )
            if existing is not None and not (replace or redefined):
                where = ".".join(existing.origin) if existing.origin else "elsewhere"
                raise ValueError(
                    f"duplicate tool name {tool.name!r}: already registered from {where}; "
                    "names must be unique (pass replace=True to replace it on purpose)"
                )
            tool.registry = owner
            self._tools[tool.name] = tool
        self._changed()
        return tool

    def unregister(self, name: str) -> None:
        """Remove a tool; unknown names are ignored."""
        with self._lock:
            removed = self._tools.pop(name, None)
        if removed is not None:
            self._changed()

    def on_change(self, listener: Callable[[], None]) -> Callable[[], None]:
        """Call ``listener()`` after each change of the tools or their permissions (from the
        thread that made it), so a view can follow the registry. Returns a function that
        stops it; a listener that raises is reported as a warning."""
        with self._lock:
            self._change_listeners.append(listener)

        def stop() -> None:
            with self._lock:
                if listener in self._change_listeners:
                    self._change_listeners.remove(listener)

        return stop

    def _changed(self) -> None:
        for listener in list(self._change_listeners):
            try:
                listener()
            except Exception as exc:  # reported where a person sees it; the registry goes on
                warnings.warn(f"a registry change listener failed: {exc!r}", stacklevel=3)

    def get(self, name: str) -> Tool | None:
        """The tool named ``name``, or None."""
        return self._tools.get(name)

    def __getitem__(self, name: str) -> Tool:
        tool = self._tools.get(name)
        if tool is None:
            raise KeyError(f"no tool named {name!r}; registered: {', '.join(self.names())}")
        return tool

    def __contains__(self, name: object) -> bool:
        return name in self._tools

    def __iter__(self) -> Iterator[Tool]:
        return iter(list(self._tools.values()))

    def __len__(self) -> int:
        return len(self._tools)

    def names(self) -> list[str]:
        """Registered tool names, in registration order."""
        return list(self._tools)

    def spec(self, name: str) -> ToolSpec:
        """The declaration of one tool: name, description, schemas and metadata."""
        return self[name].spec

    def specs(self) -> list[ToolSpec]:
        """Every declaration, in registration order."""
        return [tool.spec for tool in self]

    # ── what a model sees ───────────────────────────────────────────────────────────────
    def export(self, target: Target) -> list[dict[str, Any]]:
        """The tool list in a provider's shape: "openai", "openai-strict", "anthropic",
        "gemini" or "mcp"."""
        from workbench.declare import export_tools

        return export_tools(self.specs(), target)

    def check_exports(self) -> pd.DataFrame:
        """What each provider would refuse or warn about, per tool and target: a table."""
        from workbench.declare import check_exports

        return check_exports(self.specs())

    def dialect_verdicts(self) -> pd.DataFrame:
        """One row per tool, one column per provider: "ok", "changed" or "refused"."""
        from workbench.declare import dialect_verdicts

        return dialect_verdicts(self.specs())

    def preflight(self, name: str, args: Any = None) -> PreflightResult:
        """Coerce and validate arguments exactly as a call would, without running anything."""
        tool = self.get(name)
        if tool is None:
            error = unknown_tool(name, self.names())
            return PreflightResult(arguments=None, coercions=(), error=error)
        return tool.preflight(args)

    def resilience(self, name: str) -> pd.DataFrame:
        """The resilience matrix: the mistakes models make, sent through the preflight only."""
        from workbench.preflight import resilience_matrix

        tool = self[name]
        return resilience_matrix(tool.spec, tool.preflight)
