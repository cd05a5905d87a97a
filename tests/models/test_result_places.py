"""Results sent back as parts of one user message (Anthropic's ``tool_result`` blocks,
Gemini's ``functionResponse`` parts) are found again by their place when compaction rewrites
one of them."""

from __future__ import annotations

import pytest

from workbench.models._types import ToolRequest, ToolResult
from workbench.models.anthropic import MessagesConversation
from workbench.models.gemini import GeminiConversation


def _text_of(conversation, message: int, part: int) -> str:
    if isinstance(conversation, MessagesConversation):
        return conversation.messages[message]["content"][part]["content"]
    response = conversation.messages[message]["parts"][part]["functionResponse"]["response"]
    return next(iter(response.values()))


@pytest.mark.parametrize("kind", [MessagesConversation, GeminiConversation])
def test_each_result_part_is_replaced_at_its_own_place(kind):
    conversation = kind(None, "model", [{"role": "user", "content": "go"}], [], run_id="run")
    first, second = ToolRequest("c1", "look", {}), ToolRequest("c2", "read", {})
    conversation.add_results([])  # no results: no message
    assert len(conversation.messages) == 1
    conversation.add_results([ToolResult(first, "one", False), ToolResult(second, "two", True)])
    conversation.add_results([ToolResult(first, "three", False)])
    assert conversation.result_places == [(1, 0), (1, 1), (2, 0)]
    assert [message["role"] for message in conversation.messages] == ["user"] * 3

    conversation.replace_result("c2", 1, "two, compacted")
    conversation.replace_result("c1", 2, "three, compacted")
    assert _text_of(conversation, 1, 0) == "one"
    assert _text_of(conversation, 1, 1) == "two, compacted"
    assert _text_of(conversation, 2, 0) == "three, compacted"
