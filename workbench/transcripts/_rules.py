"""Which envelope a received result is, and which rule recognised it.

Rules a user adds (``add_rule``, or ``load(..., rules=[...])``) are tried first, in the order
added; then the built-in rules in this order. The first that matches names the row's ``rule``:

1. ``legacy_prefix``: text starting ``[REJECTED]`` or ``[TIMEOUT]`` is a failure of that kind;
2. ``canonical_record``: a JSON object with ``tool_name`` and ``status`` is the canonical
   record itself;
3. ``nested_error``: ``{"ok": false, "error": {"kind", "message"}}`` is a failure;
4. ``wire_envelope``: ``{"ok": true, ...}`` or ``{"ok": false, "kind", "message"}``;
5. ``success_false``: a JSON object with ``"success": false`` is a failure (its ``error`` or
   ``message`` is the message);
6. ``error_field``: a JSON object with a non-empty ``error`` (text, or an object with a
   ``message``) is a failure;
7. ``retry_prompt``: the text an agent framework sends the model in place of a result when the
   call failed and it wants the model to try again (``...Fix the errors and try again.``,
   ``Please fix your mistakes.``, ``An error occurred while running the tool. Please try
   again.``) is a failure, ``invalid_args`` when it reports validation errors;
8. ``flagged_error``: any other result the transcript itself marks as an error (``is_error``,
   ``isError``, a JSON-RPC error, an inspect_ai tool error) is an ``execution_error`` whose
   message is the text received;
9. ``json_value``: any other JSON object or array is a success with that value as its result;
10. ``plain_text``: anything else is a success whose result is ``{"text": <the text>}``.

A result the transcript marks as an error is never read as a success, whatever it says: a rule
that would make it one yields to rule 8. A call with no result at all gets ``no_result``.
"""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Callable, Iterable
from enum import StrEnum
from typing import Any

from workbench.envelope import (
    MAX_NESTING,
    Envelope,
    ErrorKind,
    failure,
    is_canonical,
    nested_error,
    parse_object,
    split_legacy,
    success_record,
)


class Rule(StrEnum):
    """The built-in rules that turn a received result into an envelope."""

    LEGACY_PREFIX = "legacy_prefix"
    CANONICAL_RECORD = "canonical_record"
    NESTED_ERROR = "nested_error"
    WIRE_ENVELOPE = "wire_envelope"
    SUCCESS_FALSE = "success_false"
    ERROR_FIELD = "error_field"
    RETRY_PROMPT = "retry_prompt"
    FLAGGED_ERROR = "flagged_error"
    JSON_VALUE = "json_value"
    PLAIN_TEXT = "plain_text"
    NO_RESULT = "no_result"


RuleCheck = Callable[[str, str], "Envelope | None"]
"""A user's rule: ``check(receipt, tool)`` returns the envelope the receipt stands for (build it
with ``wb.failure(...)`` or ``wb.success(...)``), or None when the rule does not apply."""


@dataclasses.dataclass(frozen=True, slots=True)
class CustomRule:
    """A rule a user added: its ``name`` (what the row's ``rule`` says) and its ``check``."""

    name: str
    check: RuleCheck


@dataclasses.dataclass(frozen=True, slots=True)
class Recognised:
    """The envelope a received result stands for, the rule that said so (a ``Rule`` or the
    name of a user's rule), and ``problems`` with user rules that raised instead of answering."""

    envelope: Envelope
    rule: str
    problems: tuple[str, ...] = ()


_ADDED: list[CustomRule] = []


def add_rule(name: str, check: RuleCheck) -> CustomRule:
    """Add a rule every later ``load`` tries before the built-in ones (a rule of the same name
    is replaced). ``check(receipt, tool)`` returns an envelope, or None to pass."""
    rule = custom_rule(name, check)
    _ADDED[:] = [existing for existing in _ADDED if existing.name != rule.name]
    _ADDED.append(rule)
    return rule


def remove_rule(name: str) -> None:
    """Forget a rule ``add_rule`` added (``KeyError`` when there is none of that name)."""
    kept = [existing for existing in _ADDED if existing.name != name]
    if len(kept) == len(_ADDED):
        raise KeyError(f"no added rule named {name!r}")
    _ADDED[:] = kept


def added_rules() -> tuple[CustomRule, ...]:
    """The rules ``add_rule`` added, in the order they are tried."""
    return tuple(_ADDED)


def custom_rule(name: Any, check: Any) -> CustomRule:
    """A ``CustomRule``, after checking that ``name`` is new text and ``check`` is callable."""
    if not isinstance(name, str) or not name.strip():
        raise ValueError(f"a rule's name must be non-empty text, not {name!r}")
    if name in Rule.__members__.values():
        raise ValueError(f"{name!r} is the name of a built-in rule; choose another")
    if not callable(check):
        raise TypeError("a rule's check must be callable (receipt, tool) -> Envelope | None")
    return CustomRule(name, check)


def as_rules(rules: Iterable[Any] | None) -> tuple[CustomRule, ...]:
    """``load``'s ``rules=``: ``CustomRule``s or ``(name, check)`` pairs, then the added ones."""
    given: list[CustomRule] = []
    for entry in rules or ():
        if isinstance(entry, CustomRule):
            given.append(entry)
        elif isinstance(entry, tuple) and len(entry) == 2:
            given.append(custom_rule(*entry))
        else:
            raise TypeError(f"a rule is a (name, check) pair or a CustomRule, not {entry!r}")
    return (*given, *_ADDED)


def _envelope_rule(text: str, obj: dict[str, Any] | None) -> Recognised | None:
    if split_legacy(text) is not None:
        return Recognised(Envelope.from_wire(text), Rule.LEGACY_PREFIX)
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


def _message_of(value: Any) -> str | None:
    """The message an ``error`` value carries: text itself, or an object's message."""
    if isinstance(value, str):
        return value.strip() or None
    if isinstance(value, dict):
        for key in ("message", "detail", "error", "description"):
            found = _message_of(value.get(key))
            if found is not None:
                return found
        return json.dumps(value, ensure_ascii=False) if value else None
    if isinstance(value, list) and value:
        return json.dumps(value, ensure_ascii=False)
    return None


def _error_object_rule(obj: dict[str, Any] | None, tool: str) -> Recognised | None:
    if obj is None:
        return None
    if obj.get("success") is False:
        message = (
            _message_of(obj.get("error"))
            or _message_of(obj.get("message"))
            or "the tool answered success: false"
        )
        return Recognised(
            failure(ErrorKind.EXECUTION_ERROR, message, tool=tool, details=obj),
            Rule.SUCCESS_FALSE,
        )
    if obj.get("success") is not True and obj.get("error") not in (None, False):
        found = _message_of(obj.get("error"))
        if found is not None:
            return Recognised(
                failure(ErrorKind.EXECUTION_ERROR, found, tool=tool, details=obj),
                Rule.ERROR_FIELD,
            )
    return None


# The closing (or opening) words agent frameworks put around the error they send back as the
# tool's result when they want the model to call again.
_RETRY_ENDINGS = ("Fix the errors and try again.", "Please fix your mistakes.")
_RETRY_OPENING = "An error occurred while running the tool. Please try again."
_VALIDATION = re.compile(r"\bvalidation errors?\b", re.I)


def _retry_prompt_rule(text: str, tool: str) -> Recognised | None:
    # Compared at the ends of the text, not searched through it: most receipts are long.
    if not (text.rstrip().endswith(_RETRY_ENDINGS) or text.lstrip().startswith(_RETRY_OPENING)):
        return None
    kind = ErrorKind.INVALID_ARGS if _VALIDATION.search(text) else ErrorKind.EXECUTION_ERROR
    return Recognised(failure(kind, text.strip(), tool=tool), Rule.RETRY_PROMPT)


def _custom(
    text: str, tool: str, rules: tuple[CustomRule, ...], problems: list[str]
) -> Recognised | None:
    for rule in rules:
        try:
            envelope: Any = rule.check(text, tool)
        except Exception as exc:  # a user's rule that fails is named in the row, then skipped
            problems.append(f"rule {rule.name!r} raised {type(exc).__name__}: {exc}")
            continue
        if envelope is None:
            continue
        if not isinstance(envelope, Envelope):
            problems.append(
                f"rule {rule.name!r} returned a {type(envelope).__name__}, not an Envelope or None"
            )
            continue
        return Recognised(envelope, rule.name)
    return None


@dataclasses.dataclass(frozen=True, slots=True)
class _Value:
    """A result that is a success holding ``value`` (``Rule.JSON_VALUE`` or
    ``Rule.PLAIN_TEXT``), before any envelope is made of it."""

    value: Any
    rule: Rule
    plain: bool  # plain JSON data, so its canonical record can be written without a model


def recognise(
    text: str,
    *,
    tool: str,
    flagged_error: bool,
    call_id: str | None,
    rules: tuple[CustomRule, ...] = (),
) -> Recognised:
    """The envelope of one received result (never raises; a user rule that raises is listed in
    ``problems`` and skipped)."""
    problems: list[str] = []
    found = _found(text, tool, flagged_error, rules, problems)
    return _recognised(found, text, tool, call_id, problems)


def _recognised(
    found: Recognised | _Value, text: str, tool: str, call_id: str | None, problems: list[str]
) -> Recognised:
    """The envelope of what the rules found, named after ``tool`` and ``call_id`` where the
    result itself named neither."""
    if isinstance(found, _Value):
        found = _value_envelope(found, text, tool, call_id)
    envelope = found.envelope
    changes: dict[str, object] = {}
    if not envelope.tool_name:
        changes["tool_name"] = tool
    if call_id is not None and envelope.call_id is None:
        changes["call_id"] = call_id
    if changes:
        envelope = envelope.replace(**changes)
    return Recognised(envelope, found.rule, tuple(problems))


def recognise_record(
    text: str,
    *,
    tool: str,
    flagged_error: bool,
    call_id: str | None,
    rules: tuple[CustomRule, ...] = (),
) -> tuple[dict[str, Any], str, tuple[str, ...]]:
    """``recognise``, as the canonical record an import stores, the rule and the problems:
    the same record, written without an envelope for the plain successes most results are."""
    problems: list[str] = []
    found = _found(text, tool, flagged_error, rules, problems)
    if isinstance(found, _Value) and found.plain:
        return success_record(tool, found.value, call_id), found.rule, tuple(problems)
    recognised = _recognised(found, text, tool, call_id, problems)  # the rules ran once
    return recognised.envelope.canonical(), recognised.rule, recognised.problems


def _found(
    text: str,
    tool: str,
    flagged_error: bool,
    rules: tuple[CustomRule, ...],
    problems: list[str],
) -> Recognised | _Value:
    """What the rules say of one result: an envelope, or a success's value."""
    found: Recognised | None = _custom(text, tool, rules, problems) if rules else None
    obj: dict[str, Any] | None = None
    if found is None:
        obj = parse_object(text)
        found = (
            _envelope_rule(text, obj)
            or _error_object_rule(obj, tool)
            or _retry_prompt_rule(text, tool)
        )
    if found is not None and flagged_error and found.envelope.ok:
        found = None
    if found is not None:
        return found
    if flagged_error:
        message = text.strip() or "the tool failed and sent no message"
        return Recognised(
            failure(ErrorKind.EXECUTION_ERROR, message, tool=tool), Rule.FLAGGED_ERROR
        )
    return _value(text, obj)


# Past this many brackets a value may nest deeper than an envelope holds; "NaN" and
# "Infinity" are numbers json.loads reads and an envelope writes as null.
_PLAIN_BRACKETS = MAX_NESTING


def _value(text: str, obj: dict[str, Any] | None) -> _Value:
    """``obj`` is the text already parsed as a JSON object (None when it is not one)."""
    stripped = text.strip() if obj is None else ""
    if obj is not None or stripped[:1] == "[":
        try:
            value = obj if obj is not None else json.loads(stripped)
        except (ValueError, RecursionError):
            pass  # not JSON after all: it is plain text, the last line says so
        else:
            plain = (
                text.count("[") + text.count("{") <= _PLAIN_BRACKETS
                and "NaN" not in text
                and "Infinity" not in text
            )
            return _Value(value, Rule.JSON_VALUE, plain)
    return _Value({"text": text}, Rule.PLAIN_TEXT, True)


def _value_envelope(found: _Value, text: str, tool: str, call_id: str | None) -> Recognised:
    if found.rule is Rule.JSON_VALUE:
        try:
            envelope = Envelope(
                tool_name=tool, status="success", result=found.value, call_id=call_id
            )
        except ValueError:
            pass  # a value no envelope can hold (nesting too deep): kept as the text itself
        else:
            return Recognised(envelope, Rule.JSON_VALUE)
    return Recognised(
        Envelope(tool_name=tool, status="success", result={"text": text}, call_id=call_id),
        Rule.PLAIN_TEXT,
    )
