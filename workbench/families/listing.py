"""The listing family: a directory's entries, each with a path the model can copy.

Canonical ``result``::

    {"kind": "listing", "path": "src", "entries": [
        {"name": "pkg", "path": "src/pkg", "type": "directory"},
        {"name": "main.py", "path": "src/main.py", "type": "file"}],
     "entry_count": 2, "truncated": false}

``entry_count`` is the number of entries in the directory; past the limit (the tool's, else
``Budgets.listing_limit``) only the first ``limit`` entries are kept, ``truncated`` is true and,
when the complete listing is known, it is written once as the artifact ``listing.txt`` (one
copyable path per line) referenced by ``entries_artifact``.

Receipt: ``N entries in <path>``, then one path per line, directories marked with a trailing
``/``, no tree drawing; a cut listing ends with a line saying how many are missing and where
the complete listing is.

Compaction: step 1 collapses an old listing to the line ``N entries in <path>`` (a
``compacted`` record keeping ``path``, ``entry_count`` and ``entries_artifact``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from workbench.envelope import Envelope, listing
from workbench.families import _base
from workbench.families.json import JsonFamily


@dataclass(frozen=True)
class CompleteListing(_base.CompleteOutput):
    """Every entry of a directory, in display order; ``limit`` overrides the budgets's."""

    family: ClassVar[str] = "listing"

    path: str
    entries: Sequence[Mapping[str, Any]]
    limit: int | None = None


def is_listing_result(result: Any) -> bool:
    """True for a listing result (``kind: "listing"``)."""
    return (
        _base.has_kind(result, "listing")
        and isinstance(result.get("path"), str)
        and isinstance(result.get("entries"), list)
        and all(isinstance(entry, Mapping) and "path" in entry for entry in result["entries"])
    )


def entry_line(entry: Mapping[str, Any]) -> str:
    """One entry as the model copies it: its path, ``/`` after a directory."""
    path = str(entry["path"])
    return f"{path}/" if entry.get("type") == "directory" and not path.endswith("/") else path


class ListingFamily:
    """Directory listings; rendered as copyable paths, one per line."""

    name: ClassVar[str] = "listing"

    def project(self, completed: _base.Completed, budgets: _base.Budgets) -> Envelope:
        value = completed.value
        if isinstance(value, CompleteListing):
            envelope = listing(value.path, value.entries, tool=completed.tool_name)
            total = _base.count(len(value.entries), "entry", "entries")
            envelope = envelope.replace(summary_text=f"{total} in {value.path}")
            limit = value.limit if value.limit is not None else budgets.listing_limit
        else:
            envelope = _base.base_envelope(completed)
            limit = budgets.listing_limit
        if not is_listing_result(envelope.result):
            return JsonFamily().project(completed, budgets)
        warnings = _base.merged_warnings(envelope.warnings, completed.warnings)
        result = dict(envelope.result)
        entries: list[dict[str, Any]] = result["entries"]
        if len(entries) <= limit:
            return envelope.replace(warnings=warnings)
        text = "".join(f"{entry_line(entry)}\n" for entry in entries)
        result.update(
            entries=entries[: max(0, limit)],
            entry_count=max(len(entries), int(result.get("entry_count") or 0)),
            truncated=True,
            entries_artifact=completed.sink.write("listing.txt", text),
        )
        return _base.with_kept(envelope, completed, result, "entries_artifact", warnings)

    def render(self, envelope: Envelope, budgets: _base.Budgets) -> str:
        result = envelope.result
        entries = result["entries"]
        total = result.get("entry_count", len(entries))
        total = total if isinstance(total, int) else len(entries)
        header = f"{_base.count(total, 'entry', 'entries')} in {result['path']}"
        if result.get("truncated") and total > len(entries):
            header += f" (showing the first {len(entries)})"
        lines = [header, *(entry_line(entry) for entry in entries)]
        if result.get("truncated"):
            path = _base.artifact_path(envelope, result.get("entries_artifact"))
            if path is not None:
                lines.append(
                    _base.artifact_note(
                        "listing", path, total, "entries", result.get("entries_kept_bytes")
                    )
                )
            else:
                missing = max(0, total - len(entries))
                lines.append(
                    f"[listing truncated: {_base.count(missing, 'more entry', 'more entries')}]"
                )
        return _base.finish(lines, envelope, budgets)

    def compact(self, envelope: Envelope, step: int, budgets: _base.Budgets) -> Envelope | None:
        """Step 1 collapses an old listing to ``<N> entries in <path>``, keeping
        ``path``, ``entry_count`` and ``entries_artifact``; no other step applies. An empty
        listing without warnings already reads that way and is left alone."""
        if step != _base.CompactStep.COLLAPSE_LISTINGS:
            return None
        result = envelope.result
        if not result["entries"] and not envelope.warnings:
            return None
        total = result.get("entry_count")
        total = total if isinstance(total, int) and not isinstance(total, bool) else None
        total = len(result["entries"]) if total is None else total
        line = f"{_base.count(total, 'entry', 'entries')} in {result['path']}"
        kept = {"path": result["path"], "entry_count": total, **_base.references(result)}
        return _base.collapse(envelope, self.name, line, kept)
