"""The registry: where tools are declared, exported, checked, invoked, replayed and remembered.

``Registry`` joins the steps: its tools (``workbench.declare``), its runtime
(``workbench.runtime``) and its history (``workbench.history``). ``wb.tool`` and ``wb.invoke``
use a default registry; ``Registry.replay`` runs a recorded call again and diffs the receipts.
"""

from workbench.registry._default import default_registry, invoke, tool
from workbench.registry._registry import Registry
from workbench.registry._replay import Replay

__all__ = [
    "Registry",
    "Replay",
    "default_registry",
    "invoke",
    "tool",
]
