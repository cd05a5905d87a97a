"""The text family: a result that is one human-readable string (``wb.success(text=...)``).

Canonical ``result``: ``{"text": "..."}``. Text longer than ``Budgets.text_chars`` is written once
as the artifact ``text.txt`` and replaced by a head-and-tail preview::

    {"text": "<head>\\n[output truncated: ...]\\n<tail>", "truncated": true,
     "chars": 123456, "text_artifact": 0}

Receipt: the text verbatim; a cut text is followed by the line naming its artifact. A tool of
this family that returns a plain string gets it wrapped; any other value is projected as json.

An optional ``structured`` value rides along (a connected MCP tool's structured content): it is
part of the record, kept when the text is cut, and never part of the receipt.

Compaction: step 3 drops a cut text for the cut marker (``text_artifact`` holds it), step 4
collapses the record to ``tool_name: summary_text`` keeping ``text_artifact``.
"""

from __future__ import annotations

from typing import Any, ClassVar

from workbench.envelope import TEXT_RESULT_KEYS, Envelope, preview
from workbench.families import _base
from workbench.families.json import JsonFamily

_KEYS = TEXT_RESULT_KEYS | {"structured"}


def is_text_result(result: Any) -> bool:
    """True for ``{"text": str}`` (and its cut form): the text family's result."""
    return (
        isinstance(result, dict)  # canonical results are plain JSON: a cheap exact check
        and isinstance(result.get("text"), str)
        and "kind" not in result
        and set(result) <= _KEYS
    )


class TextFamily:
    """One string, rendered verbatim."""

    name: ClassVar[str] = "text"

    def project(self, completed: _base.Completed, budgets: _base.Budgets) -> Envelope:
        envelope = _base.base_envelope(completed)
        result = envelope.result
        if isinstance(result, str):
            result = {"text": result}
        if not is_text_result(result):
            return JsonFamily().project(completed, budgets)
        warnings = _base.merged_warnings(envelope.warnings, completed.warnings)
        text: str = result["text"]
        if len(text) > budgets.text_chars and not result.get("truncated"):
            index = completed.sink.write("text.txt", text)
            cut = {
                "text": preview(text, budgets.text_chars).text,
                "truncated": True,
                "chars": len(text),
                "text_artifact": index,
            }
            if "structured" in result:
                cut["structured"] = result["structured"]
            return _base.with_kept(envelope, completed, cut, "text_artifact", warnings)
        return envelope.replace(result=result, warnings=warnings)

    def render(self, envelope: Envelope, budgets: _base.Budgets) -> str:
        result = envelope.result
        text: str = result["text"]
        if result.get("truncated"):
            path = _base.artifact_path(envelope, result.get("text_artifact"))
            note = _base.artifact_note(
                "text", path, result.get("chars"), "chars", kept=result.get("text_kept_bytes")
            )
            return _base.finish([text.rstrip("\n"), note], envelope, budgets)
        return _base.finish([text], envelope, budgets)

    def compact(self, envelope: Envelope, step: int, budgets: _base.Budgets) -> Envelope | None:
        """Step 3 drops a cut text whose ``text_artifact`` holds it for the cut marker alone;
        step 4 collapses the record to ``tool_name: summary_text`` keeping ``text_artifact``.
        A text no artifact holds is the tool's answer, not a preview: only step 4 touches it."""
        result = envelope.result
        if step == _base.CompactStep.COLLAPSE_TO_LINE:
            kept = _base.references(result)
            return _base.collapse(envelope, self.name, _base.summary_line(envelope, kept), kept)
        if step != _base.CompactStep.DROP_TO_ARTIFACTS:
            return None
        backed = _base.artifact_path(envelope, result.get("text_artifact")) is not None
        changed = _base.reduce_previews(result, [("text", "truncated", backed)], drop_backed=True)
        return None if changed is None else _base.with_result(envelope, changed)
