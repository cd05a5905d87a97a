"""What a connected server offers besides tools: resources, resource templates, prompts, roots and
its log, as the person in a notebook reaches them through the connection.

Lists are plain dicts in the server's own field names (``uri``, ``name``, ``mimeType``,
``uriTemplate``, ``arguments``...), every page of them. ``read(uri)`` is an envelope, shown as a
card: its receipt is what a host would show a model (text verbatim, blobs named by kind, size and
path), and each content of the resource is kept whole as an artifact. ``prompt(name, **args)``
is the messages the prompt produces. Roots are what the client answers ``roots/list`` with;
setting them tells the server (``notifications/roots/list_changed``). The server's log messages
collect on ``log`` (the latest ``LOG_KEPT``) and, during a call, on that call's log.
"""

from __future__ import annotations

import collections
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

import mcp_types as types

from workbench.envelope import Envelope, success
from workbench.mcp._results import content_text
from workbench.mcp._subscriptions import Subscriptions
from workbench.output import ArtifactSink
from workbench.runtime import new_call_id

if TYPE_CHECKING:
    from collections.abc import Callable, Coroutine, Iterable

    from mcp import Client

    from workbench.mcp._session import CallInfo, Session
    from workbench.registry import Registry

LOG_KEPT = 1_000
"""How many of a server's latest log messages a connection keeps."""
LIST_PAGES_MAX = 100
READ_TOOL_NAME = "mcp_read_resource"
"""The tool name a resource read's envelope carries (no such tool is registered)."""
COMPLETE_TIMEOUT_S = 5.0
"""How long a completion may take: a form asks as the person types."""
LEVELS = ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")

Root = str | os.PathLike[str]


def root_of(given: Root) -> types.Root:
    """A ``file://`` root for a path (made absolute), or the URI given as is."""
    text = os.fspath(given)
    if "://" in text:
        return types.Root(uri=text)
    path = Path(text).expanduser().resolve()
    return types.Root(uri=path.as_uri(), name=path.name or str(path))


class ServerOffers(Subscriptions):
    """The resources, prompts, roots and log of a connection's server (a part of ``Connection``)."""

    _session: Session
    tools: Registry
    target: str

    def _init_offers(self, roots: Iterable[Root] | None) -> None:
        self._roots: list[types.Root] | None = (
            None if roots is None else [root_of(root) for root in roots]
        )
        self.log: collections.deque[dict[str, Any]] = collections.deque(maxlen=LOG_KEPT)
        """The server's log messages, oldest first: ``level``, ``logger``, ``data`` (resource
        updates too, under the logger ``resources/updated``)."""
        self._init_subscriptions()

    # ── resources ───────────────────────────────────────────────────────────────────────────
    def resources(self) -> list[dict[str, Any]]:
        """The server's resources (``uri``, ``name``, ``mimeType``...), every page."""
        return self._pages(lambda client, cursor: client.list_resources(cursor=cursor), "resources")

    def resource_templates(self) -> list[dict[str, Any]]:
        """The server's resource templates (``uriTemplate``, ``name``...), every page."""
        return self._pages(
            lambda client, cursor: client.list_resource_templates(cursor=cursor),
            "resource_templates",
        )

    def read(self, uri: str) -> Envelope:
        """Read the resource at ``uri``: an envelope (shown as a card) whose receipt is what a
        host would show a model, each content kept whole as an artifact."""
        result = self._session.request(lambda client: client.read_resource(uri))
        sink = ArtifactSink(self.tools.artifacts, new_call_id())

        def save(name: str, data: bytes) -> tuple[int, str]:
            index = sink.write(name, data)
            return index, sink.store.ref(sink.path(index)).path

        for number, content in enumerate(result.contents):
            if isinstance(content, types.TextResourceContents):
                sink.write(f"resource-{number}.txt", content.text)
        blocks = [types.EmbeddedResource(type="resource", resource=c) for c in result.contents]
        text = content_text(blocks, save)
        value = {"uri": uri, "text": text, "contents": len(result.contents)}
        envelope = success(READ_TOOL_NAME, value, summary=f"{uri}: {len(result.contents)} contents")
        return envelope.replace(artifacts=sink.refs)

    # ── prompts ─────────────────────────────────────────────────────────────────────────────
    def prompts(self) -> list[dict[str, Any]]:
        """The server's prompts (``name``, ``description``, ``arguments``), every page."""
        return self._pages(lambda client, cursor: client.list_prompts(cursor=cursor), "prompts")

    def prompt(self, name: str, /, **arguments: str) -> list[dict[str, Any]]:
        """The messages the prompt ``name`` produces with ``arguments`` (``role``, ``content``)."""
        result = self._session.request(lambda client: client.get_prompt(name, arguments or None))
        return [message.model_dump(by_alias=True, exclude_none=True) for message in result.messages]

    # ── completions ─────────────────────────────────────────────────────────────────────────
    @property
    def completes(self) -> bool:
        """True when the server offers completions (``completion/complete``)."""
        client = self._session.client
        return client is not None and client.server_capabilities.completions is not None

    def complete(
        self,
        argument: str,
        value: str = "",
        *,
        prompt: str | None = None,
        template: str | None = None,
        context: dict[str, str] | None = None,
    ) -> list[str]:
        """The server's suggestions for ``argument`` of a prompt (``prompt=`` its name) or of a
        resource template (``template=`` its ``uriTemplate``), given what is typed so far
        (``value``) and the other arguments already chosen (``context``). Raises ``ValueError``
        when neither or both are named, or when the server offers no completions."""
        if (prompt is None) == (template is None):
            raise ValueError("name one of prompt= (a prompt's name) or template= (a uriTemplate)")
        if not self.completes and self._session.client is not None:
            raise ValueError("this server offers no completions (no completions capability)")
        ref: types.PromptReference | types.ResourceTemplateReference = (
            types.PromptReference(type="ref/prompt", name=prompt)
            if prompt is not None
            else types.ResourceTemplateReference(type="ref/resource", uri=str(template))
        )
        result = self._session.request(
            lambda client: client.complete(ref, {"name": argument, "value": value}, context),
            timeout=COMPLETE_TIMEOUT_S,
        )
        return list(result.completion.values)

    # ── roots ───────────────────────────────────────────────────────────────────────────────
    @property
    def roots(self) -> list[str]:
        """The roots this client offers the server (URIs); settable with paths or URIs, which
        tells the server they changed. Empty when roots were not declared at connect time."""
        return [str(root.uri) for root in self._roots or []]

    @roots.setter
    def roots(self, roots: Iterable[Root]) -> None:
        if self._roots is None:
            raise ValueError(
                "this connection declared no roots: connect with roots=[...] (even roots=[]) "
                "so the server knows to ask for them"
            )
        self._roots = [root_of(root) for root in roots]
        self._session.request(lambda client: client.send_roots_list_changed(), deprecated=True)

    def _listed_roots(self) -> list[types.Root]:
        return list(self._roots or [])

    # ── the server's log ────────────────────────────────────────────────────────────────────
    def set_log_level(self, level: types.LoggingLevel) -> None:
        """Ask the server for log messages at ``level`` and above (``debug`` ... ``emergency``)."""
        if level not in LEVELS:
            raise ValueError(f"level must be one of {', '.join(LEVELS)}, not {level!r}")
        self._session.hooks.log_level = level
        self._session.request(lambda client: client.set_logging_level(level), deprecated=True)

    def _logged(
        self, params: types.LoggingMessageNotificationParams, call: CallInfo | None
    ) -> None:
        entry = {"level": params.level, "logger": params.logger, "data": params.data}
        self.log.append(entry)
        if call is not None:
            source = f" {params.logger}" if params.logger else ""
            call.log(f"[server {params.level}{source}] {params.data}")

    # ── plumbing ────────────────────────────────────────────────────────────────────────────
    def _pages(
        self, fetch: Callable[[Client, str | None], Coroutine[Any, Any, Any]], field: str
    ) -> list[dict[str, Any]]:
        async def every_page(client: Client) -> list[dict[str, Any]]:
            items: list[dict[str, Any]] = []
            cursor: str | None = None
            for _ in range(LIST_PAGES_MAX):
                page = await fetch(client, cursor)
                items += [
                    i.model_dump(by_alias=True, exclude_none=True) for i in getattr(page, field)
                ]
                cursor = page.next_cursor
                if cursor is None:
                    break
            return items

        result: list[dict[str, Any]] = self._session.request(every_page)
        return result


__all__ = ["LEVELS", "LOG_KEPT", "READ_TOOL_NAME", "Root", "ServerOffers", "root_of"]
