"""Gemini (``google-genai``). Tools go out as ``tools.export("gemini")`` function
declarations; calls come back as ``functionCall`` parts, results go in as ``functionResponse``
parts, ``{"output": text}`` for a success and ``{"error": text}`` for a failure (the keys
Gemini's documentation gives). The conversation is kept as REST ``contents`` (camelCase), the
form ``wb.transcripts`` reads as ``gemini``."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from workbench.models._conversation import ProviderConversation
from workbench.models._sdk import api_key, sdk
from workbench.models._types import TextSink, ToolRequest, ToolResult, Turn, Usage

NAME = "gemini"
KEY_VARIABLES = ("GEMINI_API_KEY", "GOOGLE_API_KEY")


def client_for(base_url: str | None, key: str | None) -> Any:
    """A ``google.genai.Client`` for ``base_url`` (Google's endpoint when None)."""
    genai = sdk("google.genai", "gemini")
    options = None if base_url is None else genai.types.HttpOptions(base_url=base_url)
    return genai.Client(
        api_key=api_key(key, KEY_VARIABLES, "Gemini", base_url), http_options=options
    )


def _wire(model: Any) -> Any:
    return model.model_dump(mode="json", by_alias=True, exclude_none=True)


class GeminiConversation(ProviderConversation):
    """A generateContent conversation: ``messages`` are the REST API's ``contents`` and
    ``tools`` its function declarations."""

    provider = NAME

    def request(self, index: int, on_text: TextSink) -> Turn:
        """Send the contents; append the first candidate's content."""
        types = sdk("google.genai.types", "gemini")
        config = types.GenerateContentConfig(
            tools=[types.Tool(function_declarations=self.tools)] if self.tools else None,
            automatic_function_calling=types.AutomaticFunctionCallingConfig(disable=True),
            **self.options,
        )
        response = self.client.models.generate_content(
            model=self.model,
            contents=[types.Content.model_validate(content) for content in self.messages],
            config=config,
        )
        candidates = response.candidates or []
        candidate = candidates[0] if candidates else None
        content = _wire(candidate.content) if candidate and candidate.content else {}
        content.setdefault("role", "model")
        content.setdefault("parts", [])
        self.messages.append(content)
        text = "".join(
            part.get("text") or "" for part in content["parts"] if not part.get("thought")
        )
        if text:
            on_text(text)
        finish = (
            None
            if candidate is None or candidate.finish_reason is None
            else str(getattr(candidate.finish_reason, "value", candidate.finish_reason))
        )
        feedback = response.prompt_feedback
        blocked = (
            None
            if feedback is None or feedback.block_reason is None
            else str(getattr(feedback.block_reason, "value", feedback.block_reason))
        )
        meta = response.usage_metadata
        return Turn(
            index=index,
            text=text,
            requests=[
                ToolRequest(
                    part["functionCall"].get("id"),
                    part["functionCall"].get("name") or "",
                    part["functionCall"].get("args", {}),
                )
                for part in content["parts"]
                if isinstance(part.get("functionCall"), dict)
            ],
            stop_reason=finish or blocked,
            refusal=blocked or (finish if finish in ("SAFETY", "PROHIBITED_CONTENT") else None),
            usage=None
            if meta is None
            else Usage(int(meta.prompt_token_count or 0), int(meta.candidates_token_count or 0)),
            message_id=response.response_id,
        )

    def add_results(self, results: Sequence[ToolResult]) -> None:
        """One user content holding a ``functionResponse`` part per result."""
        self.add_parts_message("parts", [_response_part(result) for result in results])

    def replace_result(self, request_id: str | None, position: int, text: str) -> None:
        """Change the text of the ``position``-th ``functionResponse``."""
        content, part = self.result_places[position]
        response = self.messages[content]["parts"][part]["functionResponse"]["response"]
        key = next(iter(response))
        response[key] = text

    def transcript(self) -> dict[str, Any]:
        """``{"id", "model", "tools", "contents"}``: what ``wb.transcripts`` reads as
        ``gemini``."""
        return {
            "id": self.run_id,
            "model": self.model,
            "tools": [{"functionDeclarations": self.tools}],
            "contents": self.messages,
        }


def _response_part(result: ToolResult) -> dict[str, Any]:
    response: dict[str, Any] = {
        "name": result.request.name,
        "response": {("error" if result.is_error else "output"): result.text},
    }
    if result.request.id is not None:
        response = {"id": result.request.id, **response}
    return {"functionResponse": response}
