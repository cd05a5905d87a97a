"""What a registry's calls run under, as the runtime reads it: the ``Policy`` (permissions, the
approver, hooks, injected faults), the ``Limits`` (slots, a serial tool's turn, the lanes), and
the ``Host``, what a call needs of the registry it belongs to."""

from workbench.runtime.policy._faults import Fault, Faults
from workbench.runtime.policy._host import Host
from workbench.runtime.policy._limits import LaneQueue, Limit, Limits
from workbench.runtime.policy._policy import AfterHook, BeforeHook, Policy

__all__ = [
    "AfterHook",
    "BeforeHook",
    "Fault",
    "Faults",
    "Host",
    "LaneQueue",
    "Limit",
    "Limits",
    "Policy",
]
