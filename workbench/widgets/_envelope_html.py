"""HTML pieces every result view draws from its envelope, whatever its family: the note under a
preview that was cut (naming the artifact with the complete value) and the footer of warnings
and artifacts. The plain views, the failure card and the listing tree all import them from
here; this module imports no view. Every value from the tool is escaped.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from workbench.envelope import Envelope
from workbench.families import artifact_note, artifact_path
from workbench.widgets._html import esc


def note_html(text: str) -> str:
    """One line of escaped text in the notes' style (``wb-note``)."""
    return f"<div class='wb-note'>{esc(text)}</div>"


def cut_note(
    envelope: Envelope,
    result: Mapping[str, Any],
    what: str,
    key: str,
    unit: str = "bytes",
    size: Any = None,
) -> str:
    """The artifact line under a preview that was cut, as the receipt words it: the artifact
    is ``result[key + "_artifact"]``, its size ``size`` or ``result[key + "_bytes"]``."""
    path = artifact_path(envelope, result.get(f"{key}_artifact"))
    if size is None:
        size = result.get(f"{key}_bytes", result.get("chars"))
    return note_html(artifact_note(what, path, size, unit))


def footer_html(envelope: Envelope) -> str:
    """Warnings, then the artifacts that hold complete values."""
    parts = [f"<div class='wb-warning'>⚠ {esc(warning)}</div>" for warning in envelope.warnings]
    if envelope.artifacts:
        items = "".join(f"<li><code>{esc(ref.path)}</code></li>" for ref in envelope.artifacts)
        parts.append(f"<div class='wb-label'>artifacts</div><ul class='wb-artifacts'>{items}</ul>")
    return "".join(parts)


__all__ = ["cut_note", "footer_html", "note_html"]
