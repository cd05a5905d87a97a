"""What a connected server offers besides tools: resources, resource templates, prompts, roots and
its log, as the person in a notebook reaches them through the connection.

Lists are ``Listing``s of plain dicts in the server's own field names (``uri``, ``name``,
``mimeType``, ``uriTemplate``, ``arguments``...), every page of them: one that stopped early says
where and why on ``stopped`` and on the log. ``read(uri)`` is a call of ``mcp_read_resource``
(``_reading``): an envelope whose receipt is what a host would show a model, bounded like any
tool's. ``prompt(name, **args)`` is the messages the prompt produces. Every request has a time
limit (``timeout=``, ``REQUEST_TIMEOUT_S`` by default), past which it is cancelled and
``RequestTimedOut`` names it. Roots are what the client answers ``roots/list`` with; setting
them tells the server (``notifications/roots/list_changed``). The server's log messages collect
on ``log`` (the latest ``LOG_KEPT``) and, during a call, on that call's log.
"""

from __future__ import annotations

import collections
import os
import warnings
from collections.abc import Callable, Coroutine, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import mcp_types as types

from workbench.mcp._limits import REQUEST_TIMEOUT_S, checked_timeout
from workbench.mcp._listing import Listing, checked_limit, every_page
from workbench.mcp._reading import READ_TOOL_NAME, Reader
from workbench.mcp._subscriptions import Subscriptions

if TYPE_CHECKING:
    from collections.abc import Iterable

    from mcp import Client

    from workbench.envelope import Envelope
    from workbench.mcp._session import CallInfo, Session
    from workbench.registry import Registry

LOG_KEPT = 1_000
"""How many of a server's latest log messages a connection keeps."""
COMPLETE_TIMEOUT_S = 5.0
"""How long a completion may take by default: a form asks as the person types."""
LEVELS = ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")
WORKBENCH_LOGGER = "workbench"
"""The logger name of what the connection itself puts on its log (a list that stopped early)."""
UNTIED_LOG_NOTE = (
    "server log lines that arrived while this call ran (this protocol version does not tie a "
    "log message to a request: they may belong to something else the server did):"
)
"""Said on a call's log before the first server log line that the protocol does not tie to it."""

Root = str | os.PathLike[str]


@dataclass(frozen=True)
class ListKind:
    """One of a server's lists: how a page is fetched, the page's field of items and the
    method named in messages."""

    fetch: Callable[[Client, str | None], Coroutine[Any, Any, Any]]
    field: str
    method: str


RESOURCES = ListKind(
    lambda c, cursor: c.list_resources(cursor=cursor), "resources", "resources/list"
)
TEMPLATES = ListKind(
    lambda c, cursor: c.list_resource_templates(cursor=cursor),
    "resource_templates",
    "resources/templates/list",
)
PROMPTS = ListKind(lambda c, cursor: c.list_prompts(cursor=cursor), "prompts", "prompts/list")


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
        updates too, under the logger ``resources/updated``, and what the connection itself
        says, under ``workbench``)."""
        self._reader = Reader(self._session, self.tools)
        self._init_subscriptions()

    # ── resources ───────────────────────────────────────────────────────────────────────────
    def resources(
        self, *, limit: int | None = None, timeout: float | None = REQUEST_TIMEOUT_S
    ) -> Listing[dict[str, Any]]:
        """The server's resources (``uri``, ``name``, ``mimeType``...), every page: at most
        ``limit`` of them (``LIST_ITEMS_MAX``), within ``timeout`` seconds for the whole list."""
        return self._pages(RESOURCES, limit, timeout)

    def resource_templates(
        self, *, limit: int | None = None, timeout: float | None = REQUEST_TIMEOUT_S
    ) -> Listing[dict[str, Any]]:
        """The server's resource templates (``uriTemplate``, ``name``...), every page, as
        ``resources()`` lists them."""
        return self._pages(TEMPLATES, limit, timeout)

    def read(self, uri: str, *, timeout: float | None = REQUEST_TIMEOUT_S) -> Envelope:
        """Read the resource at ``uri`` as a call of ``mcp_read_resource`` (shown as a card,
        kept in the history): its receipt is what a host would show a model, a long text cut
        head and tail like a tool's, the whole kept as an artifact the receipt names. A read
        that fails, or gets no answer within ``timeout`` seconds, is a failure envelope."""
        return self._reader.read(uri, timeout)

    @property
    def reads(self) -> Registry:
        """The registry whose ``mcp_read_resource`` calls are this connection's reads (it shares
        the connection's history and artifacts)."""
        return self._reader.registry

    # ── prompts ─────────────────────────────────────────────────────────────────────────────
    def prompts(
        self, *, limit: int | None = None, timeout: float | None = REQUEST_TIMEOUT_S
    ) -> Listing[dict[str, Any]]:
        """The server's prompts (``name``, ``description``, ``arguments``), every page, as
        ``resources()`` lists them."""
        return self._pages(PROMPTS, limit, timeout)

    def prompt(
        self,
        name: str,
        /,
        arguments: Mapping[str, str] | None = None,
        *,
        timeout: float | None = REQUEST_TIMEOUT_S,
        **named: str,
    ) -> list[dict[str, Any]]:
        """The messages the prompt ``name`` produces (``role``, ``content``) with its arguments,
        given as keywords or as the mapping ``arguments`` (for one called ``timeout``)."""
        given = {**(arguments or {}), **named}
        result = self._session.request(
            lambda client: client.get_prompt(name, given or None),
            what=f"prompts/get of {name!r}",
            timeout=checked_timeout(timeout),
        )
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
        timeout: float | None = COMPLETE_TIMEOUT_S,
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
            what=f"completion/complete of {argument!r}",
            timeout=checked_timeout(timeout),
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
        self._session.request(
            lambda client: client.send_roots_list_changed(),
            what="notifications/roots/list_changed",
            deprecated=True,
        )

    def _listed_roots(self) -> list[types.Root]:
        return list(self._roots or [])

    # ── the server's log ────────────────────────────────────────────────────────────────────
    def set_log_level(
        self, level: types.LoggingLevel, *, timeout: float | None = REQUEST_TIMEOUT_S
    ) -> None:
        """Ask the server for log messages at ``level`` and above (``debug`` ... ``emergency``).
        Raises ``ValueError`` for another level, or when the server does not log (no logging
        capability)."""
        if level not in LEVELS:
            raise ValueError(f"level must be one of {', '.join(LEVELS)}, not {level!r}")
        session = self._session
        client = session.client  # None once the session ended: the request says so
        if client is not None and client.server_capabilities.logging is None:
            raise ValueError("this server does not log (its capabilities have no logging)")
        session.hooks.log_level = level
        if session.modern:
            return  # 2026-07-28 asks on each request, at the level of the hooks (call_tool)
        session.request(
            lambda client: client.set_logging_level(level),
            what=f"logging/setLevel to {level!r}",
            deprecated=True,
            timeout=checked_timeout(timeout),
        )

    def _logged(
        self, params: types.LoggingMessageNotificationParams, call: CallInfo | None, tied: bool
    ) -> None:
        entry = {"level": params.level, "logger": params.logger, "data": params.data}
        self.log.append(entry)
        if call is None:
            return
        if not tied and not call.told_untied_log:
            call.told_untied_log = True
            call.log(UNTIED_LOG_NOTE)
        source = f" {params.logger}" if params.logger else ""
        call.log(f"[server {params.level}{source}] {params.data}")

    def _note(self, text: str) -> None:
        """Say something of the connection's own where the person looks: on its log, and as a
        warning."""
        self.log.append({"level": "warning", "logger": WORKBENCH_LOGGER, "data": text})
        warnings.warn(f"{self.target}: {text}", stacklevel=3)

    # ── plumbing ────────────────────────────────────────────────────────────────────────────
    def _pages(
        self, kind: ListKind, limit: int | None, timeout: float | None
    ) -> Listing[dict[str, Any]]:
        most = checked_limit(limit)

        async def every(client: Client) -> Listing[dict[str, Any]]:
            return await every_page(
                lambda cursor: kind.fetch(client, cursor),
                lambda page: [
                    item.model_dump(by_alias=True, exclude_none=True)
                    for item in getattr(page, kind.field)
                ],
                what=kind.field.replace("_", " "),
                limit=most,
            )

        listed: Listing[dict[str, Any]] = self._session.request(
            every, what=kind.method, timeout=checked_timeout(timeout)
        )
        if listed.stopped is not None:
            self._note(f"{kind.method}: {listed.stopped}")
        return listed


__all__ = [
    "COMPLETE_TIMEOUT_S",
    "LEVELS",
    "LOG_KEPT",
    "READ_TOOL_NAME",
    "WORKBENCH_LOGGER",
    "Root",
    "ServerOffers",
    "root_of",
]
