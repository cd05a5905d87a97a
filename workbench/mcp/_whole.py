"""A workbench server's record, made readable here: the whole value of a cut result.

A served call whose result was cut to its budget records a stand-in that names an artifact on
the serving side, which the connecting side cannot read. The whole value travelled anyway, as
the result's ``structuredContent``; kept here as an artifact of the local call, with the
record's stand-in pointing at it, the connecting side can show what each of the server's
clients hands its model, and serve the tool again with its whole structured content.
"""

from __future__ import annotations

import json
from pathlib import PurePosixPath
from typing import TYPE_CHECKING, Any

from workbench.families.json import is_cut_json
from workbench.families.text import is_text_result

if TYPE_CHECKING:
    from workbench.envelope import Envelope


def with_whole_value(
    envelope: Envelope,
    structured: Any,
    output_schema: dict[str, Any] | None,
    keep: Any,
) -> Envelope:
    """``envelope`` with the artifact its cut result names replaced by a local copy of the
    whole value, under the same file name (``keep(name, text) -> ArtifactRef`` writes it);
    unchanged for a whole result, a failure, or a tool without an output schema or structured
    content. The record, its receipt and its artifact list are otherwise as the server sent
    them."""
    result = envelope.result
    if not envelope.ok or output_schema is None or not isinstance(structured, dict):
        return envelope
    if is_cut_json(result):
        index = result.get("result_artifact")
    elif is_text_result(result) and result.get("truncated"):
        index = result.get("text_artifact")
    else:
        return envelope
    if not isinstance(index, int) or not 0 <= index < len(envelope.artifacts):
        return envelope
    # The served schema wraps a value that is not an object as {"result": value}.
    value = structured if output_schema.get("type") == "object" else structured.get("result")
    if is_text_result(result) and isinstance(value, str):
        text = value
    else:
        text = json.dumps(value, ensure_ascii=False, indent=2)
    artifacts = list(envelope.artifacts)
    artifacts[index] = keep(PurePosixPath(artifacts[index].path).name, text)
    return envelope.replace(artifacts=artifacts)


__all__ = ["with_whole_value"]
