"""The CI check of a registry: provider exports, the resilience matrix, and dry runs, as findings.

``check_registry(tools)`` never raises for a tool; it returns a ``CheckReport`` of ``Finding``
rows and a verdict table. A finding is an ``error`` (a provider refuses an export, a model mistake
gets an unexpected outcome from the preflight, a dry run fails) or a ``warning`` (something
changes on the way). An ``AllowList`` marks accepted findings; they are shown, never counted.
``python -m workbench check MODULE:REGISTRY`` is the command line (``workbench.__main__``).
"""

from workbench.check._allow import AllowList, AllowRule, apply_allow_list
from workbench.check._check import (
    check_registry,
    dry_run_findings,
    export_findings,
    load_registry,
)
from workbench.check._expect import expected_outcomes, resilience_findings
from workbench.check._finding import Finding, Section, Severity
from workbench.check._report import CheckReport

__all__ = [
    "AllowList",
    "AllowRule",
    "CheckReport",
    "Finding",
    "Section",
    "Severity",
    "apply_allow_list",
    "check_registry",
    "dry_run_findings",
    "expected_outcomes",
    "export_findings",
    "load_registry",
    "resilience_findings",
]
