"""``assert_resilient``: the resilience matrix of one tool as a test assertion."""

from __future__ import annotations

import fnmatch
from collections.abc import Iterable
from typing import TYPE_CHECKING

from workbench.check import resilience_findings
from workbench.registry import Registry

if TYPE_CHECKING:
    import pandas as pd


class NotResilient(AssertionError):
    """The preflight gave an unexpected outcome for at least one model mistake."""


def assert_resilient(tools: Registry, name: str, *, allow: Iterable[str] = ()) -> pd.DataFrame:
    """Fail, naming every case, when the preflight of ``name`` refuses a mistake it should
    forgive or accepts one it should refuse (the expectations of ``workbench check``).

    ``allow`` holds case names or globs (``"long_string:*"``) whose outcome does not matter.
    Returns the matrix, for further assertions."""
    __tracebackhide__ = True
    tool = tools[name]
    matrix = tools.resilience(name)
    patterns = list(allow)
    findings = [
        finding
        for finding in dict.fromkeys(resilience_findings(tool.spec, matrix, tool.preflight))
        if not any(fnmatch.fnmatchcase(finding.target, pattern) for pattern in patterns)
    ]
    if findings:
        lines = [f"{name}: {len(findings)} of {len(matrix)} resilience cases went wrong"]
        for finding in findings:
            lines.append(f"  - {finding.problem}")
            lines.append(f"    fix: {finding.fix}")
        raise NotResilient("\n".join(lines))
    return matrix
