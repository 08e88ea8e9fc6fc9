"""/mcp takes an API key as its bearer token, for assistants that run without a browser: a `read` key
lists and reads, a `read-write` key writes, a `profiles` key sees its profiles only. The official MCP
client sends it as a plain header."""

from __future__ import annotations

import asyncio

import pytest

from tests.conftest import bearer
from tests.support.factories import add_account
from tests.support.oauth_flow import call_tool_raw, mcp_client, structured

pytestmark = pytest.mark.shared_service


def _key(client, tenant, **fields) -> str:
    made = client.post("/v1/api-keys", headers=bearer(tenant["apiKey"]), json={"name": "assistant", **fields})
    assert made.status_code == 201, made.text
    return made.json()["key"]


def test_a_read_key_lists_and_reads_but_does_not_write(server_url, client, tenant):
    account = add_account(tenant["workspaceId"], tenant["profileId"], "telegram", username="key_bot")
    key = _key(client, tenant, permission="read")

    async def scenario() -> None:
        async with mcp_client(server_url, Authorization=f"Bearer {key}") as session:
            names = {tool.name for tool in (await session.list_tools()).tools}
            assert {"list_accounts", "create_post", "send_message"} <= names
            listed = await session.call_tool("list_accounts", {})
            assert [a["id"] for a in structured(listed)["data"]] == [account]
            refused = await session.call_tool("create_webhook", {"url": "https://127.0.0.1:9/hook"})
            assert refused.is_error is True
            assert structured(refused)["error"]["code"] == "forbidden"

    asyncio.run(scenario())
    assert client.get("/v1/webhooks", headers=bearer(tenant["apiKey"])).json()["data"] == []


def test_a_read_write_key_writes(server_url, client, tenant):
    key = _key(client, tenant)

    async def scenario() -> None:
        async with mcp_client(server_url, Authorization=f"Bearer {key}") as session:
            made = await session.call_tool("create_webhook", {"url": "https://127.0.0.1:9/hook"})
            assert made.is_error is False, made
            assert structured(made)["url"] == "https://127.0.0.1:9/hook"

    asyncio.run(scenario())
    hooks = client.get("/v1/webhooks", headers=bearer(tenant["apiKey"])).json()["data"]
    assert [hook["url"] for hook in hooks] == ["https://127.0.0.1:9/hook"]


def test_a_profiles_key_sees_its_profiles_only(server_url, client, tenant):
    other = client.post("/v1/profiles", headers=bearer(tenant["apiKey"]), json={"name": "Second brand"}).json()
    mine = add_account(tenant["workspaceId"], tenant["profileId"], "telegram", username="main_bot")
    theirs = add_account(tenant["workspaceId"], other["id"], "telegram", username="second_bot")
    key = _key(client, tenant, scope="profiles", profileIds=[other["id"]], permission="read")

    async def scenario() -> None:
        async with mcp_client(server_url, Authorization=f"Bearer {key}") as session:
            listed = structured(await session.call_tool("list_accounts", {}))
            assert [a["id"] for a in listed["data"]] == [theirs]
            outside = await session.call_tool("list_accounts", {"profileId": tenant["profileId"]})
            assert outside.is_error is True
            assert structured(outside)["error"]["code"] == "forbidden"

    asyncio.run(scenario())
    assert mine != theirs


def test_a_revoked_key_is_refused_from_the_next_request(server_url, client, tenant):
    made = client.post("/v1/api-keys", headers=bearer(tenant["apiKey"]), json={"name": "assistant"}).json()
    key, key_id = made["key"], made["id"]
    assert call_tool_raw(client, key, "list_accounts").status_code == 200
    assert client.delete(f"/v1/api-keys/{key_id}", headers=bearer(tenant["apiKey"])).status_code in (200, 204)
    refused = call_tool_raw(client, key, "list_accounts")
    assert refused.status_code == 401
    assert 'error="invalid_token"' in refused.headers["www-authenticate"]
    assert key not in refused.text
