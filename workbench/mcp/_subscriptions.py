"""Resource subscriptions of a connection: the person asks to be told when a resource changes,
and each update the server sends is shown as it arrives (``notifications/resources/updated``
after ``resources/subscribe``; over protocol 2026-07-28, which replaced them, events of one
``subscriptions/listen`` stream for every subscribed URI).

An update is kept on ``updates`` (the latest ``UPDATES_KEPT``: ``uri``, ``at``), written to the
connection's ``log`` (logger ``resources/updated``), put on the card of the call in flight when
one is, and handed to the ``on_update`` functions given for its URI. Every update the server
sends is kept, subscribed or not, so what a server does after ``unsubscribe`` stays visible;
only the functions of a URI still subscribed are called.
"""

from __future__ import annotations

import collections
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from workbench.mcp._limits import REQUEST_TIMEOUT_S, checked_timeout

if TYPE_CHECKING:
    from workbench.mcp._session import CallInfo, Session

UPDATES_KEPT = 1_000
"""How many of a server's latest resource updates a connection keeps."""
UPDATED_LOGGER = "resources/updated"
"""The logger name under which resource updates appear on the connection's log."""
TRANSPORT_LOGGER = "transport"
"""The logger name of the transport's faults on the connection's log."""

OnUpdate = Callable[[str], object]


class Subscriptions:
    """The resource subscriptions of a connection (a part of ``Connection``)."""

    _session: Session
    log: collections.deque[dict[str, Any]]

    def _init_subscriptions(self) -> None:
        self.updates: collections.deque[dict[str, Any]] = collections.deque(maxlen=UPDATES_KEPT)
        """The server's resource updates, oldest first: ``uri`` and ``at`` (epoch seconds)."""
        self._subscribed: dict[str, list[OnUpdate]] = {}
        self._subscribed_lock = threading.Lock()

    @property
    def subscriptions(self) -> list[str]:
        """The URIs this connection is subscribed to, in the order they were subscribed."""
        with self._subscribed_lock:
            return list(self._subscribed)

    def subscribe(
        self,
        uri: str,
        on_update: OnUpdate | None = None,
        *,
        timeout: float | None = REQUEST_TIMEOUT_S,
    ) -> None:
        """Ask the server to say when the resource at ``uri`` changes (``resources/subscribe``).

        Its updates arrive on ``updates`` and the connection's ``log``; ``on_update(uri)`` is
        called for each (on workbench's MCP thread: keep it short). Subscribing again adds
        ``on_update``. Raises ``ValueError`` when the server offers no subscriptions, what the
        server answers when it refuses, and ``RequestTimedOut`` past ``timeout`` seconds.
        """
        checked_timeout(timeout)
        client = self._session.client  # None once the session ended: the request says so
        resources = None if client is None else client.server_capabilities.resources
        if client is not None and not (resources is not None and resources.subscribe):
            raise ValueError(
                "this server does not offer resource subscriptions (its resources capability "
                "has no subscribe)"
            )
        with self._subscribed_lock:
            wanted = [*self._subscribed, *([] if uri in self._subscribed else [uri])]
        self._tell_server(uri, wanted, subscribe=True, timeout=timeout)
        with self._subscribed_lock:
            listeners = self._subscribed.setdefault(uri, [])
            if on_update is not None:
                listeners.append(on_update)

    def unsubscribe(self, uri: str, *, timeout: float | None = REQUEST_TIMEOUT_S) -> None:
        """Stop the updates of ``uri`` (``resources/unsubscribe``); its ``on_update`` functions
        are dropped. Raises ``ValueError`` for a URI this connection is not subscribed to."""
        checked_timeout(timeout)
        with self._subscribed_lock:
            if uri not in self._subscribed:
                subscribed = ", ".join(self._subscribed) or "none"
                raise ValueError(f"not subscribed to {uri!r}; subscribed: {subscribed}")
            del self._subscribed[uri]
            wanted = list(self._subscribed)
        self._tell_server(uri, wanted, subscribe=False, timeout=timeout)

    def _tell_server(
        self, uri: str, wanted: list[str], *, subscribe: bool, timeout: float | None
    ) -> None:
        """``resources/subscribe`` or ``unsubscribe`` for ``uri``; over protocol 2026-07-28,
        which has neither, one ``subscriptions/listen`` stream for every URI ``wanted``."""
        session = self._session
        if session.modern:
            what = f"subscriptions/listen for {len(wanted)} resources"
            session.run_blocking(
                session.bounded(session.listen_resources(wanted), what, timeout), None
            )
        elif subscribe:
            session.request(
                lambda client: client.subscribe_resource(uri),
                what=f"resources/subscribe of {uri!r}",
                deprecated=True,
                timeout=timeout,
            )
        else:
            session.request(
                lambda client: client.unsubscribe_resource(uri),
                what=f"resources/unsubscribe of {uri!r}",
                deprecated=True,
                timeout=timeout,
            )

    def _updated(self, uri: str, call: CallInfo | None) -> None:
        self.updates.append({"uri": uri, "at": time.time()})
        self.log.append({"level": "info", "logger": UPDATED_LOGGER, "data": uri})
        if call is not None:
            call.log(f"[server {UPDATED_LOGGER}] {uri}")
        with self._subscribed_lock:
            listeners = list(self._subscribed.get(uri, ()))
        for listener in listeners:
            try:
                listener(uri)
            except Exception as exc:  # the person's function: its failure goes on the log
                self.log.append(
                    {
                        "level": "error",
                        "logger": UPDATED_LOGGER,
                        "data": f"on_update {listener!r} failed for {uri}: {exc!r}",
                    }
                )

    def _faulted(self, exc: Exception) -> None:
        """A transport fault outside any request, kept on the log where the person looks."""
        self.log.append({"level": "error", "logger": TRANSPORT_LOGGER, "data": repr(exc)})

    def _wire_fault(self, text: str) -> None:
        """What went wrong on the wire (a reply unreadable or under an unknown id)."""
        self.log.append({"level": "error", "logger": TRANSPORT_LOGGER, "data": text})


__all__ = ["TRANSPORT_LOGGER", "UPDATED_LOGGER", "UPDATES_KEPT", "OnUpdate", "Subscriptions"]
