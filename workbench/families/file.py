"""The file family: the text of a file, or of a line or byte range of it (``kind: "file"``).

Canonical ``result``::

    {"kind": "file", "path": "src/main.py", "text": "...", "start_line": 1, "end_line": 3,
     "selected_lines": 3, "total_lines": 3, "bytes": 52, "truncated": false}

``bytes`` is the size of the whole file; a byte-range read adds ``start_byte`` and ``end_byte``
(0-based, end exclusive). ``truncated`` means ``text`` does not hold the selected lines in full: it
is a head-and-tail preview with the cut marker. The complete text is kept on disk already when
the tool read a file; a tool that returned a too-long ``text`` itself gets it written once as
the artifact ``file.txt`` (``text_artifact``).

Receipt: a header line (``src/main.py (lines 1-3 of 3)``), then the text verbatim; a cut text
ends with a line saying how to read the rest.

Compaction: step 2 cuts the text to a short head and tail, step 3 drops it for the cut marker
(the file and ``text_artifact`` still hold it), step 4 collapses the record to ``tool_name:
summary_text`` keeping ``path`` and ``text_artifact``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from workbench.envelope import Envelope, preview
from workbench.families import _base
from workbench.families.json import JsonFamily

_INTS = ("start_line", "end_line", "total_lines")


def is_file_result(result: Any) -> bool:
    """True for a ``kind: "file"`` result."""
    return (
        _base.has_kind(result, "file")
        and isinstance(result.get("text"), str)
        and isinstance(result.get("path"), str)
        and all(isinstance(result.get(name), int) for name in _INTS)
    )


def header(result: Mapping[str, Any]) -> str:
    """``path (lines a-b of n)``, or the byte range of a byte read."""
    path, total = result["path"], result["total_lines"]
    if isinstance(result.get("start_byte"), int) and isinstance(result.get("end_byte"), int):
        return f"{path} (bytes {result['start_byte']}-{result['end_byte']} of {result['bytes']})"
    if total == 0:
        return f"{path} (empty file)"
    if result.get("selected_lines", 0) == 0:
        return f"{path} (no lines selected of {total})"
    return f"{path} (lines {result['start_line']}-{result['end_line']} of {total})"


class FileFamily:
    """File contents; rendered as a header line and the text."""

    name: ClassVar[str] = "file"

    def project(self, completed: _base.Completed, budgets: _base.Budgets) -> Envelope:
        envelope = _base.base_envelope(completed)
        if not is_file_result(envelope.result):
            return JsonFamily().project(completed, budgets)
        warnings = _base.merged_warnings(envelope.warnings, completed.warnings)
        result = dict(envelope.result)
        text: str = result["text"]
        if len(text) <= budgets.file_chars:
            return envelope.replace(warnings=warnings)
        cut = preview(text, budgets.file_chars)
        result.update(text=cut.text, truncated=True)
        if envelope.result.get("truncated"):  # cut already, by the tool: nothing more to keep
            return envelope.replace(result=result, artifacts=completed.sink.refs, warnings=warnings)
        result["text_artifact"] = completed.sink.write("file.txt", text)
        result["chars"] = len(text)
        return _base.with_kept(envelope, completed, result, "text_artifact", warnings)

    def render(self, envelope: Envelope, budgets: _base.Budgets) -> str:
        result = envelope.result
        text: str = result["text"]
        lines = [header(result)]
        if text:
            lines.append(text[:-1] if text.endswith("\n") else text)
        if result.get("truncated"):
            path = _base.artifact_path(envelope, result.get("text_artifact"))
            if path is not None:
                lines.append(
                    _base.artifact_note(
                        "text", path, result.get("chars"), "chars", result.get("text_kept_bytes")
                    )
                )
            else:
                tool = envelope.tool_name or "file_read"
                note = f"[text cut to fit: read other lines with {tool} using offset and limit]"
                lines.append(note)
        return _base.finish(lines, envelope, budgets)

    def compact(self, envelope: Envelope, step: int, budgets: _base.Budgets) -> Envelope | None:
        """Step 2 cuts the text to a short head and tail; step 3 drops it for the cut marker
        alone, since the file (or ``text_artifact``) holds it and the receipt says how to read
        it again; step 4 collapses the record to ``tool_name: summary_text`` keeping ``path``
        and ``text_artifact``."""
        result = envelope.result
        if step == _base.CompactStep.COLLAPSE_TO_LINE:
            kept = {"path": result["path"], **_base.references(result)}
            return _base.collapse(envelope, self.name, _base.summary_line(envelope, kept), kept)
        fields: list[_base.PreviewField] = [("text", "truncated", True)]
        if step == _base.CompactStep.SHRINK_PREVIEWS:
            changed = _base.reduce_previews(result, fields, max_chars=budgets.compact_preview_chars)
        elif step == _base.CompactStep.DROP_TO_ARTIFACTS:
            changed = _base.reduce_previews(result, fields, drop_backed=True)
        else:
            return None
        return None if changed is None else _base.with_result(envelope, changed)
