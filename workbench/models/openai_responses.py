"""OpenAI Responses API. Tools go out flattened (``{"type": "function", "name", "parameters",
"strict"}``) from the ``openai-strict`` export (``openai`` with ``strict=False``); calls come
back as ``function_call`` items and results go in as ``function_call_output`` items whose
``output`` is the text. The conversation is kept as one growing ``input`` list (the run does
not rely on the server storing responses)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from types import MappingProxyType
from typing import Any, ClassVar

from workbench.models._conversation import ProviderConversation
from workbench.models._sdk import plain
from workbench.models._types import TextSink, ToolRequest, ToolResult, Turn, Usage
from workbench.models.openai_chat import client_for

NAME = "openai_responses"

__all__ = ["NAME", "ResponsesConversation", "client_for", "flatten"]


def flatten(chat_tools: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Chat Completions tool entries in the Responses shape (the function's fields at the top)."""
    return [{"type": "function", **entry["function"]} for entry in chat_tools]


class ResponsesConversation(ProviderConversation):
    """A Responses conversation: ``messages`` are the API's ``input`` items."""

    provider = NAME
    default_options: ClassVar[Mapping[str, Any]] = MappingProxyType({"store": False})

    def request(self, index: int, on_text: TextSink) -> Turn:
        """Send the items; append the response's output items."""
        data = plain(self.client.responses.create(**self.create_arguments("input")))
        output = [item for item in data.get("output") or [] if isinstance(item, dict)]
        self.messages.extend(output)
        texts: list[str] = []
        refusals: list[str] = []
        requests: list[ToolRequest] = []
        for item in output:
            if item.get("type") == "message":
                for part in item.get("content") or []:
                    if part.get("type") == "output_text":
                        texts.append(part.get("text") or "")
                    elif part.get("type") == "refusal":
                        refusals.append(part.get("refusal") or "")
            elif item.get("type") == "function_call":
                requests.append(
                    ToolRequest(item.get("call_id"), item.get("name") or "", item.get("arguments"))
                )
        text = "".join(texts)
        if text:
            on_text(text)
        usage = data.get("usage")
        incomplete = data.get("incomplete_details") or {}
        return Turn(
            index=index,
            text=text,
            requests=requests,
            stop_reason=incomplete.get("reason") or data.get("status"),
            refusal="".join(refusals) or None,
            usage=None
            if not isinstance(usage, dict)
            else Usage(int(usage.get("input_tokens") or 0), int(usage.get("output_tokens") or 0)),
            message_id=data.get("id"),
        )

    def add_results(self, results: Sequence[ToolResult]) -> None:
        """One ``function_call_output`` item per result."""
        for result in results:
            self.result_places.append((len(self.messages), 0))
            self.messages.append(
                {
                    "type": "function_call_output",
                    "call_id": result.request.id,
                    "output": result.text,
                }
            )

    def replace_result(self, request_id: str | None, position: int, text: str) -> None:
        """Change the ``output`` of the ``position``-th result item."""
        self.messages[self.result_places[position][0]]["output"] = text

    def transcript(self) -> dict[str, Any]:
        """``{"id", "model", "tools", "input"}``: what ``wb.transcripts`` reads as
        ``openai_responses``."""
        return {"id": self.run_id, "model": self.model, "tools": self.tools, "input": self.messages}
