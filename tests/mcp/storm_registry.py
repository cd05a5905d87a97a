"""The registry the cancellation-storm test serves over stdio: the built-ins, with room for a
hundred calls at once (``python -m workbench.mcp serve tests.mcp.storm_registry:registry``)."""

from __future__ import annotations

import tempfile

from workbench import builtins
from workbench.registry import Registry

CONCURRENCY = 100


def registry() -> Registry:
    """The built-ins in a fresh workspace, a hundred calls at once, a one-second grace."""
    tools = Registry(history=":memory:", max_concurrency=CONCURRENCY, terminate_grace=1.0)
    builtins.register(tools, root=tempfile.mkdtemp(prefix="storm-"))
    return tools
