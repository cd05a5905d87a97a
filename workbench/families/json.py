"""The json family, the default: results as compact, readable JSON.

Canonical ``result``: the tool's value, unchanged, while its compact JSON fits
``Budgets.json_chars``. A larger value is written once, indented, as the artifact
``result.json`` and the result becomes a bounded preview of that text::

    {"kind": "json", "preview": "<head>\\n[output truncated: ...]\\n<tail>",
     "truncated": true, "chars": 81234, "result_artifact": 0}

(``chars`` is the length of the complete value's compact JSON.) The summary keeps describing the
complete value.

Receipt: a string result verbatim, any other value as one line of JSON with a space after each
separator; a cut result as its preview followed by the line naming the artifact.

Compaction: step 3 drops a cut result's preview for the cut marker (``result_artifact`` holds the
value), step 4 collapses the record to ``tool_name: summary_text`` keeping its handles and
artifact references.
"""

from __future__ import annotations

import json
from typing import Any, ClassVar

from workbench.envelope import Envelope, preview
from workbench.families import _base

_CUT_KEYS = frozenset({"kind", "preview", "truncated", "chars", "result_artifact"})


def is_cut_json(result: Any) -> bool:
    """True for the bounded stand-in of a result too large to inline."""
    return (
        isinstance(result, dict)  # canonical results are plain JSON: a cheap exact check
        and _CUT_KEYS <= set(result) <= _CUT_KEYS | {"result_kept_bytes"}
        and result["kind"] == "json"
        and isinstance(result["preview"], str)
    )


def compact_json(value: Any) -> str:
    """One line of JSON, unicode kept, a space after separators."""
    # The commonest results, written without the encoder (the same text it writes).
    kind = type(value)
    if kind is int:
        return int.__repr__(value)
    if value is None:
        return "null"
    if kind is bool:
        return "true" if value else "false"
    return json.dumps(value, ensure_ascii=False)


class JsonFamily:
    """Any JSON value; rendered as compact JSON (strings verbatim), bounded by an artifact."""

    name: ClassVar[str] = "json"

    def project(self, completed: _base.Completed, budgets: _base.Budgets) -> Envelope:
        envelope = _base.base_envelope(completed)
        warnings = _base.merged_warnings(envelope.warnings, completed.warnings)
        result = envelope.result
        text = compact_json(result)
        if len(text) <= budgets.json_chars or is_cut_json(result):
            if warnings == envelope.warnings:
                return envelope
            return envelope.replace(warnings=warnings)
        full = json.dumps(result, ensure_ascii=False, indent=2)
        index = completed.sink.write("result.json", full)
        cut = {
            "kind": "json",
            "preview": preview(full, budgets.json_chars).text,
            "truncated": True,
            "chars": len(text),
            "result_artifact": index,
        }
        return _base.with_kept(envelope, completed, cut, "result_artifact", warnings)

    def render(self, envelope: Envelope, budgets: _base.Budgets) -> str:
        result = envelope.result
        if is_cut_json(result):
            path = _base.artifact_path(envelope, result["result_artifact"])
            note = _base.artifact_note(
                "result JSON", path, result["chars"], "chars", kept=result.get("result_kept_bytes")
            )
            return _base.finish([result["preview"].rstrip("\n"), note], envelope, budgets)
        if isinstance(result, str):
            return _base.finish([result], envelope, budgets)
        return _base.finish([compact_json(result)], envelope, budgets)

    def compact(self, envelope: Envelope, step: int, budgets: _base.Budgets) -> Envelope | None:
        """Step 3 drops a cut result's preview for the cut marker alone (``result_artifact``
        holds the value); step 4 collapses the record to ``tool_name: summary_text`` keeping
        the result's top-level handles (``id``, ``pid``, ``*_id``, ``*_handle``, ``log_file``)
        and artifact _base.references. A value no artifact holds is only touched by step 4."""
        result = envelope.result
        if step == _base.CompactStep.COLLAPSE_TO_LINE:
            kept = _base.references(result)
            return _base.collapse(envelope, self.name, _base.summary_line(envelope, kept), kept)
        if step != _base.CompactStep.DROP_TO_ARTIFACTS or not is_cut_json(result):
            return None
        backed = _base.artifact_path(envelope, result["result_artifact"]) is not None
        changed = _base.reduce_previews(
            result, [("preview", "truncated", backed)], drop_backed=True
        )
        return None if changed is None else _base.with_result(envelope, changed)
