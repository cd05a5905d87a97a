"""The ``outputSchema`` a served workbench tool advertises: its canonical record.

A served call's ``structuredContent`` is the envelope's ``canonical()`` record (seed 001), not the
tool's bare result, so the schema that describes it is the canonical record's. A failure has a
null ``result`` and an ``error`` object, whatever the tool.

A tool's own output schema describes the value its body returns. Only the json and text families
keep that value as the canonical ``result``, so only their tools' ``result`` is narrowed by it,
with the alternatives a correct result may still take: the bounded stand-in written when the value
is too large to inline, or a listing, file or command result the value turned out to be. The
command, listing and file families reshape the value; their ``result`` is left open.

The tool's ``$defs`` move to the root so their ``#/$defs/...`` references keep resolving; the
schema's own definitions are named ``workbench.*``, which a pydantic model name cannot be.
"""

from __future__ import annotations

import copy
from typing import TYPE_CHECKING, Any

from workbench._errors import ErrorKind

if TYPE_CHECKING:
    from workbench._spec import ToolSpec

_ERROR = "workbench.error"
_CUT_JSON = "workbench.cut_json"
_CUT_TEXT = "workbench.cut_text"
_FAMILY_RESULT = "workbench.family_result"
_KEEPS_VALUE = ("json", "text")

_DEFINITIONS: dict[str, Any] = {
    _ERROR: {
        "type": "object",
        "properties": {
            "kind": {"enum": [kind.value for kind in ErrorKind]},
            "message": {"type": "string"},
            "field": {"type": "string"},
            "expected": {"type": "string"},
            "details": {"type": "object"},
            "recovery_hint": {"type": "string"},
            "retryable": {"type": "boolean"},
        },
        "required": ["kind", "message", "retryable"],
        "additionalProperties": False,
    },
    _CUT_JSON: {
        "type": "object",
        "properties": {
            "kind": {"const": "json"},
            "preview": {"type": "string"},
            "truncated": {"const": True},
            "chars": {"type": "integer"},
            "result_artifact": {"type": "integer"},
        },
        "required": ["kind", "preview", "truncated", "chars", "result_artifact"],
        "additionalProperties": False,
    },
    _CUT_TEXT: {
        "type": "object",
        "properties": {
            "text": {"type": "string"},
            "truncated": {"const": True},
            "chars": {"type": "integer"},
            "text_artifact": {"type": "integer"},
        },
        "required": ["text", "truncated"],
        "additionalProperties": False,
    },
    _FAMILY_RESULT: {
        "type": "object",
        "properties": {"kind": {"enum": ["listing", "file", "command"]}},
        "required": ["kind"],
    },
}


def output_schema(spec: ToolSpec) -> dict[str, Any]:
    """The JSON Schema of the canonical record a call of ``spec`` returns as structured content.

    Promise: every ``envelope.canonical()`` the runtime produces for this tool validates against
    it (see the module docstring for how ``result`` is narrowed).
    """
    definitions = copy.deepcopy(_DEFINITIONS)
    result: dict[str, Any] = {}
    if spec.output_schema is not None and spec.family in _KEEPS_VALUE:
        declared = copy.deepcopy(spec.output_schema)
        tool_defs = declared.pop("$defs", None) or {}
        if not set(tool_defs) & set(definitions):
            definitions.update(tool_defs)
            result = {
                "anyOf": [
                    declared,
                    {"$ref": f"#/$defs/{_CUT_JSON}"},
                    {"$ref": f"#/$defs/{_CUT_TEXT}"},
                    {"$ref": f"#/$defs/{_FAMILY_RESULT}"},
                ]
            }
    return {
        "type": "object",
        "title": "workbench canonical record",
        "description": (
            "The call's canonical record (seed 001): status, summary_text, the result or the "
            "error, warnings and artifact paths. The text content is the receipt a model reads."
        ),
        "properties": {
            "tool_name": {"type": "string"},
            "status": {"enum": ["success", "error"]},
            "summary_text": {"type": "string"},
            "result": {},
            "error": {},
            "warnings": {"type": "array", "items": {"type": "string"}},
            "artifacts": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {"path": {"type": "string"}},
                    "required": ["path"],
                    "additionalProperties": False,
                },
            },
            "call_id": {"type": ["string", "null"]},
            "killed_by": {"enum": ["user", "timeout", "idle_timeout"]},
        },
        "required": [
            "tool_name",
            "status",
            "summary_text",
            "result",
            "error",
            "warnings",
            "artifacts",
            "call_id",
        ],
        "additionalProperties": False,
        "oneOf": [
            {
                "properties": {
                    "status": {"const": "success"},
                    "result": result,
                    "error": {"type": "null"},
                }
            },
            {
                "properties": {
                    "status": {"const": "error"},
                    "result": {"type": "null"},
                    "error": {"$ref": f"#/$defs/{_ERROR}"},
                }
            },
        ],
        "$defs": definitions,
    }
