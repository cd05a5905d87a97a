"""Checking a registry: its exports, its resilience and a dry run of every tool, as findings."""

from __future__ import annotations

import importlib
import json
import sys
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

from workbench.check._allow import AllowList, apply_allow_list
from workbench.check._expect import resilience_findings
from workbench.check._finding import Finding
from workbench.check._report import CheckReport
from workbench.declare import TARGETS, Target, check_exports, dialect_verdicts
from workbench.preflight import baseline_arguments
from workbench.registry import Registry

if TYPE_CHECKING:
    from workbench.declare import ToolSpec


DRY_RUN_TIMEOUT_S = 30.0


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
    """What exporting each spec to each target finds, one ``Finding`` per problem (none for
    a tool every target takes as it is)."""
    frame = check_exports(specs, targets)
    return [
        Finding(row.tool, "export", row.target, row.severity, row.problem, row.fix)
        for row in frame.itertuples(index=False)
    ]


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
        return _dry_run_failed(
            name,
            f"the dry run did not finish within {DRY_RUN_TIMEOUT_S:g} s",
            "a planner must not block; return the plan without doing the work",
        )
    if envelope.status == "success":
        return []
    error = envelope.error
    kind = error.kind if error is not None else "error"
    message = error.message if error is not None else envelope.summary_text
    return _dry_run_failed(
        name,
        f"the dry run with {json.dumps(arguments, ensure_ascii=False)[:120]} failed: "
        f"{kind}: {message}",
        "make the tool's planner (dry_run) side-effect free and able to plan valid arguments",
    )


def _dry_run_failed(name: str, problem: str, hint: str) -> list[Finding]:
    return [Finding(name, "dry-run", "dry-run", "error", problem, hint)]
