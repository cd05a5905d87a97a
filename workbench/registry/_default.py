"""The module-level default registry behind ``wb.tool`` and ``wb.invoke``."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from workbench.declare import Tool
    from workbench.registry._registry import Registry
    from workbench.runtime import Call

_lock = threading.Lock()
_registry: Registry | None = None


def default_registry() -> Registry:
    """The registry ``wb.tool`` and ``wb.invoke`` use, created on first use."""
    global _registry
    with _lock:
        if _registry is None:
            from workbench.registry._registry import Registry

            _registry = Registry()
        return _registry


def tool(
    fn: Callable[..., Any] | None = None, /, **options: Any
) -> Tool | Callable[[Callable[..., Any]], Tool]:
    """Declare a tool in the default registry (see ``Registry.tool``)."""
    registry = default_registry()
    return registry.tool(fn, **options) if fn is not None else registry.tool(**options)


def invoke(name: str, args: Any = None, **options: Any) -> Call:
    """Invoke a tool of the default registry (see ``Registry.invoke``)."""
    return default_registry().invoke(name, args, **options)
