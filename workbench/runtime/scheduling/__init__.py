"""Who runs a call, and when: the ``Scheduler`` (it starts calls nobody waited for, watches the
calls run inline for their time budget and grace, and the lanes for stalls) and beneath it,
side by side, the drivers: the runtime loop, the waiting thread, the lanes and the awaiting
loop; ``_dispatch`` wires them and is what a ``Call`` and the registry start calls through."""

from workbench.runtime.scheduling._dispatch import DRIVERS, launch, launch_many, limits_for

__all__ = [
    "DRIVERS",
    "launch",
    "launch_many",
    "limits_for",
]
