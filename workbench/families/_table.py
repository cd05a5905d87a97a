"""The table of families, and the dispatch through it: which family projects, renders and
compacts an envelope, read from the canonical record alone."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from workbench.envelope import Envelope, escape_surrogates
from workbench.families._base import (
    DEFAULT_BUDGETS,
    Budgets,
    Completed,
    CompleteOutput,
    Family,
    merged_warnings,
)
from workbench.families.command import CommandFamily, is_command_result
from workbench.families.compacted import CompactedFamily, is_compacted_result
from workbench.families.failure import (
    FailureFamily,
    short_artifacts,
)
from workbench.families.file import FileFamily, is_file_result
from workbench.families.json import JsonFamily
from workbench.families.listing import ListingFamily, is_listing_result
from workbench.families.text import TextFamily, is_text_result

FAMILIES: dict[str, Family] = {
    family.name: family
    for family in (
        JsonFamily(),
        TextFamily(),
        CommandFamily(),
        ListingFamily(),
        FileFamily(),
        FailureFamily(),
        CompactedFamily(),
    )
}


def get_family(name: str) -> Family:
    """The family registered under ``name``; ``KeyError`` naming the known ones otherwise."""
    try:
        return FAMILIES[name]
    except KeyError:
        raise KeyError(f"unknown family {name!r}; known: {', '.join(sorted(FAMILIES))}") from None


_BY_KIND: dict[str, Callable[[Any], bool]] = {
    "compacted": is_compacted_result,
    "command": is_command_result,
    "listing": is_listing_result,
    "file": is_file_result,
}
"""The families whose results say ``kind`` (each family's own name), with the check of the
rest of such a result."""


def family_name_of_result(result: Any) -> str:
    """The family a successful ``result`` belongs to, from its discriminators alone."""
    if not isinstance(result, dict):
        return "json"  # every other family's result is an object: decided in one check
    kind = result.get("kind")
    if kind is None:
        return "text" if is_text_result(result) else "json"
    check = _BY_KIND.get(kind) if isinstance(kind, str) else None
    return kind if check is not None and check(result) else "json"


def family_of(envelope: Envelope) -> Family:
    """The family that renders and compacts ``envelope``, read from its canonical record."""
    if envelope.error is not None:
        return FAMILIES["failure"]
    return FAMILIES[family_name_of_result(envelope.result)]


def family_name_of_record(canonical: Mapping[str, Any]) -> str:
    """``family_of(envelope).name``, read from the envelope's canonical record alone.

    Examples:
        >>> family_name_of_record({"result": {"content": "hi"}, "error": None})
        'json'
        >>> family_name_of_record({"result": None, "error": {"kind": "not_found"}})
        'failure'
    """
    if canonical.get("error") is not None:
        return "failure"
    return family_name_of_result(canonical.get("result"))


KEEPS_VALUE: tuple[str, ...] = ("json", "text")
"""The families whose canonical result is the tool's own value (the others reshape it: a
command's output, a listing, a file), so only their tools can advertise an output schema."""


def project(family: str, completed: Completed, budgets: Budgets = DEFAULT_BUDGETS) -> Envelope:
    """Complete output → canonical envelope, through the named family.

    The value itself may decide: failures go through the failure family whatever the tool's
    family, a typed complete output (``CommandOutput``, ``CompleteListing``) through its own,
    and an envelope or mapping whose result carries a family's discriminator (a ``wb.listing``
    returned by a json tool) through that family.
    """
    envelope = _project(family, completed, budgets)
    short = short_artifacts(completed.sink)
    if short or len(completed.sink) > len(envelope.artifacts):
        # Every file the call wrote is listed, and every short one is named.
        envelope = envelope.replace(
            artifacts=completed.sink.refs, warnings=merged_warnings(envelope.warnings, short)
        )
    return envelope


def _project(family: str, completed: Completed, budgets: Budgets) -> Envelope:
    value = completed.value
    if isinstance(value, Envelope) and value.error is not None:
        return FAMILIES["failure"].project(completed, budgets)
    if isinstance(value, CompleteOutput):
        return get_family(value.family).project(completed, budgets)
    result = value.result if isinstance(value, Envelope) else value
    recognised = family_name_of_result(result)
    if recognised not in ("json", "text"):
        return FAMILIES[recognised].project(completed, budgets)
    return get_family(family).project(completed, budgets)


def render(envelope: Envelope, budgets: Budgets = DEFAULT_BUDGETS) -> str:
    """The receipt a model reads for ``envelope``; always valid UTF-8 (lone surrogates are
    written as ``\\udXXX`` text)."""
    return escape_surrogates(family_of(envelope).render(envelope, budgets))
