"""A server's sampling requests (``sampling/createMessage``), answered the way the person chose.

``sampling="person"``: each request is a call of a custom tool, ``mcp_sampling``, on a card the
person fulfils (``call.fulfil("the reply")``) or denies. ``sampling=<model>`` (anything
``wb.run`` takes, or a dict of ``wb.run`` keywords with ``"model"``): each request is a call that
asks first (Allow/Deny on its card), then sends the messages to that model, tools withheld, and
returns its reply. Either way the call is recorded in the connection's history, and a denied or
failed request is answered with an error naming why, never with an invented reply.

The calls run in a registry of their own that shares the connection's history and artifact
store, so ``mcp_sampling`` is never offered to a model as one of the connection's tools.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import mcp_types as types

from workbench.registry import Registry

if TYPE_CHECKING:
    from workbench.runtime import Call

SAMPLING_TOOL = "mcp_sampling"
ANSWER_TIMEOUT_S = 600.0
"""How long a request waits for the person's answer and the model's reply."""
INPUT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "messages": {
            "type": "array",
            "description": "the conversation the server wants continued, oldest first",
            "items": {
                "type": "object",
                "properties": {"role": {"type": "string"}, "text": {"type": "string"}},
                "required": ["role", "text"],
            },
        },
        "system_prompt": {"type": ["string", "null"], "description": "the server's system prompt"},
        "max_tokens": {"type": "integer", "description": "the most tokens the server wants"},
    },
    "required": ["messages", "max_tokens"],
}


def block_text(content: Any) -> str:
    """A sampling message's content as text; other kinds are named, not sent."""
    blocks = content if isinstance(content, list) else [content]
    parts = []
    for block in blocks:
        text = getattr(block, "text", None)
        parts.append(text if isinstance(text, str) else f"[{getattr(block, 'type', 'content')}]")
    return "\n".join(parts)


class Sampler:
    """Answers one connection's sampling requests through calls of ``mcp_sampling``."""

    def __init__(self, how: Any, tools: Registry) -> None:
        self.how = how
        self.registry = Registry(history=tools.history, artifacts=tools.artifacts.root)
        self.calls: list[Call] = []
        """Every sampling request so far, as its call (pending ones wait for the person)."""
        description = "Reply to an MCP server's sampling request"
        if how == "person":
            self.registry.register(
                None,
                name=SAMPLING_TOOL,
                description=description + " (the person writes the reply)",
                input_schema=INPUT_SCHEMA,
                ownership="custom",
                family="text",
            )
        else:
            self.registry.register(
                self._ask_model,
                name=SAMPLING_TOOL,
                description=description + " (a model writes the reply, once allowed)",
                input_schema=INPUT_SCHEMA,
                permission="always_ask",
                family="text",
                timeout=ANSWER_TIMEOUT_S,
            )

    def _ask_model(self, arguments: dict[str, Any]) -> str:
        from workbench.models import run

        options = dict(self.how) if isinstance(self.how, Mapping) else {"model": self.how}
        model = options.pop("model")
        messages = arguments["messages"]
        prompt = (
            messages[0]["text"]
            if len(messages) == 1
            else "\n\n".join(f"{m['role']}: {m['text']}" for m in messages)
        )
        if arguments.get("system_prompt"):
            options.setdefault("system", arguments["system_prompt"])
        options.setdefault("max_turns", 1)
        quiet = Registry(history=self.registry.history, artifacts=self.registry.artifacts.root)
        answered = run(model, quiet, prompt, **options).wait(ANSWER_TIMEOUT_S)
        if answered.error is not None or not answered.turns:
            raise RuntimeError(f"the model did not reply: {answered.error or answered.end_reason}")
        return answered.turns[-1].text

    async def answer(
        self, params: types.CreateMessageRequestParams
    ) -> types.CreateMessageResult | types.ErrorData:
        """The reply to one request, once its call ended (on any loop: the wait is a thread's)."""
        arguments = {
            "messages": [
                {"role": message.role, "text": block_text(message.content)}
                for message in params.messages
            ],
            "system_prompt": params.system_prompt,
            "max_tokens": params.max_tokens,
        }
        call = self.registry.invoke(SAMPLING_TOOL, arguments)
        self.calls.append(call)
        envelope = await asyncio.to_thread(call.wait, ANSWER_TIMEOUT_S)
        if not envelope.ok:
            reason = envelope.error.message if envelope.error else "no reply"
            return types.ErrorData(code=types.INVALID_REQUEST, message=f"not sampled: {reason}")
        result = envelope.result
        text = result.get("text") if isinstance(result, dict) else result
        return types.CreateMessageResult(
            role="assistant",
            content=types.TextContent(type="text", text=str(text)),
            model=self.model_name(),
            stop_reason="endTurn",
        )

    def model_name(self) -> str:
        """Who wrote the replies, as the server is told: ``person`` or the model named."""
        how = self.how
        if isinstance(how, Mapping):
            how = how.get("model")
        return how if isinstance(how, str) else type(how).__name__


__all__ = ["SAMPLING_TOOL", "Sampler", "block_text"]
