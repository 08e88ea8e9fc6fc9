"""The whole flow with the official MCP client: 401, discovery, registration, sign-in, consent,
code, token, tools, refresh, revocation, 401 again."""

from __future__ import annotations

import asyncio
import time
from urllib.parse import urlsplit

import httpx2

from tests.support.factories import add_account
from tests.support.oauth_flow import Consent, MemoryStorage, email_of, provider, sign_in, structured


def test_an_assistant_connects_after_consent_and_works_in_the_chosen_workspace(server_url, tenant, other_tenant):
    mine = add_account(tenant["workspaceId"], tenant["profileId"], "telegram", username="my_bot")
    add_account(other_tenant["workspaceId"], other_tenant["profileId"], "telegram", username="their_bot")
    seen: list[tuple[str, str, int]] = []

    async def record(response: httpx2.Response) -> None:
        seen.append((response.request.method, urlsplit(str(response.request.url)).path, response.status_code))

    async def scenario() -> None:
        async with httpx2.AsyncClient(base_url=server_url, timeout=30) as browser:
            signed_in = await sign_in(browser, email_of(tenant["userId"]), "correct horse")
            assert signed_in.status_code == 303
            consent = Consent(workspace_id=tenant["workspaceId"])
            storage = MemoryStorage()
            auth = provider(server_url, browser, consent, storage=storage)
            async with (
                httpx2.AsyncClient(auth=auth, timeout=30, event_hooks={"response": [record]}) as http,
                mcp_client_over(http, server_url) as client,
            ):
                tools = {tool.name: tool for tool in (await client.list_tools()).tools}
                assert {"list_workspaces", "list_accounts"} <= set(tools)
                assert tools["list_accounts"].annotations.read_only_hint is True

                listed = await client.call_tool("list_accounts", {})
                assert listed.is_error is False
                assert [a["id"] for a in structured(listed)["data"]] == [mine]
                assert structured(listed)["pagination"]["total"] == 1

                spaces = structured(await client.call_tool("list_workspaces", {}))
                assert [ws["id"] for ws in spaces["data"]] == [tenant["workspaceId"]]

                first_access = storage.tokens.access_token
                first_refresh = storage.tokens.refresh_token
                auth.context.token_expiry_time = time.time() - 1  # the hour has passed
                again = await client.call_tool("list_accounts", {"platform": "telegram"})
                assert [a["id"] for a in structured(again)["data"]] == [mine]
                assert storage.tokens.access_token != first_access
                assert storage.tokens.refresh_token != first_refresh

            paths = [(method, path) for method, path, _ in seen]
            assert seen[0][1:] == ("/mcp", 401)
            order = [paths.index(step) for step in [
                ("GET", "/.well-known/oauth-protected-resource/mcp"),
                ("GET", "/.well-known/oauth-authorization-server"),
                ("POST", "/oauth/register"),
                ("POST", "/oauth/token"),
            ]]
            assert order == sorted(order)
            assert paths.count(("POST", "/oauth/token")) == 2  # the code, then the refresh
            assert consent.redirects[0].startswith("http://127.0.0.1:9/callback?code=")
            assert f"iss={server_url.replace(':', '%3A').replace('/', '%2F')}" in consent.redirects[0]

            # The client revokes its refresh token (RFC 7009): the connection ends at once.
            info = storage.client_info
            assert info.token_endpoint_auth_method == "client_secret_basic"  # the default, stored and echoed
            revoked = await browser.post("/oauth/revoke", auth=(info.client_id, info.client_secret), data={
                "token": storage.tokens.refresh_token, "token_type_hint": "refresh_token"})
            assert revoked.status_code == 200
            refused = await browser.post("/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
                                         headers={"Authorization": f"Bearer {storage.tokens.access_token}",
                                                  "Accept": "application/json, text/event-stream"})
            assert refused.status_code == 401
            assert 'resource_metadata="' + server_url + '/.well-known/oauth-protected-resource/mcp"' in \
                refused.headers["www-authenticate"]

    asyncio.run(scenario())


def mcp_client_over(http: httpx2.AsyncClient, server_url: str):
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    return Client(streamable_http_client(server_url + "/mcp", http_client=http))


def test_a_read_only_connection_asks_the_person_for_write_when_a_write_tool_is_called(server_url, tenant):
    """The 403 `insufficient_scope` challenge is a step-up the official client follows: it goes back
    to the consent page asking for `read write`, and the call then goes through."""
    async def scenario() -> None:
        async with httpx2.AsyncClient(base_url=server_url, timeout=30) as browser:
            await sign_in(browser, email_of(tenant["userId"]), "correct horse")
            consent = Consent(workspace_id=tenant["workspaceId"], grants=[["read"]])
            storage = MemoryStorage()
            async with (
                httpx2.AsyncClient(auth=provider(server_url, browser, consent, storage=storage), timeout=30) as http,
                mcp_client_over(http, server_url) as client,
            ):
                assert (await client.call_tool("list_accounts", {})).is_error is False
                assert storage.tokens.scope == "read"
                made = await client.call_tool("create_webhook", {"url": "https://127.0.0.1:9/hook"})
                assert made.is_error is False, made
                assert structured(made)["url"] == "https://127.0.0.1:9/hook"
                assert storage.tokens.scope == "read write"
            assert len(consent.seen) == 2  # the person was asked a second time

    asyncio.run(scenario())
