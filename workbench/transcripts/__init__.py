"""Real runs in: a transcript's tool calls as a workbench history.

``load(path_or_object)`` reads an agent log, an eval log or a chat transcript and returns a
``TranscriptHistory`` (a ``History``) with one row per tool call: the tool, the arguments exactly
as the model sent them, the result exactly as the model received it (the row's ``receipt``),
the envelope the detection rules recognised in it (``_rules``, named in the row's ``rule``;
``add_rule`` or ``load(..., rules=...)`` adds one),
timing when the transcript has it, and the run's own ids. Formats, detected from the content
when ``format`` is not given: ``openai_chat``, ``openai_responses``, ``anthropic``,
``gemini``, ``mcp_jsonl`` and ``inspect_ai`` (one module each, and one entry each in the table
of formats, ``_formats``), each API's request and response objects alone or as a log of
request/response pairs (``_exchanges``). Calls the provider ran itself are rows with
``executed_by="server"``.

Input that cannot be read at all raises ``TranscriptError`` naming the file, the line or
message index and what was expected there; a transcript that is only partly readable imports
every readable call and lists the rest in ``history.unreadable`` (and says so in a
``TranscriptWarning``).
"""

from workbench.families import ReceiptDiff, compare_receipts, diff_texts, rendering_of
from workbench.transcripts._build import IMPORTED, STATE, TranscriptHistory, rule_of
from workbench.transcripts._formats import FORMATS, Format
from workbench.transcripts._load import (
    TranscriptWarning,
    detect_format,
    load,
    load_many,
    parse,
)
from workbench.transcripts._parsed import ImportedCall, Parsed, TranscriptError, Unreadable
from workbench.transcripts._rules import (
    CustomRule,
    Recognised,
    Rule,
    RuleCheck,
    add_rule,
    added_rules,
    recognise,
    remove_rule,
)
from workbench.transcripts._source import Source

__all__ = [
    "FORMATS",
    "IMPORTED",
    "STATE",
    "CustomRule",
    "Format",
    "ImportedCall",
    "Parsed",
    "ReceiptDiff",
    "Recognised",
    "Rule",
    "RuleCheck",
    "Source",
    "TranscriptError",
    "TranscriptHistory",
    "TranscriptWarning",
    "Unreadable",
    "add_rule",
    "added_rules",
    "compare_receipts",
    "detect_format",
    "diff_texts",
    "load",
    "load_many",
    "parse",
    "recognise",
    "remove_rule",
    "rendering_of",
    "rule_of",
]
