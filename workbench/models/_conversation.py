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
