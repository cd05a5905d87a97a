"""What every provider's conversation holds, whatever the API's shape."""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any, ClassVar


class ProviderConversation:
    """A conversation with one provider's API, kept in that API's own shape.

    ``messages`` is the conversation as the API takes it (Chat and Anthropic ``messages``,
    Responses ``input`` items, Gemini ``contents``), ``tools`` the tool entries as the API takes
    them, ``options`` what every request also sends: the provider's ``default_options`` under
    the caller's. ``result_places`` says where each tool result sent so far sits (the index of
    its message, and of its part within that message; 0 for a result that is a message of its
    own), so that compaction can change it later.
    """

    provider: ClassVar[str]
    default_options: ClassVar[Mapping[str, Any]] = MappingProxyType({})

    def __init__(
        self,
        client: Any,
        model: str,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]],
        *,
        run_id: str,
        options: dict[str, Any] | None = None,
    ) -> None:
        self.client = client
        self.model = model
        self.messages = messages
        self.tools = tools
        self.run_id = run_id
        self.options = {**self.default_options, **(options or {})}
        self.result_places: list[tuple[int, int]] = []

    def create_arguments(self, messages_key: str) -> dict[str, Any]:
        """The keyword arguments of the SDK's create call: the model, ``messages`` under the
        name the API gives them (``messages_key``), the options, and the tools when there are
        any (they win over an option of that name; the options win over the model and the
        messages)."""
        arguments: dict[str, Any] = {
            "model": self.model,
            messages_key: self.messages,
            **self.options,
        }
        if self.tools:
            arguments["tools"] = self.tools
        return arguments

    def add_parts_message(self, messages_key: str, parts: list[dict[str, Any]]) -> None:
        """Append one user message holding ``parts`` (under ``messages_key``), each the part
        of one tool result in order, and note where each part sits; nothing when there are
        none."""
        if not parts:
            return
        message = len(self.messages)
        self.result_places.extend((message, position) for position in range(len(parts)))
        self.messages.append({"role": "user", messages_key: parts})

    def transcript(self) -> dict[str, Any]:
        """``{"id", "model", "tools", "messages"}``: the transcript of an API whose
        conversation is ``messages`` (Chat Completions, Anthropic Messages), what
        ``wb.transcripts`` reads as that provider's."""
        return {
            "id": self.run_id,
            "model": self.model,
            "tools": self.tools,
            "messages": self.messages,
        }
