"""A remote server behind an OAuth login, reached through the mcp SDK's client OAuth flow: an
authorization server and a protected MCP server, both started by the test on 127.0.0.1, with
dynamic client registration, PKCE and a bearer token checked on every request."""

from __future__ import annotations

import secrets
import time
from collections.abc import Iterator

import httpx2
import pytest
from mcp.client.auth import OAuthClientProvider
from mcp.server.auth.provider import (
    AccessToken,
    AuthorizationCode,
    AuthorizationParams,
    AuthorizeError,
    RefreshToken,
    construct_redirect_uri,
)
from mcp.server.auth.settings import AuthSettings, ClientRegistrationOptions
from mcp.server.mcpserver import MCPServer
from mcp.shared.auth import (
    OAuthClientInformationFull,
    OAuthClientMetadata,
    OAuthToken,
)

import workbench as wb
from tests.mcp.test_remote import Running, free_socket
from workbench import mcp as wbmcp
from workbench.mcp._oauth import MemoryTokens

CALLBACK = "http://127.0.0.1:1/callback"
"""A redirect nobody listens at (the login without handlers never gets that far)."""


class Authority:
    """An authorization server that approves every login at once and remembers what it issued."""

    def __init__(self) -> None:
        self.clients: dict[str, OAuthClientInformationFull] = {}
        self.codes: dict[str, AuthorizationCode] = {}
        self.tokens: dict[str, AccessToken] = {}
        self.logins = 0
        self.refuse: str | None = None

    async def get_client(self, client_id: str) -> OAuthClientInformationFull | None:
        return self.clients.get(client_id)

    async def register_client(self, client_info: OAuthClientInformationFull) -> None:
        assert client_info.client_id is not None
        self.clients[client_info.client_id] = client_info

    async def authorize(
        self, client: OAuthClientInformationFull, params: AuthorizationParams
    ) -> str:
        if self.refuse is not None:
            raise AuthorizeError(error="access_denied", error_description=self.refuse)
        self.logins += 1
        code = secrets.token_urlsafe(16)
        self.codes[code] = AuthorizationCode(
            code=code,
            scopes=params.scopes or ["tools"],
            expires_at=time.time() + 300,
            client_id=client.client_id or "",
            code_challenge=params.code_challenge,
            redirect_uri=params.redirect_uri,
            redirect_uri_provided_explicitly=params.redirect_uri_provided_explicitly,
            resource=params.resource,
        )
        return construct_redirect_uri(str(params.redirect_uri), code=code, state=params.state)

    async def load_authorization_code(
        self, client: OAuthClientInformationFull, authorization_code: str
    ) -> AuthorizationCode | None:
        return self.codes.get(authorization_code)

    async def exchange_authorization_code(
        self, client: OAuthClientInformationFull, authorization_code: AuthorizationCode
    ) -> OAuthToken:
        del self.codes[authorization_code.code]
        token = secrets.token_urlsafe(24)
        self.tokens[token] = AccessToken(
            token=token,
            client_id=authorization_code.client_id,
            scopes=authorization_code.scopes,
            expires_at=int(time.time()) + 3600,
            resource=authorization_code.resource,
        )
        return OAuthToken(access_token=token, token_type="Bearer", expires_in=3600, scope="tools")

    async def load_access_token(self, token: str) -> AccessToken | None:
        return self.tokens.get(token)

    async def load_refresh_token(
        self, client: OAuthClientInformationFull, refresh_token: str
    ) -> RefreshToken | None:
        return None

    async def exchange_refresh_token(self, *args: object) -> OAuthToken:
        raise NotImplementedError("this authorization server issues no refresh tokens")

    async def revoke_token(self, token: object) -> None:
        self.tokens.clear()


async def follow(url: str) -> None:
    """Plays the person's browser: opens the login page, which the authorization server
    answers by redirecting to workbench's listener on 127.0.0.1."""
    async with httpx2.AsyncClient(follow_redirects=True) as client:
        answer = await client.get(url)
    assert answer.status_code == 200 and "login finished" in answer.text


@pytest.fixture
def oauth_server() -> Iterator[tuple[Running, Authority]]:
    socket_, base = free_socket()
    authority = Authority()
    served = MCPServer(
        "oauth-adder",
        auth_server_provider=authority,
        auth=AuthSettings(
            issuer_url=base,
            resource_server_url=f"{base}/mcp",
            client_registration_options=ClientRegistrationOptions(
                enabled=True, valid_scopes=["tools"], default_scopes=["tools"]
            ),
            required_scopes=["tools"],
            validate_token_resource=True,
        ),
    )

    @served.tool()
    def add(a: int, b: int) -> int:
        """Add two integers."""
        return a + b

    running = Running(served.streamable_http_app(host="127.0.0.1"), socket_)
    yield running, authority
    running.stop()


def test_an_oauth_login_opens_a_protected_server(oauth_server, tmp_path):
    running, authority = oauth_server
    url = running.url("/mcp")
    tools = wb.Registry(history=":memory:", artifacts=tmp_path / "artifacts")
    auth = wbmcp.oauth_login(url, scopes="tools", open_url=follow)
    with wbmcp.connect(url, tools=tools, auth=auth) as conn:
        assert conn.names == ["add"]
        call = tools.invoke("add", {"a": 2, "b": 40})
        call.wait(30)
        assert call.state == "succeeded" and "42" in call.receipt
    assert authority.logins == 1 and len(authority.tokens) == 1
    tools.history.close()


def test_an_oauth_login_that_cannot_finish_says_what_is_missing(oauth_server, tmp_path):
    running, authority = oauth_server
    url = running.url("/mcp")
    tools = wb.Registry(history=":memory:", artifacts=tmp_path / "artifacts")
    metadata = OAuthClientMetadata(redirect_uris=[CALLBACK], scope="tools")
    headless = OAuthClientProvider(server_url=url, client_metadata=metadata, storage=MemoryTokens())
    with pytest.raises(ConnectionError) as refused:
        wbmcp.connect(url, tools=tools, auth=headless, startup_timeout=30)
    message = str(refused.value)
    assert "OAuth login did not finish" in message and "redirect handler" in message, message
    assert "oauth_login" in message and "401" not in message
    assert tools.names() == [] and authority.logins == 0 and authority.tokens == {}
    tools.history.close()


def test_a_refused_login_is_named(oauth_server, tmp_path):
    running, authority = oauth_server
    authority.refuse = "the person said no"
    url = running.url("/mcp")
    tools = wb.Registry(history=":memory:", artifacts=tmp_path / "artifacts")
    auth = wbmcp.oauth_login(url, scopes="tools", open_url=follow)
    with pytest.raises(ConnectionError, match="refused the login: the person said no"):
        wbmcp.connect(url, tools=tools, auth=auth, startup_timeout=30)
    assert tools.names() == [] and authority.tokens == {}
    tools.history.close()
