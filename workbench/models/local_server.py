"""A scripted stand-in for the providers' HTTP APIs, on 127.0.0.1, for demos and tests.

It is **not a model**: it answers each request with the next reply of a script, whatever the
request says. It speaks enough of each API for the official SDKs to talk to it through their
``base_url``: OpenAI Chat Completions (``POST /v1/chat/completions``, JSON or server-sent
events) and Responses (``POST /v1/responses``), Anthropic Messages (``POST /v1/messages``) and
Gemini (``POST /v1beta/models/<model>:generateContent``, or ``/v1/`` as google-genai sends it
to a custom ``base_url``). It keeps every request it received
(``server.requests``), so a test can read exactly what an SDK sent.

    with ScriptedServer({"openai_chat": replies}) as server:
        wb.run("openai:scripted", tools, "...", base_url=server.openai_base_url)

A reply is ``{"json": body}`` (status 200 unless ``"status"`` says otherwise), or
``{"sse": [event, ...]}`` (each event a JSON object sent as a ``data:`` line; OpenAI streams
end with ``data: [DONE]``), or ``{"sse": "raw text"}`` sent as it is. A request with no reply
left gets a 500 whose message says so. ``DEMO_SCRIPT`` is the conversation notebook 09 uses.
"""

from __future__ import annotations

import dataclasses
import json
import threading
from collections import deque
from collections.abc import Mapping, Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

Reply = dict[str, Any]

ROUTES: dict[str, str] = {
    "/v1/chat/completions": "openai_chat",
    "/v1/responses": "openai_responses",
    "/v1/messages": "anthropic",
}
"""Request path → the provider whose replies answer it (Gemini's paths name the model)."""


@dataclasses.dataclass(frozen=True, slots=True)
class Received:
    """One request as the server received it: which provider's API, the path, the headers
    (names in lower case) and the JSON body."""

    provider: str
    path: str
    headers: dict[str, str]
    body: Any


def load_script(path: str | Path) -> dict[str, list[Reply]]:
    """A script from a JSON file ``{"provider": ..., "replies": [...]}`` (or a mapping of
    provider → replies)."""
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    if isinstance(data, dict) and "provider" in data:
        return {data["provider"]: list(data["replies"])}
    return {str(key): list(value) for key, value in data.items()}


class ScriptedServer:
    """The server; ``start()`` (or ``with``) binds a free port on 127.0.0.1, ``stop()`` closes
    it. ``url`` is its address; ``openai_base_url`` the ``base_url`` the OpenAI SDK wants."""

    def __init__(self, script: Mapping[str, Sequence[Reply]] | None = None) -> None:
        self._replies: dict[str, deque[Reply]] = {}
        self.requests: list[Received] = []
        self._lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None
        for provider, replies in (script or {}).items():
            self.add(provider, *replies)

    def add(self, provider: str, *replies: Reply) -> None:
        """Queue ``replies`` for ``provider``'s API, after those already queued."""
        with self._lock:
            self._replies.setdefault(provider, deque()).extend(replies)

    def left(self, provider: str) -> int:
        """How many replies are still queued for ``provider``."""
        with self._lock:
            return len(self._replies.get(provider, ()))

    @property
    def url(self) -> str:
        """``http://127.0.0.1:<port>``."""
        if self._server is None:
            raise RuntimeError("the scripted server is not started")
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    @property
    def openai_base_url(self) -> str:
        """The ``base_url`` for the OpenAI SDK (``url`` + ``/v1``)."""
        return f"{self.url}/v1"

    def start(self) -> ScriptedServer:
        """Listen on a free port of 127.0.0.1, answering on a thread of its own."""
        if self._server is not None:
            return self
        server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        server.daemon_threads = True
        self._server = server
        self._thread = threading.Thread(
            target=server.serve_forever, name="workbench-scripted-server", daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop listening and close the port."""
        server, self._server = self._server, None
        if server is not None:
            server.shutdown()
            server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None

    def __enter__(self) -> ScriptedServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _next(self, provider: str) -> Reply | None:
        with self._lock:
            queue = self._replies.get(provider)
            return queue.popleft() if queue else None

    def _record(self, received: Received) -> None:
        with self._lock:
            self.requests.append(received)


def provider_of_path(path: str) -> str | None:
    """The provider whose API ``path`` belongs to, or None."""
    bare = path.split("?", 1)[0]
    if bare in ROUTES:
        return ROUTES[bare]
    if bare.startswith(("/v1beta/models/", "/v1/models/")) and (
        bare.endswith((":generateContent", ":streamGenerateContent"))
    ):
        return "gemini"
    return None


def _handler(owner: ScriptedServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:
            """Quiet: the requests are kept in ``owner.requests``, not printed."""

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length)
            try:
                body = json.loads(raw) if raw else None
            except ValueError:
                body = raw.decode("utf-8", "replace")
            provider = provider_of_path(self.path)
            if provider is None:
                self._json(404, _error(f"the scripted server does not serve {self.path}"))
                return
            headers = {name.lower(): value for name, value in self.headers.items()}
            owner._record(Received(provider, self.path, headers, body))
            reply = owner._next(provider)
            if reply is None:
                self._json(500, _error(f"the script has no reply left for {provider}"))
                return
            if "sse" in reply:
                self._sse(provider, reply["sse"])
            else:
                self._json(int(reply.get("status", 200)), reply.get("json"))

        def _json(self, status: int, body: Any) -> None:
            data = json.dumps(body).encode("utf-8")
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def _sse(self, provider: str, events: str | list[Any]) -> None:
            if isinstance(events, str):
                text = events
            else:
                text = "".join(f"data: {json.dumps(event)}\n\n" for event in events)
                if provider.startswith("openai"):
                    text += "data: [DONE]\n\n"
            data = text.encode("utf-8")
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    return Handler


def _error(message: str) -> dict[str, Any]:
    return {"error": {"message": message, "type": "scripted_server_error", "code": 500}}


def _chat(reply_id: str, message: dict[str, Any], finish: str, usage: tuple[int, int]) -> Reply:
    return {
        "json": {
            "id": reply_id,
            "object": "chat.completion",
            "created": 1767225600,
            "model": "scripted-model",
            "choices": [
                {"index": 0, "message": message, "logprobs": None, "finish_reason": finish}
            ],
            "usage": {
                "prompt_tokens": usage[0],
                "completion_tokens": usage[1],
                "total_tokens": usage[0] + usage[1],
            },
        }
    }


def _tool_call(call_id: str, name: str, arguments: str) -> dict[str, Any]:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


def _asking(reply_id: str, content: str | None, usage: tuple[int, int], *calls: Any) -> Reply:
    """A chat completion whose assistant message asks for ``calls`` (``_tool_call`` each)."""
    message = {"role": "assistant", "content": content, "tool_calls": list(calls)}
    return _chat(reply_id, message, "tool_calls", usage)


DEMO_SCRIPT: dict[str, list[Reply]] = {
    "openai_chat": [
        _asking(
            "chatcmpl-demo-1",
            "I'll list the notes and remove the old draft.",
            (412, 61),
            _tool_call("call_demo_list", "list_notes", "{}"),
            _tool_call("call_demo_delete_draft", "delete_note", '{"name": "draft.txt"}'),
        ),
        _asking(
            "chatcmpl-demo-2",
            "Now the to-do list goes too, and I'll count the words in ideas.txt.",
            (530, 58),
            _tool_call("call_demo_delete_todo", "delete_note", '{"name": "todo.txt"}'),
            _tool_call("call_demo_count", "count_words", '{"name": "ideas.txt"}'),
        ),
        _asking(
            "chatcmpl-demo-3",
            None,
            (604, 25),
            _tool_call("call_demo_read", "read_note", '{"name": "todo.txt", "lines": "2"}'),
        ),
        _chat(
            "chatcmpl-demo-4",
            {
                "role": "assistant",
                "content": "Done: the notes are listed and todo.txt starts with the lines above.",
            },
            "stop",
            (688, 31),
        ),
    ]
}
"""The scripted conversation of notebook 09 (Chat Completions): two parallel calls (one that
asks for approval), another approval beside a slow call to terminate, a call whose ``"2"``
the preflight coerces, and a closing answer. It answers in this order whatever was sent back."""
