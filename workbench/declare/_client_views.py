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
from typing import TYPE_CHECKING, Any, Literal

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

_WRAPPING = len('{"result":') + len("}")
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
    """Structured content as clients get it and hand it to their model: one line of JSON
    without spaces, unicode kept (how the SDK writes ``structuredContent`` on the wire, and how
    pydantic-ai, through pydantic_core, writes a tool's return for its model)."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


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


Bound = Literal["exact", "at least", "at most"]


def structured_chars(
    spec: ToolSpec | None, envelope: Envelope, resolve: Resolve | None = None
) -> tuple[int, Bound] | None:
    """The length of a served call's structured content as ``structured_json`` writes it, and
    whether that is exact or a bound; None when it sends none.

    A cut result's whole value is in an artifact: with ``resolve`` it is read and measured
    exactly. Without it, a cut json result's recorded length (its JSON with spaces after the
    separators) is at most that, and a cut text's JSON string at least its length plus quotes
    (escapes add more).
    """
    if spec is None or not envelope.ok or served_output_schema(spec) is None:
        return None
    result = envelope.result
    bound: Bound = "exact"
    if is_cut_json(result) or (is_text_result(result) and result.get("truncated")):
        whole, bound = _cut_chars(envelope, resolve)
    elif is_text_result(result):
        whole = len(structured_json(result["text"]))
    else:
        whole = len(structured_json(result))
    declared = spec.output_schema or {}
    return (whole if declared.get("type") == "object" else whole + _WRAPPING), bound


def _cut_chars(envelope: Envelope, resolve: Resolve | None) -> tuple[int, Bound]:
    """The whole value's ``structured_json`` length of a cut result, read from its artifact
    when it can be; else the bound its record gives."""
    result = envelope.result
    json_cut = is_cut_json(result)
    index = result.get("result_artifact" if json_cut else "text_artifact")
    if resolve is not None and isinstance(index, int) and 0 <= index < len(envelope.artifacts):
        try:
            text = resolve(envelope.artifacts[index]).read_text(encoding="utf-8")
            return len(structured_json(json.loads(text) if json_cut else text)), "exact"
        except (OSError, UnicodeDecodeError, ValueError):
            pass  # the artifact is gone or unreadable: the record's bound stands in, named so
    if json_cut:
        return result["chars"], "at most"
    return result["chars"] + 2, "at least"


def structured_note(
    spec: ToolSpec | None, envelope: Envelope, receipt: str, resolve: Resolve | None = None
) -> str | None:
    """For a receipt cut to its budget: how much a structured-preferring MCP client hands its
    model instead (None when nothing was cut or the tool sends no structured content); exact
    when ``resolve`` reads the artifact that holds the whole value."""
    result = envelope.result
    cut = is_cut_json(result) or (is_text_result(result) and bool(result.get("truncated")))
    measured = structured_chars(spec, envelope, resolve) if cut else None
    if measured is None:
        return None
    chars, bound = measured
    size = f"{chars:,} chars" if bound == "exact" else f"{bound} {chars:,} chars"
    return (
        "served over MCP, a client that prefers structured content hands its model the whole "
        f"result as structuredContent: {size}, beside this {len(receipt):,}-char receipt "
        "(the receipt budget binds only clients that read the text)"
    )


__all__ = [
    "Bound",
    "ClientViews",
    "client_views",
    "structured_chars",
    "structured_json",
    "structured_note",
]
