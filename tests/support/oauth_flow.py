"""Drive the OAuth flow as a person and an MCP client would: a browser session that signs in and
answers the consent page, and the official MCP client with `OAuthClientProvider`."""

from __future__ import annotations

import contextlib
import html
import re
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

import httpx2
from mcp import Client
from mcp.client.auth import OAuthClientProvider
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.auth import AuthorizationCodeResult, OAuthClientInformationFull, OAuthClientMetadata, OAuthToken

REDIRECT_URI = "http://127.0.0.1:9/callback"  # never contacted: the test reads the redirect itself


def hidden(page: str, name: str) -> str:
    match = re.search(rf'name="{re.escape(name)}"[^>]*value="([^"]*)"', page)
    assert match, f"no hidden field {name} in the page"
    return html.unescape(match.group(1))


def workspace_options(page: str) -> list[str]:
    return [html.unescape(v) for v in re.findall(r'<option value="([^"]*)"', page)]


async def sign_in(browser: httpx2.AsyncClient, email: str, password: str) -> httpx2.Response:
    page = await browser.get("/dashboard/login")
    return await browser.post(
        "/dashboard/login",
        data={"email": email, "password": password, "csrf_token": hidden(page.text, "csrf_token"), "next": "/dashboard"},
    )


@dataclass
class Consent:
    """What the person does on the consent page, and what the test saw there."""

    decision: str = "allow"
    workspace_id: str | None = None
    seen: list[str] = field(default_factory=list)  # consent pages as HTML
    redirects: list[str] = field(default_factory=list)  # final Location headers
    # The scopes left checked on each consent page in turn (then: all that are asked).
    grants: list[list[str]] = field(default_factory=list)


async def answer_consent(browser: httpx2.AsyncClient, authorize_url: str, consent: Consent) -> AuthorizationCodeResult:
    page = await browser.get(authorize_url)
    assert page.status_code == 200, page.text
    consent.seen.append(page.text)
    form = {"csrf_token": hidden(page.text, "csrf_token"), "decision": consent.decision,
            "workspaceId": consent.workspace_id or workspace_options(page.text)[0]}
    fields: list[tuple[str, str]] = list(form.items())
    if consent.grants:
        fields += [("scope_choice", "1")] + [("grant_scope", scope) for scope in consent.grants.pop(0)]
    action = html.unescape(re.search(r'<form method="post" action="(/oauth/authorize[^"]*)"', page.text).group(1))  # type: ignore[union-attr]
    answer = await browser.post(action, content=urlencode(fields),
                                headers={"Content-Type": "application/x-www-form-urlencoded"})
    assert answer.status_code in (302, 303), answer.text
    location = answer.headers["location"]
    consent.redirects.append(location)
    query = parse_qs(urlsplit(location).query)
    return AuthorizationCodeResult(
        code=query.get("code", [""])[0], state=query.get("state", [None])[0], iss=query.get("iss", [None])[0]
    )


class MemoryStorage:
    def __init__(self) -> None:
        self.tokens: OAuthToken | None = None
        self.client_info: OAuthClientInformationFull | None = None

    async def get_tokens(self) -> OAuthToken | None:
        return self.tokens

    async def set_tokens(self, tokens: OAuthToken) -> None:
        self.tokens = tokens

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        return self.client_info

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        self.client_info = client_info


def provider(
    server_url: str,
    browser: httpx2.AsyncClient,
    consent: Consent,
    *,
    storage: MemoryStorage | None = None,
    client_name: str = "Test assistant",
    scope: str | None = None,
    client_metadata_url: str | None = None,
) -> OAuthClientProvider:
    pending: dict[str, AuthorizationCodeResult] = {}

    async def redirect_handler(url: str) -> None:
        pending["result"] = await answer_consent(browser, url, consent)

    async def callback_handler() -> AuthorizationCodeResult:
        return pending.pop("result")

    return OAuthClientProvider(
        server_url=server_url + "/mcp",
        client_metadata=OAuthClientMetadata(
            client_name=client_name,
            redirect_uris=[REDIRECT_URI],  # type: ignore[list-item]
            grant_types=["authorization_code", "refresh_token"],
            response_types=["code"],
            scope=scope,
        ),
        storage=storage or MemoryStorage(),
        redirect_handler=redirect_handler,
        callback_handler=callback_handler,
        client_metadata_url=client_metadata_url,
    )


@contextlib.asynccontextmanager
async def mcp_client(server_url: str, auth: httpx2.Auth | None = None, *, options: dict[str, Any] | None = None,
                     **headers: str) -> AsyncIterator[Client]:
    """The official client on /mcp; `options` go to `Client` (an elicitation callback, ...)."""
    async with (
        httpx2.AsyncClient(auth=auth, headers=headers, timeout=30) as http,
        Client(streamable_http_client(server_url + "/mcp", http_client=http), **(options or {})) as client,
    ):
        yield client


def structured(result: Any) -> Any:
    return result.structured_content


# --- the flow by hand, for the cases a well-behaved client never produces ------------------------


def pkce_pair() -> tuple[str, str]:
    import base64
    import hashlib
    import secrets

    verifier = secrets.token_urlsafe(48)
    challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
    return verifier, challenge


def register_client(http: httpx2.Client, *, name: str = "Hand-made client", auth_method: str = "none",
                    redirect_uri: str = REDIRECT_URI) -> dict[str, Any]:
    answer = http.post("/oauth/register", json={
        "client_name": name, "redirect_uris": [redirect_uri], "token_endpoint_auth_method": auth_method,
        "grant_types": ["authorization_code", "refresh_token"], "response_types": ["code"]})
    assert answer.status_code == 201, answer.text
    return answer.json()


def authorize_params(client_id: str, challenge: str, **extra: str) -> dict[str, str]:
    return {"response_type": "code", "client_id": client_id, "redirect_uri": REDIRECT_URI, "state": "st-1",
            "code_challenge": challenge, "code_challenge_method": "S256", **extra}


def email_of(user_id: str) -> str:
    """A person's sign-in e-mail, read from storage (tenants are made with a random one)."""
    from storage.db import connection
    from storage.models import User

    with connection():
        return str(User.get_by_id(user_id).email)


def browser_sign_in(http: httpx2.Client, email: str, password: str) -> None:
    page = http.get("/dashboard/login")
    answer = http.post("/dashboard/login", data={"email": email, "password": password,
                                                  "csrf_token": hidden(page.text, "csrf_token")})
    assert answer.status_code == 303, answer.text


def consent_code(http: httpx2.Client, params: dict[str, str], *, workspace_id: str, decision: str = "allow") -> str:
    """GET the consent page, answer it, return the Location the browser is sent to."""
    page = http.get("/oauth/authorize", params=params)
    assert page.status_code == 200, page.text
    action = html.unescape(re.search(r'<form method="post" action="(/oauth/authorize[^"]*)"', page.text).group(1))  # type: ignore[union-attr]
    answer = http.post(action, data={"csrf_token": hidden(page.text, "csrf_token"), "decision": decision,
                                     "workspaceId": workspace_id})
    assert answer.status_code == 302, answer.text
    return answer.headers["location"]


def query_of(location: str) -> dict[str, str]:
    return {k: v[0] for k, v in parse_qs(urlsplit(location).query).items()}


def hand_made_tokens(http: httpx2.Client, *, workspace_id: str, scope: str = "read write",
                     name: str = "Hand-made client") -> tuple[dict[str, Any], dict[str, Any]]:
    """(client, token answer) for a public client that asked for `scope`; the browser is signed in."""
    client = register_client(http, name=name)
    verifier, challenge = pkce_pair()
    location = consent_code(http, authorize_params(client["client_id"], challenge, scope=scope,
                                                    resource=str(http.base_url).rstrip("/") + "/mcp"),
                            workspace_id=workspace_id)
    answer = http.post("/oauth/token", data={
        "grant_type": "authorization_code", "code": query_of(location)["code"], "redirect_uri": REDIRECT_URI,
        "client_id": client["client_id"], "code_verifier": verifier,
        "resource": str(http.base_url).rstrip("/") + "/mcp"})
    assert answer.status_code == 200, answer.text
    return client, answer.json()


def call_tool_raw(http: httpx2.Client, token: str, name: str, arguments: dict[str, Any] | None = None) -> httpx2.Response:
    """One JSON-RPC tools/call over plain HTTP (stateless server), as a load generator sends it."""
    return http.post("/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                                   "params": {"name": name, "arguments": arguments or {}}},
                     headers={"Authorization": f"Bearer {token}", "Accept": "application/json, text/event-stream",
                              "MCP-Protocol-Version": "2025-06-18"})
