"""The ``outputSchema`` a served tool advertises, and the structured content that matches it.

A connected server's tool re-served keeps its server's ``outputSchema`` and sends that server's
structured content (read back from its artifact when it was too large to inline).

A served call's text content is its receipt, and that is what a model reads. Structured content
is sent only for a tool that declares an output schema, and it is the tool's own result, wrapped
as ``{"result": value}`` when the schema is not an object (what ``tools.export("mcp")`` does).

Only the json and text families keep the body's value as the canonical ``result`` (or as an
artifact when it was too large to inline), so only their tools advertise an output schema. The
command, listing and file families reshape the value into their own record: the declared schema
would describe something the client never receives, so it is not advertised.

The canonical record does not travel as structured content: it is in the result's ``_meta``
under ``RECORD_META_KEY`` (see ``workbench.mcp``).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from workbench.declare._exports import mcp_output_schema
from workbench.families import KEEPS_VALUE
from workbench.families.json import is_cut_json
from workbench.families.text import is_text_result

if TYPE_CHECKING:
    from workbench.declare._spec import ToolSpec
    from workbench.envelope import ArtifactRef, Envelope

Resolve = Callable[["ArtifactRef"], Path]
"""The file behind an artifact reference (``ArtifactStore.resolve``); raises ``OSError``."""

"""The families whose canonical result is the tool's own value."""


class UnavailableResult(Exception):
    """The tool's own result cannot be recovered (its artifact is gone or unreadable)."""


def served_output_schema(spec: ToolSpec) -> dict[str, Any] | None:
    """The ``outputSchema`` served for ``spec``: its declared output schema as MCP needs it
    (an object at the root), or None when it declares none or its family reshapes the value."""
    if spec.output_schema is None or spec.family not in KEEPS_VALUE:
        return None
    return mcp_output_schema(spec.output_schema)


def structured_content(spec: ToolSpec, envelope: Envelope, resolve: Resolve) -> Any:
    """The structured content of a successful call of ``spec``: the tool's own result, wrapped
    as the advertised schema wraps it. Only for a tool that advertises an output schema.

    A result too large to inline is read back from the artifact that holds it. Raises
    ``UnavailableResult`` when that artifact cannot be read.
    """
    declared = spec.output_schema or {}
    value = own_result(spec, envelope, resolve)
    return value if declared.get("type") == "object" else {"result": value}


def own_result(spec: ToolSpec, envelope: Envelope, resolve: Resolve) -> Any:
    """The value the tool's body returned, as its canonical record keeps it."""
    result = envelope.result
    if spec.family == "text" and is_text_result(result) and "structured" in result:
        # A connected server's tool: its own structured content, not the receipt.
        result = result["structured"]
    elif spec.family == "text" and is_text_result(result):
        if not result.get("truncated"):
            return result["text"]
        return _read(envelope, result.get("text_artifact"), resolve)
    if is_cut_json(result):
        text = _read(envelope, result["result_artifact"], resolve)
        try:
            return json.loads(text)
        except ValueError as exc:
            raise UnavailableResult(f"the artifact holding the result is not JSON: {exc}") from exc
    return result


def _read(envelope: Envelope, index: Any, resolve: Resolve) -> str:
    if not isinstance(index, int) or not 0 <= index < len(envelope.artifacts):
        raise UnavailableResult(f"the result names artifact {index!r}, which the record lacks")
    try:
        return resolve(envelope.artifacts[index]).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise UnavailableResult(f"the artifact holding the result cannot be read: {exc}") from exc


__all__ = [
    "Resolve",
    "UnavailableResult",
    "own_result",
    "served_output_schema",
    "structured_content",
]
