"""Anthropic Messages. Tools go out as ``tools.export("anthropic")``; calls come back as
``tool_use`` blocks, results go in as ``tool_result`` blocks (``is_error`` for a failed call)
in one user message per turn, each block's ``content`` the text."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from types import MappingProxyType
from typing import Any, ClassVar

from workbench.models._conversation import ProviderConversation
from workbench.models._sdk import api_key, plain, sdk
from workbench.models._types import TextSink, ToolRequest, ToolResult, Turn, Usage

NAME = "anthropic"
KEY_VARIABLES = ("ANTHROPIC_API_KEY",)
DEFAULT_MAX_TOKENS = 4096


def client_for(base_url: str | None, key: str | None) -> Any:
    """An ``anthropic.Anthropic`` client for ``base_url`` (Anthropic itself when None)."""
    anthropic = sdk("anthropic", "anthropic")
    return anthropic.Anthropic(
        api_key=api_key(key, KEY_VARIABLES, "Anthropic", base_url),
        base_url=base_url,
        max_retries=0,
    )


class MessagesConversation(ProviderConversation):
    """A Messages conversation: ``messages`` in the API's own shape."""

    provider = NAME
    default_options: ClassVar[Mapping[str, Any]] = MappingProxyType(
        {"max_tokens": DEFAULT_MAX_TOKENS}
    )

    def request(self, index: int, on_text: TextSink) -> Turn:
        """Send the messages; append the assistant's content blocks."""
        data = plain(self.client.messages.create(**self.create_arguments("messages")))
        blocks = [block for block in data.get("content") or [] if isinstance(block, dict)]
        self.messages.append({"role": "assistant", "content": blocks})
        text = "".join(block.get("text") or "" for block in blocks if block.get("type") == "text")
        if text:
            on_text(text)
        usage = data.get("usage")
        stop = data.get("stop_reason")
        return Turn(
            index=index,
            text=text,
            requests=[
                ToolRequest(block.get("id"), block.get("name") or "", block.get("input"))
                for block in blocks
                if block.get("type") == "tool_use"
            ],
            stop_reason=stop,
            refusal=(text or "refusal") if stop == "refusal" else None,
            usage=None
            if not isinstance(usage, dict)
            else Usage(int(usage.get("input_tokens") or 0), int(usage.get("output_tokens") or 0)),
            message_id=data.get("id"),
        )

    def add_results(self, results: Sequence[ToolResult]) -> None:
        """One user message holding a ``tool_result`` block per result."""
        self.add_parts_message("content", [_result_block(result) for result in results])

    def replace_result(self, request_id: str | None, position: int, text: str) -> None:
        """Change the ``content`` of the ``position``-th ``tool_result`` block."""
        message, block = self.result_places[position]
        self.messages[message]["content"][block]["content"] = text


def _result_block(result: ToolResult) -> dict[str, Any]:
    block: dict[str, Any] = {
        "type": "tool_result",
        "tool_use_id": result.request.id,
        "content": result.text,
    }
    if result.is_error:
        block["is_error"] = True
    return block
