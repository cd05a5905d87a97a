"""What a registry's calls are let through: who may run without asking, who decides before a
person does, the hooks around every body, and the faults a trainer injected.

A ``Policy`` is what the runtime reads of these; the registry holds one and its public methods
(``set_permission``, ``before_tool``, ``after_tool``, ``inject_fault``) change it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from workbench.runtime._faults import Faults

if TYPE_CHECKING:
    from workbench.declare import Permission, Tool
    from workbench.runtime._call import Call
    from workbench.runtime._gate import Approver

BeforeHook = Callable[["Call", dict[str, Any]], Any]
AfterHook = Callable[["Call", Any], Any]

POLICIES = ("always_allow", "always_ask", "always_deny")


class Policy:
    """The permissions, approver, hooks and faults of one registry's calls."""

    def __init__(self, tools: Callable[[str], Tool | None], approver: Approver | None) -> None:
        self._tools = tools
        self.approver = approver
        """Decides ``always_ask`` calls before a person does (None: a person decides)."""
        self.faults = Faults()
        self.before: list[BeforeHook] = []
        """Run before every call's body, after preflight (see ``Registry.before_tool``)."""
        self.after: list[AfterHook] = []
        """Run on every call's envelope (see ``Registry.after_tool``)."""
        self._overrides: dict[str, Permission] = {}

    def permission(self, name: str) -> Permission:
        """The permission that applies to a tool now: a run-time override, else its own."""
        override = self._overrides.get(name)
        if override is not None:
            return override
        tool = self._tools(name)
        return "always_allow" if tool is None else tool.spec.permission

    def set_permission(self, name: str, policy: Permission | None) -> None:
        """Override a tool's permission ("always_allow", "always_ask", "always_deny"); None
        goes back to the tool's own. Raises ``ValueError`` for any other value."""
        if policy is None:
            self._overrides.pop(name, None)
        elif policy not in POLICIES:
            raise ValueError(f"permission must be one of {', '.join(POLICIES)}, not {policy!r}")
        else:
            self._overrides[name] = policy

    @property
    def hooked(self) -> bool:
        """True when any hook runs around the bodies (a call then needs the runtime loop)."""
        return bool(self.before or self.after)
