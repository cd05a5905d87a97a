"""Which envelope a received result is, and which rule recognised it.

The rules are tried in this order; the first that matches names the row's ``rule``:

1. ``legacy_prefix``: text starting ``[REJECTED]`` or ``[TIMEOUT]`` is a failure of that kind;
2. ``canonical_record``: a JSON object with ``tool_name`` and ``status`` is the canonical
   record itself;
3. ``nested_error``: ``{"ok": false, "error": {"kind", "message"}}`` is a failure;
4. ``wire_envelope``: ``{"ok": true, ...}`` or ``{"ok": false, "kind", "message"}``;
5. ``flagged_error``: any other result the transcript itself marks as an error (``is_error``,
   ``isError``, a JSON-RPC error, an inspect_ai tool error) is an ``execution_error`` whose
   message is the text received;
6. ``json_value``: any other JSON object or array is a success with that value as its result;
7. ``plain_text``: anything else is a success whose result is ``{"text": <the text>}``.

A result the transcript marks as an error is never read as a success, whatever it says: rules
1-4 yield to rule 5 when they would. A call with no result at all gets ``no_result``.
"""

from __future__ import annotations

import dataclasses
import json
from enum import StrEnum

from workbench._builders import failure
from workbench._envelope import Envelope
from workbench._errors import ErrorKind
from workbench._wire import is_canonical, nested_error, parse_object, split_legacy


class Rule(StrEnum):
    """The rule that turned a received result into an envelope."""

    LEGACY_PREFIX = "legacy_prefix"
    CANONICAL_RECORD = "canonical_record"
    NESTED_ERROR = "nested_error"
    WIRE_ENVELOPE = "wire_envelope"
    FLAGGED_ERROR = "flagged_error"
    JSON_VALUE = "json_value"
    PLAIN_TEXT = "plain_text"
    NO_RESULT = "no_result"


@dataclasses.dataclass(frozen=True, slots=True)
class Recognised:
    """The envelope a received result stands for, and the rule that said so."""

    envelope: Envelope
    rule: Rule


def _envelope_rule(text: str) -> Recognised | None:
    if split_legacy(text) is not None:
        return Recognised(Envelope.from_wire(text), Rule.LEGACY_PREFIX)
    obj = parse_object(text)
    if obj is None:
        return None
    try:
        if is_canonical(obj):
            return Recognised(Envelope.model_validate(obj), Rule.CANONICAL_RECORD)
        if nested_error(obj) is not None:
            return Recognised(Envelope.from_wire(obj), Rule.NESTED_ERROR)
        if isinstance(obj.get("ok"), bool):
            return Recognised(Envelope.from_wire(obj), Rule.WIRE_ENVELOPE)
    except ValueError:
        return None  # shaped like an envelope but not a valid one: read by the later rules
    return None


def recognise(text: str, *, tool: str, flagged_error: bool, call_id: str | None) -> Recognised:
    """The envelope of one received result (never raises)."""
    found = _envelope_rule(text)
    if found is not None and flagged_error and found.envelope.ok:
        found = None
    if found is None:
        if flagged_error:
            message = text.strip() or "the tool failed and sent no message"
            found = Recognised(
                failure(ErrorKind.EXECUTION_ERROR, message, tool=tool), Rule.FLAGGED_ERROR
            )
        else:
            found = _value_rule(text, tool, call_id)
    envelope = found.envelope
    changes: dict[str, object] = {}
    if not envelope.tool_name:
        changes["tool_name"] = tool
    if call_id is not None and envelope.call_id is None:
        changes["call_id"] = call_id
    if changes:
        envelope = envelope.replace(**changes)
    return Recognised(envelope, found.rule)


def _value_rule(text: str, tool: str, call_id: str | None) -> Recognised:
    stripped = text.strip()
    if stripped[:1] in ("{", "["):
        try:
            value = json.loads(stripped)
        except (ValueError, RecursionError):
            pass  # not JSON after all: it is plain text, the next line says so
        else:
            try:
                envelope = Envelope(tool_name=tool, status="success", result=value, call_id=call_id)
            except ValueError:
                pass  # a value no envelope can hold (nesting too deep): kept as the text itself
            else:
                return Recognised(envelope, Rule.JSON_VALUE)
    return Recognised(
        Envelope(tool_name=tool, status="success", result={"text": text}, call_id=call_id),
        Rule.PLAIN_TEXT,
    )
