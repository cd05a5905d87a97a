"""One row of a check report."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Section = Literal["export", "resilience", "dry-run", "allow-list"]
Severity = Literal["error", "warning"]


@dataclass(frozen=True)
class Finding:
    """One row of the report: which tool, which part of the check, what and how to fix it.

    ``target`` is the provider for ``export`` findings, the case name for ``resilience`` ones,
    and ``dry-run`` for dry runs."""

    tool: str
    section: Section
    target: str
    severity: Severity
    problem: str
    fix: str
    allowed: bool = False
