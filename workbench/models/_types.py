"""What every provider adapter hands the run loop: one model turn, the tool calls in it, the
tokens it cost; and what the loop hands back: the text each call's result is sent as."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from dataclasses import field
from typing import Any, ClassVar, Protocol

TextSink = Callable[[str], None]
"""Receives the model's text as it arrives (a whole message, or streamed pieces)."""


@dataclasses.dataclass(frozen=True, slots=True)
class ToolRequest:
    """One tool call a model asked for: ``raw_args`` exactly as it sent them (a JSON string in
    the OpenAI APIs, an object in Anthropic's and Gemini's), ``id`` the id it gave the call."""

    id: str | None
    name: str
    raw_args: Any


@dataclasses.dataclass(frozen=True, slots=True)
class Usage:
    """Tokens a turn cost, as the provider reported them; ``cost`` in dollars when the run was
    given ``price``."""

    input_tokens: int
    output_tokens: int
    cost: float | None = None

    @property
    def total_tokens(self) -> int:
        """Input and output tokens together."""
        return self.input_tokens + self.output_tokens


@dataclasses.dataclass(slots=True)
class Turn:
    """One reply of the model: its text, the tool calls it asked for (in order; several are
    parallel calls), why it stopped (the provider's own word), a refusal when it refused, and
    the usage it reported (None when it reported none)."""

    index: int
    text: str = ""
    requests: list[ToolRequest] = field(default_factory=list)
    stop_reason: str | None = None
    refusal: str | None = None
    usage: Usage | None = None
    message_id: str | None = None


@dataclasses.dataclass(frozen=True, slots=True)
class ToolResult:
    """What is sent back for one request: ``text`` (the call's receipt, or the person's edit of
    it) and whether the call failed (for the formats that carry an error flag)."""

    request: ToolRequest
    text: str
    is_error: bool


class Conversation(Protocol):
    """One provider's side of a run: it keeps the conversation in the provider's own message
    format, sends it, reads the reply, and adds tool results the way that provider expects."""

    provider: ClassVar[str]
    """The transcript format of the conversation (a ``wb.transcripts`` format name)."""
    model: str

    def request(self, index: int, on_text: TextSink) -> Turn:
        """Send the conversation as it stands, append the model's reply to it, return the turn."""
        ...

    def add_results(self, results: Sequence[ToolResult]) -> None:
        """Append the results of the last turn's calls, in the order they were asked for."""
        ...

    def replace_result(self, request_id: str | None, position: int, text: str) -> None:
        """Change the text of a result already in the conversation (compaction):
        ``position`` counts results from the start of the run."""
        ...

    def transcript(self) -> dict[str, Any]:
        """The run so far in the provider's own format, JSON-ready (``wb.transcripts.load``
        reads it back)."""
        ...


class ModelError(RuntimeError):
    """A provider could not be reached or refused the request: the message says which provider,
    what happened and what to do."""


class MissingKey(ModelError):
    """No API key was given and the environment variable that holds one is not set."""
