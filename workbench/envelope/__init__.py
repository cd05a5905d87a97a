"""The canonical record of a call: one ``Envelope`` per call, success or error.

Everything a model or a person later sees is derived from the envelope, never the other way
round: the wire string (``to_wire``, read back by ``Envelope.from_wire`` and the detection
helpers), the receipt a model reads (rendered by the call's family) and the static forms shown
in a notebook. This package also holds the error vocabulary (``ErrorKind``, one table with each
kind's default ``retryable``), the builders a tool returns (``success``, ``failure``,
``listing``, ``file_result``), the one place where exceptions become error kinds
(``from_exception``) and the head-and-tail previews with their explicit cut marker.
"""

from workbench.envelope._builders import (
    ToolFailure,
    failure,
    file_result,
    from_exception,
    listing,
    success,
    unknown_tool,
)
from workbench.envelope._detect import failure_message, is_error, is_success, success_payload
from workbench.envelope._display import envelope_html
from workbench.envelope._envelope import (
    MAX_NESTING,
    ArtifactRef,
    Envelope,
    UnrepresentableValue,
    jsonable,
    success_record,
    unrepresentable,
)
from workbench.envelope._errors import ErrorKind, ToolError, as_kind, known_kind
from workbench.envelope._truncate import (
    MARKER_RE,
    TEXT_RESULT_KEYS,
    Preview,
    cut_marker,
    preview,
    truncate_for_model,
)
from workbench.envelope._wire import (
    escape_surrogates,
    is_canonical,
    nested_error,
    parse_object,
    split_legacy,
    wire_schema,
)

__all__ = [
    "MARKER_RE",
    "MAX_NESTING",
    "TEXT_RESULT_KEYS",
    "ArtifactRef",
    "Envelope",
    "ErrorKind",
    "Preview",
    "ToolError",
    "ToolFailure",
    "UnrepresentableValue",
    "as_kind",
    "cut_marker",
    "envelope_html",
    "escape_surrogates",
    "failure",
    "failure_message",
    "file_result",
    "from_exception",
    "is_canonical",
    "is_error",
    "is_success",
    "jsonable",
    "known_kind",
    "listing",
    "nested_error",
    "parse_object",
    "preview",
    "split_legacy",
    "success",
    "success_payload",
    "success_record",
    "truncate_for_model",
    "unknown_tool",
    "unrepresentable",
    "wire_schema",
]
