"""OpenAI Chat Completions, and every server that speaks it (Ollama, vLLM, llama.cpp's server,
LM Studio: pass ``base_url``). Tools go out as ``tools.export("openai-strict")`` (``strict=False``
for ``"openai"``); results go back as ``role: "tool"`` messages whose ``content`` is the text.

With ``stream=True`` the reply is read as server-sent events: the text reaches the run's card
as it arrives and the tool calls are assembled from their pieces.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from workbench.models._conversation import ProviderConversation
from workbench.models._sdk import api_key, plain, sdk
from workbench.models._types import TextSink, ToolRequest, ToolResult, Turn, Usage

NAME = "openai_chat"
KEY_VARIABLES = ("OPENAI_API_KEY",)


def client_for(base_url: str | None, key: str | None) -> Any:
    """An ``openai.OpenAI`` client for ``base_url`` (OpenAI itself when None)."""
    openai = sdk("openai", "openai")
    return openai.OpenAI(
        api_key=api_key(key, KEY_VARIABLES, "OpenAI", base_url), base_url=base_url, max_retries=0
    )


class ChatConversation(ProviderConversation):
    """A Chat Completions conversation: ``messages`` in the API's own shape; ``stream`` reads
    each reply as server-sent events."""

    provider = NAME

    def __init__(self, *args: Any, stream: bool = False, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.stream = stream

    def request(self, index: int, on_text: TextSink) -> Turn:
        """Send the messages; append the assistant's reply."""
        arguments = self.create_arguments("messages")
        if self.stream:
            arguments["stream"] = True
            arguments["stream_options"] = {"include_usage": True}
            message, finish, usage, message_id = _read_stream(
                self.client.chat.completions.create(**arguments), on_text
            )
        else:
            response = self.client.chat.completions.create(**arguments)
            data = plain(response)
            choice = (data.get("choices") or [{}])[0]
            message = _assistant(choice.get("message") or {})
            finish = choice.get("finish_reason")
            usage = _usage(data.get("usage"))
            message_id = data.get("id")
            if message.get("content"):
                on_text(message["content"])
        self.messages.append(message)
        return Turn(
            index=index,
            text=message.get("content") or "",
            requests=[
                ToolRequest(
                    id=entry.get("id"),
                    name=entry["function"].get("name", ""),
                    raw_args=entry["function"].get("arguments"),
                )
                for entry in message.get("tool_calls") or []
            ],
            stop_reason=finish,
            refusal=message.get("refusal"),
            usage=usage,
            message_id=message_id,
        )

    def add_results(self, results: Sequence[ToolResult]) -> None:
        """One ``role: "tool"`` message per result."""
        for result in results:
            self.result_places.append((len(self.messages), 0))
            self.messages.append(
                {"role": "tool", "tool_call_id": result.request.id, "content": result.text}
            )

    def replace_result(self, request_id: str | None, position: int, text: str) -> None:
        """Change the content of the ``position``-th tool message."""
        self.messages[self.result_places[position][0]]["content"] = text


def _assistant(message: dict[str, Any]) -> dict[str, Any]:
    kept: dict[str, Any] = {"role": "assistant", "content": message.get("content")}
    for key in ("refusal", "tool_calls"):
        if message.get(key):
            kept[key] = message[key]
    return kept


def _usage(data: Any) -> Usage | None:
    if not isinstance(data, dict):
        return None
    return Usage(int(data.get("prompt_tokens") or 0), int(data.get("completion_tokens") or 0))


def _read_stream(
    stream: Any, on_text: TextSink
) -> tuple[dict[str, Any], str | None, Usage | None, str | None]:
    """The assistant message a stream of chunks adds up to, its finish reason and usage."""
    text: list[str] = []
    refusal: list[str] = []
    calls: dict[int, dict[str, Any]] = {}
    finish: str | None = None
    usage: Usage | None = None
    message_id: str | None = None
    for chunk in stream:
        data = plain(chunk)
        message_id = message_id or data.get("id")
        usage = _usage(data.get("usage")) or usage
        for choice in data.get("choices") or []:
            finish = choice.get("finish_reason") or finish
            delta = choice.get("delta") or {}
            if delta.get("content"):
                text.append(delta["content"])
                on_text(delta["content"])
            if delta.get("refusal"):
                refusal.append(delta["refusal"])
            for piece in delta.get("tool_calls") or []:
                entry = calls.setdefault(
                    int(piece.get("index", len(calls))),
                    {"id": None, "type": "function", "function": {"name": "", "arguments": ""}},
                )
                entry["id"] = piece.get("id") or entry["id"]
                function = piece.get("function") or {}
                entry["function"]["name"] += function.get("name") or ""
                entry["function"]["arguments"] += function.get("arguments") or ""
    message: dict[str, Any] = {"role": "assistant", "content": "".join(text) or None}
    if refusal:
        message["refusal"] = "".join(refusal)
    if calls:
        message["tool_calls"] = [calls[key] for key in sorted(calls)]
    return message, finish, usage, message_id
