"""Provider dialects: a tool's input schema rewritten into what one provider accepts.

Each converter returns a ``Conversion``: the schema to send and every ``Change`` it had to make on
the way (a keyword moved into a description, a default that became a ``null`` filler, a mapping
the provider cannot declare). ``check_exports`` reports exactly those changes, so the table and
the export never disagree.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

Severity = Literal["error", "warning"]


@dataclass(frozen=True)
class Change:
    """One thing a provider would refuse (``error``) or that the export changed (``warning``)."""

    severity: Severity
    problem: str
    fix: str


@dataclass
class Conversion:
    """A converted schema and what converting it changed; ``refused`` when it cannot be sent
    in the dialect's own terms (the export then falls back, see the dialect's module)."""

    schema: dict[str, Any]
    changes: list[Change] = field(default_factory=list)
    refused: bool = False

    def warn(self, problem: str, fix: str) -> None:
        self.changes.append(Change("warning", problem, fix))

    def refuse(self, problem: str, fix: str) -> None:
        self.changes.append(Change("error", problem, fix))
        self.refused = True


def state_in_description(node: dict[str, Any], facts: Mapping[str, Any]) -> None:
    """Append ``facts`` (keyword → value) to ``node``'s description, so the model still reads a
    rule the provider's schema language cannot carry (the preflight keeps enforcing it)."""
    if not facts:
        return
    said = "; ".join(f"{k}: {json.dumps(v, ensure_ascii=False)}" for k, v in facts.items())
    text = str(node.get("description", "")).rstrip()
    node["description"] = f"{text} ({said})" if text else f"({said})"


def where(path: tuple[str, ...]) -> str:
    """An argument path for people: ``filters.limit``, ``tags[]``, or ``the top level``."""
    return ".".join(path).replace(".[]", "[]") or "the top level"


def listed(names: list[str], limit: int = 6) -> str:
    """Backticked names, the first ``limit`` of them."""
    unique = list(dict.fromkeys(names))
    text = ", ".join(f"`{name}`" for name in unique[:limit])
    return text + (", …" if len(unique) > limit else "")


def one_of_as_any_of(schema: dict[str, Any], path: tuple[str, ...], places: list[str]) -> None:
    """Send ``oneOf`` as ``anyOf`` (neither dialect has ``oneOf``), noting where."""
    one_of = schema.pop("oneOf", None)
    if isinstance(one_of, list):
        schema["anyOf"] = [*schema.get("anyOf", []), *one_of]
        places.append(where(path))


def warn_rewrites(
    result: Conversion,
    moved: Mapping[str, list[str]],
    one_of: list[str],
    *,
    dialect: str,
    in_dialect: str,
    one_of_cost: str = "",
) -> None:
    """The warnings every dialect gives for the keywords it moves into descriptions and for
    the ``oneOf`` it sends as ``anyOf`` (``dialect`` names it, ``in_dialect`` as a phrase)."""
    for keyword, places in moved.items():
        result.warn(
            f"{dialect} has no `{keyword}` (at {', '.join(dict.fromkeys(places))}); it moves "
            "into the description, the preflight still enforces it",
            f"drop `{keyword.split(':')[0]}` if the description says enough",
        )
    if one_of:
        result.warn(
            f"oneOf becomes anyOf {in_dialect} (at {', '.join(one_of)}){one_of_cost}",
            "make the branches exclusive (a Literal tag per branch)",
        )
