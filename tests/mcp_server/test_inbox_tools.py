"""The inbox through MCP: the same service functions as /v1, acting in the token's workspace."""

from __future__ import annotations

import httpx2
import pytest

from tests.conftest import bearer
from tests.support.oauth_flow import call_tool_raw, hand_made_tokens
from tests.support.sandbox import connect_account

pytestmark = pytest.mark.shared_service


def _result(answer: httpx2.Response) -> dict:
    assert answer.status_code == 200, answer.text
    return answer.json()["result"]


def test_an_assistant_reads_the_inbox_and_replies(browser, client, tenant):
    bot = connect_account(client, tenant, "telegram")
    client.post("/sandbox/telegram/inbound-message", json={
        "accountId": bot["id"], "from": {"id": "777", "handle": "dana", "name": "Dana"}, "text": "Is it in stock?"})
    _, tokens = hand_made_tokens(browser, workspace_id=tenant["workspaceId"])
    token = tokens["access_token"]

    listed = _result(call_tool_raw(browser, token, "list_conversations", {"platform": "TELEGRAM"}))
    conversation = listed["structuredContent"]["data"][0]
    assert conversation["contactName"] == "Dana"
    messages = _result(call_tool_raw(browser, token, "get_messages", {"conversationId": conversation["id"]}))
    assert [m["text"] for m in messages["structuredContent"]["data"]] == ["Is it in stock?"]

    sent = _result(call_tool_raw(browser, token, "send_message",
                                 {"conversationId": conversation["id"], "text": "Yes — ships today 📦"}))
    assert sent.get("isError") is not True, sent
    assert sent["structuredContent"]["status"] == "sent"
    reached = client.get("/sandbox/telegram/sent", params={"accountId": bot["id"]}).json()["data"]
    assert [r["text"] for r in reached] == ["Yes — ships today 📦"]
    via_api = client.get(f"/v1/conversations/{conversation['id']}/messages", headers=bearer(tenant["apiKey"])).json()
    assert [m["direction"] for m in via_api["data"]] == ["inbound", "outbound"]


def test_start_conversation_returns_the_existing_one_the_second_time(browser, client, tenant):
    ig = connect_account(client, tenant, "instagram")
    _, tokens = hand_made_tokens(browser, workspace_id=tenant["workspaceId"])
    first = _result(call_tool_raw(browser, tokens["access_token"], "start_conversation",
                                  {"accountId": ig["id"], "contactHandle": "@Eve"}))["structuredContent"]
    second = _result(call_tool_raw(browser, tokens["access_token"], "start_conversation",
                                   {"accountId": ig["id"], "contactHandle": "eve"}))["structuredContent"]
    assert (first["created"], second["created"]) == (True, False)
    assert first["id"] == second["id"]
    assert first["contactHandle"] == "eve"


def test_a_read_token_cannot_send_and_errors_carry_the_v1_codes(browser, client, tenant, other_tenant):
    bot = connect_account(client, tenant, "telegram")
    client.post("/sandbox/telegram/inbound-message", json={
        "accountId": bot["id"], "from": {"id": "778", "handle": "fay", "name": "Fay"}, "text": "hello"})
    conversation_id = client.get("/v1/conversations", headers=bearer(tenant["apiKey"])).json()["data"][0]["id"]
    _, read_only = hand_made_tokens(browser, workspace_id=tenant["workspaceId"], scope="read")
    refused = call_tool_raw(browser, read_only["access_token"], "send_message",
                            {"conversationId": conversation_id, "text": "x"})
    assert refused.status_code == 403
    assert 'error="insufficient_scope"' in refused.headers["www-authenticate"]
    assert 'scope="read write"' in refused.headers["www-authenticate"]
    assert client.get("/sandbox/telegram/sent", params={"accountId": bot["id"]}).json()["data"] == []

    _, tokens = hand_made_tokens(browser, workspace_id=tenant["workspaceId"])
    missing = _result(call_tool_raw(browser, tokens["access_token"], "get_messages", {"conversationId": "conv_nope"}))
    assert missing["structuredContent"]["error"]["code"] == "not_found"
    bad = _result(call_tool_raw(browser, tokens["access_token"], "list_conversations", {"platform": "telegram"}))
    assert bad["isError"] is True


def test_a_tool_and_its_v1_operation_refuse_the_same_bad_input_alike(browser, client, tenant):
    bot = connect_account(client, tenant, "telegram")
    _, tokens = hand_made_tokens(browser, workspace_id=tenant["workspaceId"])
    bad = {"accountId": bot["id"], "contactHandle": "", "contactName": 5, "nickname": "x"}
    over_v1 = client.post("/v1/inbox/conversations", headers=bearer(tenant["apiKey"]), json=bad)
    over_mcp = _result(call_tool_raw(browser, tokens["access_token"], "start_conversation", bad))
    assert over_v1.status_code == 422
    assert over_mcp["isError"] is True
    assert over_mcp["structuredContent"] == over_v1.json()
    assert {d["field"] for d in over_v1.json()["error"]["details"]} == {"contactHandle", "contactName", "nickname"}
    assert "pydantic" not in over_mcp["content"][0]["text"]

    listed = client.get("/v1/conversations", headers=bearer(tenant["apiKey"]), params={"limit": 101})
    tool = _result(call_tool_raw(browser, tokens["access_token"], "list_conversations", {"limit": 101}))
    assert tool["structuredContent"] == listed.json()
    assert listed.json()["error"]["details"] == [{"field": "limit", "message": "must be at most 100"}]


def test_the_inbox_tools_publish_their_records_as_output_schemas(browser, tenant):
    _, tokens = hand_made_tokens(browser, workspace_id=tenant["workspaceId"])
    listed = browser.post("/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
                          headers={"Authorization": f"Bearer {tokens['access_token']}",
                                   "Accept": "application/json, text/event-stream",
                                   "MCP-Protocol-Version": "2025-06-18"}).json()["result"]["tools"]
    by_name = {tool["name"]: tool for tool in listed}
    send = by_name["send_message"]
    assert send["inputSchema"]["required"] == ["conversationId"]  # and text, or on WhatsApp a template
    assert {"text", "template"} <= set(send["inputSchema"]["properties"])
    assert send["inputSchema"]["additionalProperties"] is False
    assert send["outputSchema"]["properties"]["platformMessageId"] == {"anyOf": [{"type": "string"}, {"type": "null"}]}
    started = by_name["start_conversation"]["outputSchema"]
    assert {"id", "contactHandle", "unreadCount", "created"} <= set(started["required"])
    page = by_name["list_conversations"]["outputSchema"]
    assert page["properties"]["data"]["items"] == {"$ref": "#/$defs/Conversation"}
    assert "lastInboundAt" in page["$defs"]["Conversation"]["properties"]
