"""The allow-list: findings a project has decided to live with, shown but never counted."""

from __future__ import annotations

import fnmatch
from dataclasses import dataclass, replace
from pathlib import Path

from workbench.check._finding import Finding


@dataclass(frozen=True)
class AllowRule:
    """An accepted difference: ``tool`` and ``target`` are glob patterns, ``text`` a substring
    of the problem (empty matches any)."""

    tool: str
    target: str
    text: str = ""
    line: int = 0

    def matches(self, finding: Finding) -> bool:
        """True when ``finding`` is this rule's: its tool and target match the rule's
        patterns (``fnmatch``, case kept) and its problem holds the rule's text."""
        return (
            fnmatch.fnmatchcase(finding.tool, self.tool)
            and fnmatch.fnmatchcase(finding.target, self.target)
            and self.text in finding.problem
        )


@dataclass(frozen=True)
class AllowList:
    """Accepted findings, one rule a line: ``TOOL TARGET [TEXT]`` (``#`` starts a comment).

    ``TARGET`` is a provider (``openai-strict``), a resilience case (``long_string:command``),
    or ``dry-run``; both it and ``TOOL`` may use ``*`` globs."""

    rules: tuple[AllowRule, ...] = ()

    @classmethod
    def parse(cls, text: str) -> AllowList:
        """The rules of ``text``, one a line; ``ValueError`` naming the line for one that
        does not read ``TOOL TARGET [TEXT]``."""
        rules = []
        for number, raw in enumerate(text.splitlines(), start=1):
            line = raw.split(" #", 1)[0].strip()
            if not line or line.startswith("#"):
                continue
            parts = line.split(None, 2)
            if len(parts) < 2:
                raise ValueError(
                    f"allow-list line {number}: expected TOOL TARGET [TEXT], got {raw.strip()!r}"
                )
            rules.append(AllowRule(parts[0], parts[1], parts[2] if len(parts) > 2 else "", number))
        return cls(tuple(rules))

    @classmethod
    def read(cls, path: str | Path) -> AllowList:
        """The rules of the file at ``path`` (UTF-8), as ``parse`` reads them."""
        return cls.parse(Path(path).read_text(encoding="utf-8"))


def apply_allow_list(findings: list[Finding], allow: AllowList) -> list[Finding]:
    """``findings`` with the allowed ones marked, plus a warning per rule that matched none."""
    used: set[AllowRule] = set()
    out = []
    for finding in findings:
        rule = next((r for r in allow.rules if r.matches(finding)), None)
        if rule is not None:
            used.add(rule)
            finding = replace(finding, allowed=True)
        out.append(finding)
    for rule in allow.rules:
        if rule not in used:
            text = f" {rule.text}" if rule.text else ""
            out.append(
                Finding(
                    rule.tool,
                    "allow-list",
                    rule.target,
                    "warning",
                    f"allow-list line {rule.line} ({rule.tool} {rule.target}{text}) matched "
                    "nothing",
                    "remove the line: the difference it accepted is gone",
                )
            )
    return out
