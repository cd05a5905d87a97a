"""What each kind of MCP client hands its model of one call of a tool with an output schema.

A served call's result carries the receipt as its text content and, for a tool that advertises
an output schema, the tool's whole result as ``structuredContent``. A client that prefers text
hands its model the receipt, cut to the receipt budget; a client that prefers structured
content hands its model that JSON whole: structured content cannot be cut without breaking the
schema it promises. So the receipt budget binds only text-preferring clients, and a cut receipt
says how much a structured-preferring client sees instead (``structured_note``).

A connected server's tool keeps that server's text and structured content: the same two views
are what other clients of that server hand their models.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from workbench.declare._structured import (
    Resolve,
    UnavailableResult,
    served_output_schema,
    structured_content,
)
from workbench.families.json import is_cut_json
from workbench.families.text import is_text_result

if TYPE_CHECKING:
    from workbench.declare._spec import ToolSpec
    from workbench.envelope import Envelope

_WRAPPING = len('{"result": ') + len("}")
"""What wrapping a value that is not an object as ``{"result": value}`` adds to its JSON."""


@dataclass(frozen=True)
class ClientViews:
    """The text a text-preferring client and a structured-preferring client hand their model.

    ``structured`` is None when the call sends no structured content (no output schema, or a
    failure); ``problem`` says why it could not be read back, when that is why.
    """

    text: str
    structured: str | None
    problem: str | None = None

    @property
    def extra_chars(self) -> int:
        """How many more characters a structured-preferring client hands its model."""
        return 0 if self.structured is None else max(0, len(self.structured) - len(self.text))


def structured_json(value: Any) -> str:
    """Structured content as a client serializes it for its model: one line of JSON."""
    return json.dumps(value, ensure_ascii=False)


def client_views(
    spec: ToolSpec | None, envelope: Envelope, receipt: str, resolve: Resolve
) -> ClientViews:
    """Both views of one ended call: served, the receipt and the tool's structured content;
    connected (a text result carrying its server's structured content), that server's text
    and structured content."""
    result = envelope.result
    connected = is_text_result(result) and "structured" in result
    text = receipt
    if connected:
        text = result["text"]
        if result.get("truncated"):
            text = _whole_text(envelope, result.get("text_artifact"), resolve, text)
    if spec is None or not envelope.ok or (served_output_schema(spec) is None and not connected):
        return ClientViews(text, None)
    try:
        return ClientViews(text, structured_json(structured_content(spec, envelope, resolve)))
    except UnavailableResult as exc:
        return ClientViews(text, None, problem=str(exc))


def _whole_text(envelope: Envelope, index: Any, resolve: Resolve, cut: str) -> str:
    if isinstance(index, int) and 0 <= index < len(envelope.artifacts):
        try:
            return resolve(envelope.artifacts[index]).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            return cut  # the cut text stands in; the view's count then says so
    return cut


def structured_chars(spec: ToolSpec | None, envelope: Envelope) -> tuple[int, bool] | None:
    """The length of a served call's structured content as ``structured_json`` writes it, and
    whether that is exact, without reading any artifact; None when it sends none.

    A cut json result records its whole JSON's length (exact); a cut text records its length
    in characters, and its JSON string is at least that plus its quotes (escapes add more).
    """
    if spec is None or not envelope.ok or served_output_schema(spec) is None:
        return None
    result = envelope.result
    exact = True
    if is_cut_json(result):
        whole = result["chars"]
    elif is_text_result(result) and result.get("truncated"):
        whole, exact = result["chars"] + 2, False
    elif is_text_result(result):
        whole = len(structured_json(result["text"]))
    else:
        whole = len(structured_json(result))
    declared = spec.output_schema or {}
    return (whole if declared.get("type") == "object" else whole + _WRAPPING), exact


def structured_note(spec: ToolSpec | None, envelope: Envelope, receipt: str) -> str | None:
    """For a receipt cut to its budget: how much a structured-preferring MCP client hands its
    model instead (None when nothing was cut or the tool sends no structured content)."""
    result = envelope.result
    cut = is_cut_json(result) or (is_text_result(result) and bool(result.get("truncated")))
    measured = structured_chars(spec, envelope) if cut else None
    if measured is None:
        return None
    chars, exact = measured
    size = f"{chars:,} chars" if exact else f"at least {chars:,} chars"
    return (
        "served over MCP, a client that prefers structured content hands its model the whole "
        f"result as structuredContent: {size}, beside this {len(receipt):,}-char receipt "
        "(the receipt budget binds only clients that read the text)"
    )


__all__ = [
    "ClientViews",
    "client_views",
    "structured_chars",
    "structured_json",
    "structured_note",
]
