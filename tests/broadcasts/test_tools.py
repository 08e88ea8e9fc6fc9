"""Broadcasts through MCP: the five tools call the same service functions as /v1, in the token's
workspace, with /v1's error codes."""

from __future__ import annotations

import datetime as dt

import httpx2
import pytest

from storage.db import connection
from storage.models import User
from tests.conftest import bearer
from tests.support.oauth_flow import browser_sign_in, call_tool_raw, hand_made_tokens
from tests.support.sandbox import connect_account
from tests.support.webhook_receiver import wait_for


@pytest.fixture
def session(live):
    tenant = live.tenant()
    with connection():
        email = User.get_by_id(tenant["userId"]).email
    with httpx2.Client(base_url=live.url, timeout=30) as http:
        browser_sign_in(http, email, "correct horse")
        _, tokens = hand_made_tokens(http, workspace_id=tenant["workspaceId"])
        _, read_only = hand_made_tokens(http, workspace_id=tenant["workspaceId"], scope="read")

        def call(name, arguments, token=tokens["access_token"]):
            answer = call_tool_raw(http, token, name, arguments)
            assert answer.status_code == 200, answer.text
            return answer.json()["result"]

        yield tenant, call, read_only["access_token"], http


def test_an_assistant_drafts_edits_sends_and_lists_a_broadcast(live, session):
    tenant, call, _, _ = session
    bot = connect_account(live.client, tenant, "telegram")
    live.client.post("/sandbox/telegram/inbound-message",
                     json={"accountId": bot["id"], "from": {"id": "9301", "name": "Io"}, "text": "hey"})
    created = call("create_broadcast", {"accountId": bot["id"], "name": "Drop", "text": "New drop",
                                        "buttonLabel": "Look", "buttonUrl": "https://drop.example.com"})
    assert created.get("isError") is not True, created
    broadcast = created["structuredContent"]
    assert broadcast["status"] == "draft"

    edited = call("update_broadcast", {"broadcastId": broadcast["id"], "text": "New drop today"})
    assert edited["structuredContent"]["text"] == "New drop today"
    assert edited["structuredContent"]["buttonLabel"] == "Look"  # omitted: kept

    started = call("send_broadcast_now", {"broadcastId": broadcast["id"]})
    assert started["structuredContent"]["status"] == "scheduled"
    wait_for(lambda: live.client.get(f"/v1/broadcasts/{broadcast['id']}", headers=bearer(tenant["apiKey"]))
             .json()["status"] == "completed", timeout=10)
    sent = live.client.get("/sandbox/telegram/sent", params={"accountId": bot["id"]}).json()["data"]
    assert [row["payload"]["text"] for row in sent] == ["New drop today"]

    listed = call("list_broadcasts", {"status": "completed"})["structuredContent"]
    assert [row["id"] for row in listed["data"]] == [broadcast["id"]]
    assert listed["data"][0]["counts"] == {"targeted": 1, "sent": 1, "failed": 0, "skipped": 0}
    refused = call("update_broadcast", {"broadcastId": broadcast["id"], "text": "late"})
    assert refused["isError"] is True and refused["structuredContent"]["error"]["code"] == "conflict"


def test_cancel_and_the_rules_and_scopes(live, session):
    tenant, call, read_token, _ = session
    bot = connect_account(live.client, tenant, "telegram")
    later = (dt.datetime.now(dt.UTC) + dt.timedelta(days=1)).strftime("%Y-%m-%dT%H:%M:%SZ")
    broadcast = call("create_broadcast", {"accountId": bot["id"], "name": "Later", "text": "x",
                                          "scheduledFor": later})["structuredContent"]
    cancelled = call("cancel_broadcast", {"broadcastId": broadcast["id"]})["structuredContent"]
    assert cancelled["status"] == "cancelled"

    bad = call("create_broadcast", {"accountId": bot["id"], "name": "N", "text": "T", "buttonLabel": "Go"})
    assert bad["isError"] is True
    assert {d["field"] for d in bad["structuredContent"]["error"]["details"]} == {"buttonLabel", "buttonUrl"}
    unknown = call("create_broadcast", {"accountId": bot["id"], "name": "N", "text": "T", "colour": "red"})
    assert unknown["structuredContent"]["error"]["code"] == "validation_failed"

    listed = call("list_broadcasts", {}, token=read_token)
    assert listed.get("isError") is not True
    denied = call_tool_raw(session[3], read_token, "create_broadcast",
                           {"accountId": bot["id"], "name": "N", "text": "T"})
    assert denied.status_code == 403  # a step-up: the client may ask the person for `write`
    assert 'error="insufficient_scope"' in denied.headers["www-authenticate"]


def test_the_tools_are_listed_with_their_annotations(session):
    tenant, _, _, http = session
    _, tokens = hand_made_tokens(http, workspace_id=tenant["workspaceId"])
    listed = http.post("/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
                       headers={"Authorization": f"Bearer {tokens['access_token']}",
                                "Accept": "application/json, text/event-stream",
                                "MCP-Protocol-Version": "2025-06-18"}).json()["result"]["tools"]
    by_name = {tool["name"]: tool for tool in listed}
    assert by_name["list_broadcasts"]["annotations"]["readOnlyHint"] is True
    for name in ("create_broadcast", "update_broadcast", "send_broadcast_now", "cancel_broadcast"):
        assert by_name[name]["annotations"]["readOnlyHint"] is False
    assert by_name["cancel_broadcast"]["annotations"]["destructiveHint"] is True
    assert by_name["send_broadcast_now"]["annotations"]["destructiveHint"] is True
    assert "accountId" not in by_name["update_broadcast"]["inputSchema"]["properties"]
    assert "broadcastId" in by_name["update_broadcast"]["inputSchema"]["required"]
