"""How a connection reaches a server over HTTP: streamable HTTP or the legacy SSE transport, with
the person's headers (a bearer token) or an ``httpx`` auth flow (the SDK's OAuth client).

A server that refuses the connection is named with what it wants: a 401 or 403 says which
credentials to give, rather than ending as a bare HTTP error deep in the SDK's task groups.
"""

from __future__ import annotations

from collections.abc import Mapping
from contextlib import AsyncExitStack
from typing import Any

import httpx2
from mcp.client.sse import sse_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

REFUSALS = {
    401: "it needs credentials: give headers={'Authorization': 'Bearer <token>'} or auth= "
    "(an httpx auth flow, such as the mcp SDK's OAuthClientProvider)",
    403: "the credentials given are not allowed: check the token's scope or the login",
    404: "there is no MCP endpoint at that URL: check the path (often /mcp, or /sse for the "
    "legacy SSE transport, transport='sse')",
    405: "it does not take this transport: try transport='sse' (legacy) or transport='http'",
}


class HttpTransport:
    """The SDK's streams to ``url`` (a transport the SDK's ``Client`` enters once), sending
    ``headers`` and authenticating through ``auth``; ``refused`` says what the server wanted
    when it answered a request with a 4xx (the SDK reports those as a bare internal error)."""

    def __init__(
        self, url: str, *, headers: Mapping[str, str] | None, auth: Any, legacy_sse: bool
    ) -> None:
        self.url = url
        self.headers = dict(headers or {})
        self.auth = auth
        self.legacy_sse = legacy_sse
        self.refused: str | None = None
        self._stack = AsyncExitStack()

    async def _note(self, response: Any) -> None:
        if self.refused is None:
            self.refused = refusal_of(response)

    def _client(
        self,
        headers: dict[str, str] | None = None,
        timeout: httpx2.Timeout | None = None,
        auth: httpx2.Auth | None = None,
    ) -> httpx2.AsyncClient:
        """The SDK's HTTP client, noting each response that refuses a request."""
        client = create_mcp_http_client(headers=headers, timeout=timeout, auth=auth)
        client.event_hooks["response"].append(self._note)
        return client

    async def __aenter__(self) -> Any:
        stack = self._stack
        if self.legacy_sse:
            return await stack.enter_async_context(
                sse_client(
                    self.url,
                    headers=self.headers,
                    auth=self.auth,
                    httpx_client_factory=self._client,
                )
            )
        http = await stack.enter_async_context(self._client(headers=self.headers, auth=self.auth))
        return await stack.enter_async_context(streamable_http_client(self.url, http_client=http))

    async def __aexit__(self, *exc: object) -> bool | None:
        return await self._stack.__aexit__(*exc)  # type: ignore[arg-type]


def refusal(exc: BaseException) -> str | None:
    """What a server's HTTP refusal (a 4xx on connecting) means, or None when ``exc`` is not one."""
    return refusal_of(getattr(exc, "response", None))


def refusal_of(response: Any) -> str | None:
    """What an HTTP response that refuses a request (a 4xx) means, or None for any other."""
    status = getattr(response, "status_code", None)
    if not isinstance(status, int) or not 400 <= status < 500:
        return None
    reason = getattr(response, "reason_phrase", "") or ""
    what = REFUSALS.get(status, "the server refused the request")
    return f"the server answered {status} {reason}".rstrip() + f": {what}"


__all__ = ["REFUSALS", "HttpTransport", "refusal", "refusal_of"]
