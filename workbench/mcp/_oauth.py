"""Logging in to a remote MCP server with OAuth, through the mcp SDK's client flow.

``oauth_login(url)`` is the SDK's ``OAuthClientProvider`` made ready for a notebook: the client
registers itself with the server's authorization server (dynamic registration, PKCE), the
person is sent to the login page (``open_url``; by default the URL is printed and handed to the
system browser), and the authorization server's redirect back lands on a one-shot listener on
127.0.0.1 that takes the code and closes. Tokens are kept in memory for the connection's life.
``connect(url, auth="oauth")`` builds one with the defaults.

A login that cannot finish is a ``ConnectionError`` naming why (``oauth_failure``), never the
server's bare 401.
"""

from __future__ import annotations

import asyncio
import socket
import sys
import webbrowser
from collections.abc import Awaitable, Callable
from urllib.parse import parse_qs, urlsplit

from mcp.client.auth import OAuthClientProvider, OAuthFlowError
from mcp.shared.auth import (
    AuthorizationCodeResult,
    OAuthClientInformationFull,
    OAuthClientMetadata,
    OAuthToken,
)
from pydantic import AnyUrl

LOGIN_TIMEOUT_S = 300.0
"""How long the listener waits for the person to finish logging in."""

OpenUrl = Callable[[str], Awaitable[None] | None]
"""Shows the person the authorization URL (sync or async)."""

_PAGE = (
    b"HTTP/1.1 200 OK\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\n\r\n"
    b"workbench: the login finished; you can close this tab.\n"
)


class MemoryTokens:
    """The client's registration and tokens, kept in memory (the SDK's ``TokenStorage``)."""

    def __init__(self) -> None:
        self.tokens: OAuthToken | None = None
        self.client: OAuthClientInformationFull | None = None

    async def get_tokens(self) -> OAuthToken | None:
        return self.tokens

    async def set_tokens(self, tokens: OAuthToken) -> None:
        self.tokens = tokens

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        return self.client

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        self.client = client_info


class RedirectListener:
    """A socket on 127.0.0.1 bound at once (so its URL can be registered), served only while
    a login is in flight, for exactly one redirect."""

    def __init__(self, open_url: OpenUrl, timeout: float) -> None:
        self._socket = socket.socket()
        self._socket.bind(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self._socket.getsockname()[1]}/callback"
        self._open_url = open_url
        self._timeout = timeout
        self._server: asyncio.Server | None = None
        self._query: asyncio.Future[str] | None = None

    async def send_person(self, authorization_url: str) -> None:
        """Listen for the redirect, then show the person where to log in."""
        self._query = asyncio.get_running_loop().create_future()
        self._server = await asyncio.start_server(self._take, sock=self._socket)
        shown = self._open_url(authorization_url)
        if shown is not None:
            await shown

    async def _take(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        request_line = (await reader.readline()).decode("latin-1")
        while (await reader.readline()).strip():
            continue
        writer.write(_PAGE)
        await writer.drain()
        writer.close()
        parts = request_line.split()
        if self._query is not None and not self._query.done() and len(parts) >= 2:
            self._query.set_result(urlsplit(parts[1]).query)

    async def code(self) -> AuthorizationCodeResult:
        """The code the authorization server sent back; ``OAuthFlowError`` naming a refusal
        or a login not finished in time."""
        assert self._query is not None, "send_person runs first"
        try:
            query = parse_qs(await asyncio.wait_for(self._query, self._timeout))
        except TimeoutError:
            raise OAuthFlowError(
                f"no login came back within {self._timeout:g} s to {self.url}"
            ) from None
        finally:
            if self._server is not None:
                self._server.close()
        if "error" in query:
            said = query.get("error_description", query["error"])[0]
            raise OAuthFlowError(f"the authorization server refused the login: {said}")
        if "code" not in query:
            raise OAuthFlowError(f"the redirect to {self.url} carried no authorization code")
        return AuthorizationCodeResult(
            code=query["code"][0],
            state=query.get("state", [None])[0],
            iss=query.get("iss", [None])[0],
        )


def show_and_open(url: str) -> None:
    """Print the login URL (a notebook shows it as a link) and hand it to the system browser."""
    print(f"Log in to the MCP server: {url}", file=sys.stderr)
    webbrowser.open(url)


def oauth_login(
    url: str,
    *,
    scopes: str | None = None,
    client_name: str = "workbench",
    open_url: OpenUrl = show_and_open,
    timeout: float = LOGIN_TIMEOUT_S,
) -> OAuthClientProvider:
    """An OAuth login for the MCP server at ``url``, for ``connect(url, auth=...)``.

    ``scopes`` (space-separated) are asked for; ``open_url`` shows the person the authorization
    URL (default: printed and opened in the system browser); the redirect back is taken on
    127.0.0.1 within ``timeout`` seconds.
    """
    listener = RedirectListener(open_url, timeout)
    metadata = OAuthClientMetadata(
        client_name=client_name,
        redirect_uris=[AnyUrl(listener.url)],
        scope=scopes,
        token_endpoint_auth_method="none",
    )
    return OAuthClientProvider(
        server_url=url,
        client_metadata=metadata,
        storage=MemoryTokens(),
        redirect_handler=listener.send_person,
        callback_handler=listener.code,
    )


def oauth_failure(exc: BaseException) -> str | None:
    """What stopped an OAuth login inside ``exc`` (task groups unwrapped), or None."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    if not isinstance(exc, OAuthFlowError):
        return None
    said = str(exc).strip() or type(exc).__name__
    return (
        f"the OAuth login did not finish: {said} (auth='oauth' or wb.mcp.oauth_login(url) "
        "logs in from a notebook: a browser page, and the redirect taken on 127.0.0.1)"
    )


__all__ = [
    "LOGIN_TIMEOUT_S",
    "MemoryTokens",
    "OpenUrl",
    "RedirectListener",
    "oauth_failure",
    "oauth_login",
    "show_and_open",
]
