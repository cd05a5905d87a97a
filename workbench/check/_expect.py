"""What the preflight should make of each resilience case, and the findings where it did not.

Forgivable mistakes (a number as a string, a JSON-encoded list, a null or empty filler for an
optional argument, a mixed-case enum, arguments wrapped in ``{"properties": ...}``) must be
accepted or coerced; real errors (a wrong type, a missing or null required argument, an unknown
argument of a closed object, a value outside the enum, arguments that are not an object) must be
refused. Cases whose outcome depends on constraints (a 100,000-character string, unicode, a bare
string for a list) may go either way.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Literal

from workbench.check._finding import Finding
from workbench.preflight import Preflight, resolve, split_nullable

if TYPE_CHECKING:
    import pandas as pd

    from workbench.declare import ToolSpec

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
