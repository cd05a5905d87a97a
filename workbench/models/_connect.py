"""From what a person passes to ``wb.run`` (a ``"provider:model"`` string or an SDK client) to
the provider's conversation, with the tools exported in that provider's dialect."""

from __future__ import annotations

import copy
from typing import TYPE_CHECKING, Any

from workbench.models import anthropic, gemini, openai_chat, openai_responses
from workbench.models._types import Conversation

if TYPE_CHECKING:
    from workbench.registry import Registry

PROVIDERS: dict[str, str] = {
    "openai": openai_chat.NAME,
    "openai_chat": openai_chat.NAME,
    "chat": openai_chat.NAME,
    "openai_responses": openai_responses.NAME,
    "responses": openai_responses.NAME,
    "anthropic": anthropic.NAME,
    "claude": anthropic.NAME,
    "gemini": gemini.NAME,
    "google": gemini.NAME,
}
"""The provider names a model string may start with (``-`` and ``_`` alike)."""


def parse_model(model: str) -> tuple[str, str]:
    """``"provider:model"`` as (conversation format, model name); ``ValueError`` naming the
    providers when the prefix is missing or unknown."""
    provider, colon, name = model.partition(":")
    key = provider.strip().lower().replace("-", "_")
    if not colon or not name or key not in PROVIDERS:
        known = ", ".join(sorted({"openai", "openai-responses", "anthropic", "gemini"}))
        raise ValueError(
            f"model {model!r} is not 'provider:model'; the provider is one of {known} "
            "(e.g. 'openai:gpt-4.1', 'anthropic:claude-sonnet-4-6', 'gemini:gemini-2.5-flash', "
            "or 'openai:llama3.2' with base_url= for an OpenAI-compatible server)"
        )
    return PROVIDERS[key], name


def provider_of_client(client: Any, api: str | None) -> str:
    """The conversation format an SDK client speaks (``api="responses"`` for OpenAI's
    Responses API)."""
    module = type(client).__module__.split(".")[0]
    if module == "openai":
        return (
            openai_responses.NAME if api in ("responses", "openai_responses") else openai_chat.NAME
        )
    if module == "anthropic":
        return anthropic.NAME
    if module == "google":
        return gemini.NAME
    raise TypeError(
        f"model is a {type(client).__name__}: pass an openai, anthropic or google-genai client, "
        "or a 'provider:model' string"
    )


def conversation(
    model: Any,
    tools: Registry,
    prompt: str | list[dict[str, Any]],
    *,
    run_id: str,
    model_name: str | None = None,
    base_url: str | None = None,
    api_key: str | None = None,
    api: str | None = None,
    system: str | None = None,
    strict: bool = True,
    stream: bool = False,
    options: dict[str, Any] | None = None,
) -> Conversation:
    """The conversation ``wb.run`` drives, its first message ``prompt`` (a string, or a list of
    messages already in the provider's format)."""
    if isinstance(model, str):
        provider, name = parse_model(model)
        if api in ("responses", "openai_responses") and provider == openai_chat.NAME:
            provider = openai_responses.NAME
        client = None
    else:
        provider, client = provider_of_client(model, api), model
        if not model_name:
            raise ValueError("with an SDK client as model, say which model: model_name='...'")
        name = model_name
    options = dict(options or {})
    history = copy.deepcopy(prompt) if isinstance(prompt, list) else None
    if provider in (openai_chat.NAME, openai_responses.NAME):
        client = client or openai_chat.client_for(base_url, api_key)
        chat_tools = tools.export("openai-strict" if strict else "openai")
        if provider == openai_chat.NAME:
            messages = history or [{"role": "user", "content": prompt}]
            if system and history is None:
                messages.insert(0, {"role": "system", "content": system})
            return openai_chat.ChatConversation(
                client, name, messages, chat_tools, run_id=run_id, stream=stream, options=options
            )
        if system:
            options.setdefault("instructions", system)
        items = history or [{"role": "user", "content": prompt}]
        return openai_responses.ResponsesConversation(
            client,
            name,
            items,
            openai_responses.flatten(chat_tools),
            run_id=run_id,
            options=options,
        )
    if provider == anthropic.NAME:
        client = client or anthropic.client_for(base_url, api_key)
        if system:
            options.setdefault("system", system)
        messages = history or [{"role": "user", "content": prompt}]
        return anthropic.MessagesConversation(
            client, name, messages, tools.export("anthropic"), run_id=run_id, options=options
        )
    client = client or gemini.client_for(base_url, api_key)
    if system:
        options.setdefault("system_instruction", system)
    contents = history or [{"role": "user", "parts": [{"text": prompt}]}]
    return gemini.GeminiConversation(
        client, name, contents, tools.export("gemini"), run_id=run_id, options=options
    )
