"""The CI check of a registry: provider exports, the resilience matrix, and dry runs, as findings.

``check_registry(tools)`` never raises for a tool; it returns a ``CheckReport`` of ``Finding``
rows and a verdict table. A finding is an ``error`` (a provider refuses an export, a model mistake
gets an unexpected outcome from the preflight, a dry run fails) or a ``warning`` (something
changes on the way). An ``AllowList`` marks accepted findings; they are shown, never counted.

What the resilience matrix is expected to do, per case (``expected_outcomes``): forgivable
mistakes (a number as a string, a JSON-encoded list, a null or empty filler for an optional
argument, a mixed-case enum, arguments wrapped in ``{"properties": ...}``) are accepted or
coerced; real errors (a wrong type, a missing or null required argument, an unknown argument of
a closed object, a value outside the enum, arguments that are not an object) are refused. Cases
whose outcome depends on constraints (a 100,000-character string, unicode, a bare string for a
list) may go either way.
"""

from __future__ import annotations

import copy
import fnmatch
import importlib
import json
import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from workbench._exports import TARGETS, Target, check_exports, dialect_verdicts
from workbench._json_schema import resolve, split_nullable
from workbench._preflight import Preflight
from workbench._registry import Registry
from workbench._resilience import baseline_arguments

if TYPE_CHECKING:
    import pandas as pd

    from workbench._spec import ToolSpec

Section = Literal["export", "resilience", "dry-run", "allow-list"]
Severity = Literal["error", "warning"]
Outcome = Literal["accepted", "coerced", "refused"]
ANY: frozenset[Outcome] = frozenset({"accepted", "coerced", "refused"})
FORGIVEN: frozenset[Outcome] = frozenset({"accepted", "coerced"})
REFUSED: frozenset[Outcome] = frozenset({"refused"})

_FORGIVABLE = frozenset(
    {
        "json_string_arguments",
        "wrapped_properties",
        "string_integer",
        "string_number",
        "string_boolean",
        "word_boolean",
        "json_array",
        "json_object",
        "mixed_case_enum",
        "empty_filler",
        "null_optional",
    }
)
_ERRORS = frozenset(
    {
        "malformed_json_arguments",
        "non_object_arguments",
        "missing",
        "null_required",
        "wrong_type",
        "not_in_enum",
    }
)
DRY_RUN_TIMEOUT_S = 30.0


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


@dataclass(frozen=True)
class AllowRule:
    """An accepted difference: ``tool`` and ``target`` are glob patterns, ``text`` a substring
    of the problem (empty matches any)."""

    tool: str
    target: str
    text: str = ""
    line: int = 0

    def matches(self, finding: Finding) -> bool:
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
        return cls.parse(Path(path).read_text(encoding="utf-8"))


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
            where = finding.section if finding.section == "dry-run" else f"{finding.section}/"
            where = where if finding.section == "dry-run" else where + finding.target
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


# --- running the check --------------------------------------------------------------------------


def load_registry(spec: str) -> Registry:
    """The registry that ``"module:attribute"`` names (calling it when it is a factory)."""
    module_name, _, attribute = spec.partition(":")
    if not module_name or not attribute:
        raise ValueError(
            f"expected MODULE:REGISTRY, such as workbench.mcp.demo:registry, not {spec!r}"
        )
    if "" not in sys.path:
        sys.path.insert(0, "")
    target: object = importlib.import_module(module_name)
    for part in attribute.split("."):
        target = getattr(target, part)
    if not isinstance(target, Registry) and callable(target):
        target = target()
    if not isinstance(target, Registry):
        raise TypeError(f"{spec} is a {type(target).__name__}, not a workbench Registry")
    return target


def check_registry(
    tools: Registry,
    *,
    targets: Sequence[Target] = TARGETS,
    names: Iterable[str] | None = None,
    allow: AllowList | None = None,
    resilience: bool = True,
    dry_runs: bool = True,
) -> CheckReport:
    """Check ``names`` (default: every tool) for ``targets``; see the module docstring."""
    chosen = list(names) if names is not None else tools.names()
    unknown = [name for name in chosen if name not in tools]
    if unknown:
        raise KeyError(
            f"no tool named {', '.join(unknown)}; registered: {', '.join(tools.names())}"
        )
    specs = [tools.spec(name) for name in chosen]
    findings = list(export_findings(specs, targets))
    cases: dict[str, int] = {}
    planned = 0
    for name in chosen:
        try:
            if resilience:
                matrix = tools.resilience(name)
                cases[name] = len(matrix)
                tool = tools[name]
                findings.extend(resilience_findings(tool.spec, matrix, tool.preflight))
            if dry_runs:
                findings.extend(dry_run_findings(tools, name))
                planned += 1
        except Exception as exc:  # one tool that cannot be checked is a finding, not a crash
            findings.append(
                Finding(
                    name,
                    "resilience" if resilience else "dry-run",
                    "check",
                    "error",
                    f"could not be checked ({type(exc).__name__}: {exc})",
                    "report this as a workbench bug, with the tool's schema",
                )
            )
    findings = list(dict.fromkeys(findings))  # a matrix may hold one case twice
    if allow is not None:
        findings = apply_allow_list(findings, allow)
    verdicts = dialect_verdicts(specs, targets)
    return CheckReport(findings, verdicts, cases, tuple(targets), planned)


def export_findings(specs: Sequence[ToolSpec], targets: Sequence[Target]) -> list[Finding]:
    frame = check_exports(specs, targets)
    return [
        Finding(row.tool, "export", row.target, row.severity, row.problem, row.fix)
        for row in frame.itertuples(index=False)
    ]


def resilience_findings(
    spec: ToolSpec, matrix: pd.DataFrame, preflight: Preflight | None = None
) -> list[Finding]:
    """A finding for every case whose outcome the preflight should not have given.

    With ``preflight``, a JSON-encoded list or object that was refused is first sent decoded:
    when that is refused too, the generated value itself was invalid and the case proves
    nothing about the preflight."""
    rows = list(matrix.itertuples(index=False))
    baseline = next((row for row in rows if row.case == "baseline"), None)
    if baseline is not None and baseline.outcome == "refused":
        return [
            Finding(
                spec.name,
                "resilience",
                "baseline",
                "warning",
                f"the generated valid call was refused ({baseline.message}), so the mistakes "
                "built on it prove nothing",
                "give the parameter an example the schema accepts (Field(examples=[...]))",
            )
        ]
    findings = []
    for row in rows:
        expected = expected_outcomes(row.case, spec.input_schema)
        if row.outcome in expected or _invalid_anyway(row, preflight):
            continue
        wanted = " or ".join(sorted(expected))
        detail = f": {row.message}" if row.message else ""
        findings.append(
            Finding(
                spec.name,
                "resilience",
                row.case,
                "error",
                f"case `{row.case}` was {row.outcome}, expected {wanted}{detail}",
                _fix_for(row.case, row.outcome),
            )
        )
    return findings


def _invalid_anyway(row: Any, preflight: Preflight | None) -> bool:
    rule, _, label = str(row.case).partition(":")
    if preflight is None or rule not in ("json_array", "json_object") or row.outcome != "refused":
        return False
    decoded = copy.deepcopy(row.input)
    node = decoded
    parts = label.split(".")
    for part in parts[:-1]:
        node = node.get(part) if isinstance(node, dict) else None
    if not isinstance(node, dict) or not isinstance(node.get(parts[-1]), str):
        return False
    node[parts[-1]] = json.loads(node[parts[-1]])
    return not preflight(decoded).ok


def expected_outcomes(case: str, schema: Mapping[str, Any]) -> frozenset[Outcome]:
    """What the preflight should make of resilience case ``case`` for ``schema``."""
    rule, _, label = case.partition(":")
    if rule == "baseline":
        return FORGIVEN
    if rule == "null_arguments":
        required = resolve(schema, schema).get("required")
        return REFUSED if isinstance(required, list) and required else FORGIVEN
    if rule == "unknown_key":
        node = _object_at(schema, label)
        return REFUSED if node is not None and node.get("additionalProperties") is False else ANY
    if rule in _FORGIVABLE:
        return FORGIVEN
    if rule in _ERRORS:
        return REFUSED
    return ANY


def _object_at(schema: Mapping[str, Any], label: str) -> Mapping[str, Any] | None:
    node: Mapping[str, Any] = resolve(schema, schema)
    for name in [part for part in label.split(".") if part]:
        properties = node.get("properties")
        sub = properties.get(name) if isinstance(properties, Mapping) else None
        if not isinstance(sub, Mapping):
            return None
        node, _ = split_nullable(sub, schema)
    return node


def _fix_for(case: str, outcome: str) -> str:
    if outcome == "refused":
        return (
            "the preflight should forgive this mistake; check the parameter's schema (a type "
            "the preflight can coerce to), or allow-list the case"
        )
    return (
        "the schema accepts a value it should refuse; tighten the parameter's type (enum, "
        "additionalProperties: false, required), or allow-list the case"
    )


def dry_run_findings(tools: Registry, name: str) -> list[Finding]:
    """A dry run with the generated valid arguments must plan without an error."""
    arguments = baseline_arguments(tools.spec(name).input_schema)
    if not tools.preflight(name, arguments).ok:
        return []  # reported as the resilience baseline; a dry run would only repeat it
    call = tools.invoke(name, arguments, dry_run=True)
    try:
        envelope = call.wait(timeout=DRY_RUN_TIMEOUT_S)
    except TimeoutError:
        call.terminate()
        return [
            Finding(
                name,
                "dry-run",
                "dry-run",
                "error",
                f"the dry run did not finish within {DRY_RUN_TIMEOUT_S:g} s",
                "a planner must not block; return the plan without doing the work",
            )
        ]
    if envelope.status == "success":
        return []
    error = envelope.error
    kind = error.kind if error is not None else "error"
    message = error.message if error is not None else envelope.summary_text
    return [
        Finding(
            name,
            "dry-run",
            "dry-run",
            "error",
            f"the dry run with {json.dumps(arguments, ensure_ascii=False)[:120]} failed: "
            f"{kind}: {message}",
            "make the tool's planner (dry_run) side-effect free and able to plan valid arguments",
        )
    ]


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
