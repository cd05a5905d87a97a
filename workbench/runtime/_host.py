"""What the runtime needs from the registry that hosts its calls, and nothing more.

The runtime never imports the registry: a ``Registry`` is a ``Host`` by its shape. Naming the
few things a call reads from it (its tools, policy, hooks, limits, history and artifacts) here
keeps the dependency one way, from the registry down to the runtime.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from workbench.declare import Permission, Tool
    from workbench.families import Budgets
    from workbench.history import History
    from workbench.output import ArtifactStore
    from workbench.runtime._call import Call
    from workbench.runtime._faults import Faults
    from workbench.runtime._gate import Approver
    from workbench.runtime._limits import Limit

BeforeHook = Callable[["Call", dict[str, Any]], Any]
AfterHook = Callable[["Call", Any], Any]


class LaneQueue(Protocol):
    """A registry's lanes: worker threads that run bursts of plain ``def`` calls."""

    def run(self, calls: list[Call]) -> None:
        """Queue ``calls`` and make sure a lane serves them."""
        ...

    def withdraw(self, call: Call) -> bool:
        """Take ``call`` out of the queue if no lane took it yet; True if it was there."""
        ...


class Host(Protocol):
    """The registry a call belongs to, as the runtime sees it."""

    history: History
    artifacts: ArtifactStore
    budgets: Budgets
    secrets: Mapping[str, str]
    terminate_grace: float
    approver: Approver | None
    faults: Faults
    before_hooks: list[BeforeHook]
    after_hooks: list[AfterHook]
    limit: Limit

    @property
    def lanes(self) -> LaneQueue: ...

    def get(self, name: str) -> Tool | None: ...

    def names(self) -> list[str]: ...

    def permission(self, name: str) -> Permission: ...

    def serial_limit(self, name: str) -> Limit: ...

    def __contains__(self, name: object) -> bool: ...

    def invoke(self, name: str, args: Any = None, *, parent: Call | None = None) -> Call: ...
