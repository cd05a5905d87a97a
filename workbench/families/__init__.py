"""Tool families: one module per family, each owning projection, rendering and compaction.

A tool names its family (``@tools.tool(family="command")``) or gets ``json``. Failures of any
tool belong to the failure family. ``family_of`` recovers the family from a canonical envelope
alone, so receipts and compaction never need the tool that produced it:

- an error → ``failure``
- ``result.kind`` is ``"command"``, ``"listing"`` or ``"file"`` (with that family's fields) →
  that family
- ``result.kind`` is ``"compacted"`` (an old success collapsed by ``wb.compact``) → ``compacted``
- ``{"text": "..."}`` (no ``kind``) → ``text``
- anything else → ``json``
"""

from workbench.families._base import (
    DEFAULT_BUDGETS,
    Budgets,
    CompactStep,
    Completed,
    CompleteOutput,
    Family,
    artifact_note,
    artifact_path,
    ends_preview,
    merged_warnings,
    stream_preview,
)
from workbench.families._compaction import Compaction, compact
from workbench.families._diff import (
    ReceiptDiff,
    canonical_text,
    comparable,
    compare_receipts,
    diff_html,
    diff_texts,
    rendering_of,
)
from workbench.families._table import (
    FAMILIES,
    KEEPS_VALUE,
    family_name_of_record,
    family_name_of_result,
    family_of,
    get_family,
    project,
    render,
)
from workbench.families._views import envelope_static_html
from workbench.families.command import CommandOutput, JobStatus
from workbench.families.failure import attach_output, fallback_receipt
from workbench.families.listing import CompleteListing

__all__ = [
    "DEFAULT_BUDGETS",
    "FAMILIES",
    "KEEPS_VALUE",
    "Budgets",
    "CommandOutput",
    "CompactStep",
    "Compaction",
    "CompleteListing",
    "CompleteOutput",
    "Completed",
    "Family",
    "JobStatus",
    "ReceiptDiff",
    "artifact_note",
    "artifact_path",
    "attach_output",
    "canonical_text",
    "compact",
    "comparable",
    "compare_receipts",
    "diff_html",
    "diff_texts",
    "ends_preview",
    "envelope_static_html",
    "fallback_receipt",
    "family_name_of_record",
    "family_name_of_result",
    "family_of",
    "get_family",
    "merged_warnings",
    "project",
    "render",
    "rendering_of",
    "stream_preview",
]
