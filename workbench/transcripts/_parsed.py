"""What every transcript reader produces: the run's tool calls in one normalised shape.

A reader turns one format into a ``Parsed``: ``ImportedCall`` per tool call (in the order the
model sent them), the tool definitions it found, and an ``Unreadable`` for every part it could
not read. Pairing calls with their results by id is the same in every format (``Pairing``),
and so is reading a call's arguments as sent (``sent_call``) and a result's text
(``block_text``, ``joined_texts``).
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterator
from dataclasses import field
from typing import Any


class TranscriptError(ValueError):
    """A transcript that cannot be read at all: the message names the file, where in it
    (line or message index) and what was expected there."""

    def __init__(self, source: str, where: str, problem: str, expected: str) -> None:
        self.source = source
        self.where = where
        self.problem = problem
        self.expected = expected
        super().__init__(f"{source}: {where}: {problem}; expected {expected}")


@dataclasses.dataclass(frozen=True, slots=True)
class Unreadable:
    """One part of a transcript that was not imported, and why: ``where`` names the line or
    message index (``"message 7"``, ``"line 12"``), ``reason`` what was wrong with it."""

    where: str
    reason: str

    def __str__(self) -> str:
        return f"{self.where}: {self.reason}"


@dataclasses.dataclass(slots=True)
class ImportedCall:
    """One tool call of a run as the model sent it and as its result came back.

    ``raw_args`` is exactly what the model sent (a string stays a string); ``arguments`` the
    parsed object, or None when the string was not a JSON object (``args_problem`` says why).
    ``receipt`` is the text the model received, byte for byte, or None when the run holds no
    result for the call. ``flagged_error`` is True when the format itself marked the result
    as an error (``is_error``, an MCP ``isError`` or a JSON-RPC error, an inspect_ai error).
    ``executed_by`` is ``"client"`` for a call the model's caller ran (a function tool) and
    ``"server"`` for one the provider ran itself (web search, code execution, a remote MCP
    server), whose receipt is the result the model was shown.
    """

    tool: str
    model_call_id: str | None
    raw_args: Any
    where: str
    arguments: Any = None
    args_problem: str | None = None
    run_id: str | None = None
    message_id: str | None = None
    receipt: str | None = None
    flagged_error: bool = False
    result_where: str | None = None
    result_message_id: str | None = None
    started_at: float | None = None
    ended_at: float | None = None
    notes: list[str] = field(default_factory=list)
    executed_by: str = "client"


@dataclasses.dataclass(slots=True)
class Parsed:
    """What one reader made of a transcript. ``calls`` is a list, or (from a reader that
    streams its file) an iterator of the calls in the order sent, each once its result has
    been read; ``tools`` and ``unreadable`` fill up as it is consumed."""

    calls: list[ImportedCall] | Iterator[ImportedCall] = field(default_factory=list)
    tools: dict[str, dict[str, Any]] = field(default_factory=dict)
    unreadable: list[Unreadable] = field(default_factory=list)
    run_id: str | None = None


def parse_arguments(raw: Any) -> tuple[Any, str | None]:
    """The arguments object of a call and, when ``raw`` is not one, why. A string is parsed as
    JSON (models send arguments as a JSON string in the OpenAI formats)."""
    if raw is None:
        return {}, None
    if isinstance(raw, dict):
        return raw, None
    if isinstance(raw, str):
        if not raw.strip():
            return {}, None
        try:
            value = json.loads(raw)
        except ValueError as exc:
            return None, f"the arguments are not valid JSON ({exc})"
        except RecursionError:
            return None, "the arguments are JSON nested too deeply to read"
        if not isinstance(value, dict):
            return None, f"the arguments are JSON but not an object (a {type(value).__name__})"
        return value, None
    return None, f"the arguments are a {type(raw).__name__}, not an object"


def sent_call(
    tool: str, call_id: str | None, raw_args: Any, where: str, **fields: Any
) -> ImportedCall:
    """A call as the model sent it: ``raw_args`` exactly as sent, and parsed as its arguments
    (``parse_arguments``); ``fields`` are the call's other fields (``message_id``, ...)."""
    arguments, problem = parse_arguments(raw_args)
    return ImportedCall(
        tool=tool,
        model_call_id=call_id,
        raw_args=raw_args,
        arguments=arguments,
        args_problem=problem,
        where=where,
        **fields,
    )


def block_text(content: Any, notes: list[str]) -> str | None:
    """The text a model reads from message content: a string as it is; a list of content
    blocks as the text of its text blocks joined by newlines (each other block named in
    ``notes``). None when ``content`` is neither."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return None
    return joined_texts(content, "text", notes, "content block", strings_are_text=True)


def joined_texts(
    parts: list[Any], key: str, notes: list[str], noun: str, *, strings_are_text: bool
) -> str:
    """The texts of ``parts`` joined by newlines: a part's text is its ``key`` when that is a
    string (the part itself when it is a string and ``strings_are_text``). Each other part is
    named in ``notes`` as ``{noun} {position} ({its type}) is not text ...``."""
    texts: list[str] = []
    for position, part in enumerate(parts):
        if strings_are_text and isinstance(part, str):
            texts.append(part)
        elif isinstance(part, dict) and isinstance(part.get(key), str):
            texts.append(part[key])
        else:
            kind = part.get("type") if isinstance(part, dict) else type(part).__name__
            notes.append(f"{noun} {position} ({kind}) is not text and is not in the receipt")
    return "\n".join(texts)


HANDED_KEPT = 64
"""Calls handed on that a pairing keeps before it lets them go in one step."""

HELD_MAX = 10_000
"""How many calls a pairing holds behind one still waiting for its result before it hands that
one on without it: calls are handed on in the order sent, so a call never answered (a run cut
short, a cancelled request) would otherwise hold every later call until the file ends."""


class Pairing:
    """Calls in the order sent, and the results matched to them by id.

    With ``repeated=True`` (a run logged as request/response pairs, where each request repeats
    the conversation so far) a call id already seen is the same call again and is read once;
    a result repeated with the same text is read once, a different one is listed as
    unreadable. Of a call handed on, only a hash of its id and of its result are kept for that
    (64 bits each: a collision among a million ids has odds of about one in thirty million).
    """

    def __init__(self, parsed: Parsed, *, repeated: bool = False) -> None:
        self.parsed = parsed
        self.repeated = repeated
        self._open: dict[str, ImportedCall] = {}
        # repeated only: hash of a call id → hash of its result, None while it has none
        self._known: dict[int, int | None] = {}
        self._made_up: set[str] = set()  # keys made up to pair calls the model sent no id for
        self._late: set[str] = set()  # ids of calls handed on without a result (HELD_MAX)
        self._unread: set[int] = set()  # repeated only: hashes of the parts listed unreadable
        self._handed = 0

    def answered(self) -> Iterator[ImportedCall]:
        """The calls not handed on yet, in the order sent, up to the first still waiting for
        its result; each is handed on once and then no longer held here. A reader that reads
        its file message by message yields these after each message, so memory holds the
        calls still waiting, not the run: at most ``HELD_MAX`` of them, past which the first
        is handed on without its result, and says so."""
        calls = self.parsed.calls
        assert isinstance(calls, list)
        while self._handed < len(calls):
            call = calls[self._handed]
            if call.receipt is None:
                if len(calls) - self._handed <= HELD_MAX:
                    break
                self._give_up(call)
            yield self._leaving(call)
            self._handed += 1
        if self._handed > HANDED_KEPT:
            del calls[: self._handed]
            self._handed = 0

    def remaining(self) -> Iterator[ImportedCall]:
        """The calls not handed on yet, answered or not (the run is read to its end)."""
        calls = self.parsed.calls
        assert isinstance(calls, list)
        for call in calls[self._handed :]:
            yield self._leaving(call)
        self._handed = len(calls)

    def _give_up(self, call: ImportedCall) -> None:
        """Hand ``call`` on without a result: too many calls after it were answered first."""
        key = call.model_call_id
        if key is not None and self._open.get(key) is call:
            del self._open[key]
            self._late.add(key)
        call.notes.append(
            f"no result for this call among the {HELD_MAX:,} calls after it: it was stored "
            "without one (a result found later is listed as unreadable)"
        )

    def _leaving(self, call: ImportedCall) -> ImportedCall:
        """``call`` as it is handed on: a key made up only to pair it is not an id the model
        sent, and is not kept as one."""
        if call.model_call_id in self._made_up:
            self._made_up.discard(call.model_call_id)
            call.model_call_id = None
        return call

    def call(self, call: ImportedCall, *, made_up: bool = False) -> None:
        """Add a call; a repeated id keeps both calls (unless ``repeated``), the result goes to
        the latest. ``made_up``: the model sent no id, and ``model_call_id`` is a key the reader
        made to pair the call (the same each time a repeated run sends it again); the call
        leaves without it."""
        key = call.model_call_id
        if self.repeated and key is not None:
            if hash(key) in self._known:
                return
            self._known[hash(key)] = None
        assert isinstance(self.parsed.calls, list)
        self.parsed.calls.append(call)
        if made_up and key is not None:
            self._made_up.add(key)
        if key is not None and call.receipt is None:  # one read with its result waits for none
            self._open[key] = call

    def is_open(self, call_id: str) -> bool:
        """True when a call with this id is waiting for its result."""
        return call_id in self._open

    def result(
        self,
        call_id: Any,
        receipt: str,
        *,
        where: str,
        flagged_error: bool = False,
        message_id: str | None = None,
        ended_at: float | None = None,
        notes: list[str] | None = None,
    ) -> ImportedCall | None:
        """Attach a result to the call it answers and return that call; an unknown id is
        listed as unreadable (None), and so is a second, different result of a repeated run."""
        call = self._open.pop(str(call_id), None) if call_id is not None else None
        if call is None and self.repeated and call_id is not None:
            answered = self._known.get(hash(str(call_id)))
            if answered is not None and answered != hash(receipt):
                self.parsed.unreadable.append(
                    Unreadable(where, f"a second, different result for call id {call_id!r}")
                )
            if answered is not None:
                return None
        if call is None and call_id is not None and str(call_id) in self._late:
            self._late.discard(str(call_id))
            if self.repeated:
                self._known[hash(str(call_id))] = hash(receipt)  # a repeat of it is not news
            self.parsed.unreadable.append(
                Unreadable(
                    where,
                    f"the result of call id {call_id!r}, which was stored without it: "
                    f"{HELD_MAX:,} calls after it were read first",
                )
            )
            return None
        if call is None:
            reason = f"a tool result for call id {call_id!r} that no call sent"
            self.unreadable(where, reason, receipt)  # a repeated run lists it once
            return None
        call.receipt = receipt
        if self.repeated and call.model_call_id is not None:
            self._known[hash(call.model_call_id)] = hash(receipt)
        call.flagged_error = flagged_error
        call.result_where = where
        call.result_message_id = message_id
        if ended_at is not None:
            call.ended_at = ended_at
        if notes:
            call.notes.extend(notes)
        return call

    def content_result(
        self,
        call_id: Any,
        content: Any,
        *,
        where: str,
        not_text: str,
        part: Any = None,
        flagged_error: bool = False,
        message_id: str | None = None,
        ended_at: float | None = None,
    ) -> None:
        """Attach a result whose receipt is the text of message ``content`` (``block_text``:
        the blocks that are not text named in the call's notes); content that is neither text
        nor blocks is listed as unreadable instead (``not_text``; ``part``, the value not read,
        as ``unreadable`` takes it)."""
        notes: list[str] = []
        text = block_text(content, notes)
        if text is None:
            self.unreadable(where, not_text, part)
            return
        self.result(
            call_id,
            text,
            where=where,
            flagged_error=flagged_error,
            message_id=message_id,
            ended_at=ended_at,
            notes=notes,
        )

    def unreadable(self, where: str, reason: str, part: Any = None) -> None:
        """List a part of the transcript that is not imported. With ``repeated``, a ``part``
        (the value not read) that every later request repeats is listed once, where it was
        first met."""
        if self.repeated and part is not None:
            key = hash((reason, json.dumps(part, sort_keys=True, default=repr)))
            if key in self._unread:
                return
            self._unread.add(key)
        self.parsed.unreadable.append(Unreadable(where, reason))


def schemas_of(entries: Any, schema_key: str) -> dict[str, dict[str, Any]]:
    """Tool name → input schema, from a transcript's list of tool definitions whose schema sits
    under ``schema_key`` (``{"type": "object"}`` where a definition gives none)."""
    found: dict[str, dict[str, Any]] = {}
    for entry in list_or_empty(entries):
        if isinstance(entry, dict) and isinstance(entry.get("name"), str):
            schema = entry.get(schema_key)
            found[entry["name"]] = schema if isinstance(schema, dict) else {"type": "object"}
    return found


def type_of(value: Any) -> str | None:
    """The ``type`` of a block or item when it is a name, else None (a transcript can hold an
    object or a list there, which is no name and cannot be looked up among names)."""
    kind = value.get("type") if isinstance(value, dict) else None
    return kind if isinstance(kind, str) else None


def text_or_none(value: Any) -> str | None:
    """``value`` when it is a non-empty string, else None."""
    return value if isinstance(value, str) and value else None


def list_or_empty(value: Any) -> list[Any]:
    """``value`` when it is a list, else an empty one (a transcript can hold anything where a
    list belongs)."""
    return value if isinstance(value, list) else []
