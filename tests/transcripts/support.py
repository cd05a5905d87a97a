"""A run logged as API traffic, for the tests that read such logs: the request/response pairs a
proxy or an SDK hook writes, one per model turn, each request carrying the run so far."""

from __future__ import annotations

from typing import Any

RUN_KEY = {"openai_responses": "input", "gemini": "contents"}
"""Where a request of each format carries the run (``messages`` for the others)."""
CARRIED = ("tools", "system", "systemInstruction")
"""What every request repeats beside the run."""


def model_sent(format: str, entry: dict[str, Any]) -> bool:
    """True for an entry of the run that the model sent (and a response carries)."""
    if format == "openai_responses":  # the model's items: calls of every kind, and its messages
        kind = str(entry.get("type"))
        return entry.get("role") == "assistant" or kind.endswith("_call")
    return entry.get("role") in ("assistant", "model")


def response(format: str, turn: list[dict[str, Any]], number: int) -> dict[str, Any]:
    """The API's response object carrying the model's ``turn``."""
    if format == "openai_chat":
        choice = {"index": 0, "message": turn[0], "finish_reason": "tool_calls"}
        return {"object": "chat.completion", "id": f"chatcmpl-{number}", "choices": [choice]}
    if format == "anthropic":
        return {"type": "message", "id": f"msg_{number}", **turn[0]}
    if format == "gemini":
        return {"responseId": f"r{number}", "candidates": [{"content": turn[0]}]}
    return {"object": "response", "id": f"resp_{number}", "output": turn}


def as_pairs(format: str, document: dict[str, Any] | list[Any]) -> list[dict[str, Any]]:
    """The run of ``document`` (or a bare list of messages) logged call by call: each request
    carries the run so far, each response the model's next turn (a Responses turn is every
    item the model sent in a row); a last request carries the results of the last turn."""
    key = RUN_KEY.get(format, "messages")
    document = {key: document} if isinstance(document, list) else document
    run = [*(document.get(key) or []), *(document.get("output") or [])]
    carried = {name: value for name, value in document.items() if name in CARRIED}
    pairs: list[dict[str, Any]] = []
    at = 0
    while at < len(run):
        if not model_sent(format, run[at]):
            at += 1
            continue
        end = at + 1
        while format == "openai_responses" and end < len(run) and model_sent(format, run[end]):
            end += 1
        request = {"model": "m", **carried, key: run[:at]}
        pairs.append({"request": request, "response": response(format, run[at:end], len(pairs))})
        at = end
    return [*pairs, {"request": {"model": "m", **carried, key: run}}]
