"""A check's report: findings, the tool-by-provider verdicts, as text for a terminal or JSON."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

from workbench.check._finding import Finding, Severity
from workbench.declare import TARGETS, Target

if TYPE_CHECKING:
    import pandas as pd


@dataclass
class CheckReport:
    """Every finding of one check, the tool-by-provider verdicts, and the matrix sizes."""

    findings: list[Finding]
    verdicts: pd.DataFrame
    cases: dict[str, int] = field(default_factory=dict)
    targets: tuple[Target, ...] = TARGETS
    dry_runs: int = 0

    def failures(self, fail_on: Severity = "error") -> list[Finding]:
        """The findings that fail the check: not allowed, and as severe as ``fail_on``."""
        counted = {"error"} if fail_on == "error" else {"error", "warning"}
        return [f for f in self.findings if not f.allowed and f.severity in counted]

    def to_json(self, fail_on: Severity = "error") -> dict[str, Any]:
        """The report as JSON-ready data: ``ok``, the verdicts per tool, every finding."""
        return {
            "ok": not self.failures(fail_on),
            "targets": list(self.targets),
            "verdicts": {str(k): v for k, v in self.verdicts.to_dict(orient="index").items()},
            "resilience_cases": self.cases,
            "dry_runs": self.dry_runs,
            "findings": [asdict(f) for f in self.findings],
            "failures": len(self.failures(fail_on)),
        }

    def to_text(self, fail_on: Severity = "error") -> str:
        """The report for a terminal: the verdict table, every finding with its fix, a summary."""
        tools = len(self.verdicts.index)
        lines = [f"workbench check: {tools} tools; targets {', '.join(self.targets)}", ""]
        lines.extend(_table(self.verdicts))
        if self.findings:
            lines += ["", "Findings"]
        for finding in self.findings:
            label = "allowed" if finding.allowed else finding.severity.upper()
            where = (
                finding.section
                if finding.section == "dry-run"
                else f"{finding.section}/{finding.target}"
            )
            lines.append(f"  {label:<8} {finding.tool}  {where}")
            lines.append(f"           {finding.problem}")
            lines.append(f"           fix: {finding.fix}")
        cases = sum(self.cases.values())
        unexpected = sum(
            1 for f in self.findings if f.section == "resilience" and f.severity == "error"
        )
        dry = [f for f in self.findings if f.section == "dry-run"]
        lines += [
            "",
            f"Resilience: {cases} cases over {len(self.cases)} tools, {unexpected} unexpected",
        ]
        lines.append(f"Dry runs: {self.dry_runs} planned, {len(dry)} failed")
        failures = self.failures(fail_on)
        allowed = sum(1 for f in self.findings if f.allowed)
        warnings = sum(1 for f in self.findings if f.severity == "warning" and not f.allowed)
        errors = sum(1 for f in self.findings if f.severity == "error" and not f.allowed)
        verdict = "FAIL" if failures else "OK"
        lines.append(
            f"{verdict}: {errors} errors, {warnings} warnings, {allowed} allowed "
            f"(failing on {fail_on}s)"
        )
        return "\n".join(lines)


def _table(frame: pd.DataFrame) -> list[str]:
    header = ["tool", *map(str, frame.columns)]
    rows = [
        [str(index), *map(str, values)]
        for index, values in zip(frame.index, frame.values, strict=True)
    ]
    widths = [max(len(row[i]) for row in [header, *rows]) for i in range(len(header))]
    return [
        "  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip()
        for row in [header, *rows]
    ]
