"""What the runtime needs from the registry that hosts its calls, and nothing more.

The runtime never imports the registry: a ``Registry`` is a ``Host`` by its shape. Its tools,
the ``Policy`` and ``Limits`` its calls are run under, its history and artifacts, and how it
makes a call: the dependency stays one way, from the registry down to the runtime.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from workbench.declare import Tool
    from workbench.families import Budgets
    from workbench.history import History
    from workbench.output import ArtifactStore
    from workbench.runtime.call import Call
    from workbench.runtime.policy._limits import Limits
    from workbench.runtime.policy._policy import Policy


class Host(Protocol):
    """The registry a call belongs to, as the runtime sees it."""

    history: History
    artifacts: ArtifactStore
    budgets: Budgets
    secrets: Mapping[str, str]
    terminate_grace: float
    policy: Policy
    limits: Limits

    def get(self, name: str) -> Tool | None:
        """The tool registered under ``name``, or None."""
        ...

    def names(self) -> list[str]:
        """The names of the tools registered, in the order they were."""
        ...

    def invoke(self, name: str, args: Any = None, *, parent: Call | None = None) -> Call:
        """Start a call of ``name`` (a child of ``parent`` when one is given)."""
        ...
