"""The formats ``load`` reads, in one table, and telling them apart from the content alone.

Each format is one ``FormatEntry`` of ``TABLE``: its name and the other names ``format=``
accepts for it, its reader, the shapes of source it reads by parts (any other is read whole
first) and the probes that detect it. ``detect``, ``reads_by_parts``, ``format_named`` and
``read`` look only at the table, so a format is added by adding its entry.

Detection asks every format's probes in the order of their ranks, and says the format of the
first that finds its mark. Consecutive probes that look at the same things (``Look``) look at
them together, thing by thing, so that the first thing that has any of their marks decides: in
this order, an inspect_ai log (a zip, or an object with ``eval`` and ``samples``); JSON-RPC
messages (MCP traffic); a provider's request or response object (or a log of them), by the
first object whose own keys say its API, else by the first whose tool definitions or system
prompt do; Responses API call items; Gemini ``functionCall`` / ``functionResponse`` parts;
and by the first message with Anthropic ``tool_use`` / ``tool_result`` blocks or Chat
Completions ``tool_calls``, ``role: "tool"`` or the legacy ``function_call``.
"""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Callable, Iterable, Iterator
from typing import Any, Literal

from workbench.transcripts import (
    anthropic,
    gemini,
    inspect_ai,
    mcp_jsonl,
    openai_chat,
    openai_responses,
)
from workbench.transcripts._parsed import Parsed, list_or_empty
from workbench.transcripts._source import (
    LINES,
    LIST_KEY,
    LOG,
    LOG_LINES,
    SAMPLES,
    WHOLE,
    Opened,
    Source,
)

Format = Literal[
    "openai_chat", "openai_responses", "anthropic", "gemini", "mcp_jsonl", "inspect_ai"
]

Look = Literal["input", "object", "setup", "message"]
"""What a probe is asked about: ``"input"``, the source as one load opened it (``Opened``);
``"object"``, each request or response object in turn (its ``dict``), for its own keys;
``"setup"``, each object in turn again, for what it sets the model up with (tool definitions,
a system prompt); ``"message"``, each message of a plain list or of each request in turn
(responses were told apart by their own keys before)."""


def _objects(opened: Opened) -> Iterator[dict[str, Any]]:
    for document in opened.documents or ():
        yield document.data


def _messages(opened: Opened) -> Iterator[Any]:
    if opened.documents is None:
        yield from list_or_empty(opened.data)
        return
    for data in _objects(opened):
        yield from list_or_empty(data.get("messages"))


LOOKS: dict[Look, Callable[[Opened], Iterable[Any]]] = {
    "input": lambda opened: (opened,),
    "object": _objects,
    "setup": _objects,
    "message": _messages,
}
"""``Look`` → the things of a source a probe that looks so is asked about, in order."""


@dataclasses.dataclass(frozen=True, slots=True)
class Probe:
    """One mark of a format: ``test`` is asked about each thing ``look`` names (True: the
    format has its mark there), in the order of ``rank`` among every format's probes."""

    rank: int
    look: Look
    test: Callable[[Any], bool]


@dataclasses.dataclass(frozen=True, slots=True)
class FormatEntry:
    """One format ``load`` reads: its ``name``, the other names ``format=`` accepts for it
    (``aliases``), its reader (``read``, given the source as the load opened it), the shapes
    of source (``Source.shape``) it reads by parts (``by_parts``; a source of any other shape
    is read whole first) and the ``probes`` that detect it."""

    name: str
    read: Callable[[Opened], Parsed]
    by_parts: frozenset[str]
    probes: tuple[Probe, ...]
    aliases: tuple[str, ...] = ()


def _of_source(read: Callable[[Source], Parsed]) -> Callable[[Opened], Parsed]:
    """A reader that needs nothing of what the load opened but the source."""
    return lambda opened: read(opened.source)


_API_PARTS = frozenset({LOG, LOG_LINES, LIST_KEY})
"""What every API reader reads by parts: a log of its request and response objects entry by
entry, and a bare list of its messages (or items, or contents) one by one."""

TABLE: tuple[FormatEntry, ...] = (
    FormatEntry(
        openai_chat.NAME,
        openai_chat.READER.read,
        by_parts=_API_PARTS | {"messages"},
        probes=(
            Probe(33, "object", openai_chat.is_own_object),
            Probe(41, "setup", openai_chat.offers_functions),
            Probe(71, "message", openai_chat.has_tool_marks),
        ),
        aliases=("openai", "chat", "chat_completions"),
    ),
    FormatEntry(
        openai_responses.NAME,
        openai_responses.READER.read,
        by_parts=_API_PARTS | {"input", "output"},
        probes=(
            Probe(31, "object", openai_responses.is_own_object),
            Probe(50, "input", openai_responses.has_call_items),
        ),
        aliases=("responses",),
    ),
    FormatEntry(
        anthropic.NAME,
        anthropic.READER.read,
        by_parts=_API_PARTS | {"messages"},
        probes=(
            Probe(32, "object", anthropic.is_response),
            Probe(40, "setup", anthropic.offers_own_tools),
            Probe(42, "setup", anthropic.has_system),
            Probe(70, "message", anthropic.has_tool_blocks),
        ),
        aliases=("claude",),
    ),
    FormatEntry(
        gemini.NAME,
        gemini.READER.read,
        by_parts=_API_PARTS | {"contents"},
        probes=(
            Probe(30, "object", gemini.is_own_object),
            Probe(60, "input", gemini.has_call_parts),
        ),
        aliases=("google", "genai"),
    ),
    FormatEntry(
        mcp_jsonl.NAME,
        _of_source(mcp_jsonl.read),
        by_parts=frozenset({LINES, LOG_LINES}),
        probes=(Probe(20, "input", mcp_jsonl.has_jsonrpc),),
        aliases=("mcp", "jsonrpc"),
    ),
    FormatEntry(
        inspect_ai.NAME,
        _of_source(inspect_ai.read),
        by_parts=frozenset({SAMPLES}),
        probes=(Probe(10, "input", inspect_ai.is_eval_log),),
        aliases=("inspect",),
    ),
)
"""Every format ``load`` reads, in the order ``FORMATS`` names them."""

FORMATS: tuple[str, ...] = tuple(entry.name for entry in TABLE)


def entry_named(name: str) -> FormatEntry:
    """The table's entry of the format ``name`` (its own name; a ``KeyError`` for another)."""
    for entry in TABLE:
        if entry.name == name:
            return entry
    raise KeyError(name)


def format_named(name: str) -> str | None:
    """The format ``name`` stands for (its own name or an alias; ``-`` and ``_`` are alike,
    and so are upper and lower case), or None."""
    key = name.strip().lower().replace("-", "_")
    aliases = {alias: entry.name for entry in TABLE for alias in entry.aliases}
    return key if any(entry.name == key for entry in TABLE) else aliases.get(key)


def reads_by_parts(name: str, source: Source) -> bool:
    """True when the reader of format ``name`` reads ``source`` in the parts it was opened as
    (else it is read whole first)."""
    return source.shape == WHOLE or source.shape in entry_named(name).by_parts


def read(name: str, opened: Opened) -> Parsed:
    """The calls of a source read as format ``name``: by parts where its reader reads the
    source's shape so, else once the source is read whole."""
    if not reads_by_parts(name, opened.source):
        opened = opened.whole()
    return entry_named(name).read(opened)


def detect(opened: Opened) -> str:
    """The format of a source; a ``TranscriptError`` when no format's marks are in it."""
    ranked = sorted(
        ((probe, entry.name) for entry in TABLE for probe in entry.probes),
        key=lambda found: found[0].rank,
    )
    for look, group in itertools.groupby(ranked, key=lambda found: found[0].look):
        probes = list(group)
        for thing in LOOKS[look](opened):
            for probe, name in probes:
                if probe.test(thing):
                    return name
    source = opened.source
    raise source.error(
        "the whole file" if source.path is not None else "the whole input",
        "no tool call or tool result of any known format was found",
        f"one of the formats {', '.join(entry.name for entry in TABLE)} "
        "(or pass format= to read it as one)",
    )
