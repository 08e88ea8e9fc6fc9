"""The MCP tools that CONTRACT section 6 lists beside the first ones: delete_post, retry_post,
list_sequences, list_templates, list_webhooks, create_webhook, delete_webhook (list_media and
import_media: tests/media, import_posts_csv: tests/posts/test_csv_import.py). Each answers what
its /v1 operation answers, with the /v1 error codes."""

from __future__ import annotations

from typing import Any

import httpx2
import pytest

from tests.conftest import bearer
from tests.support.oauth_flow import call_tool_raw, hand_made_tokens
from tests.support.posts import sent_posts, wait_settled
from tests.support.sandbox import connect_account

pytestmark = pytest.mark.shared_service

CONTRACT_TOOLS = {
    "list_workspaces", "list_accounts", "get_publish_options", "create_post", "list_posts", "get_post",
    "list_conversations", "get_messages", "start_conversation", "send_message", "create_broadcast",
    "list_broadcasts", "update_broadcast", "send_broadcast_now", "cancel_broadcast", "create_sequence",
    "update_sequence", "enroll_in_sequence", "list_comment_automations", "create_comment_automation",
    "update_comment_automation", "get_follower_analytics", "list_sequences", "list_templates", "list_media",
    "import_media", "delete_post", "retry_post", "import_posts_csv", "list_webhooks", "create_webhook",
    "delete_webhook",
}


def _tool(browser: httpx2.Client, token: str, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    answer = call_tool_raw(browser, token, name, arguments)
    assert answer.status_code == 200, answer.text
    return answer.json()["result"]


@pytest.fixture
def token(browser, tenant) -> str:
    return hand_made_tokens(browser, workspace_id=tenant["workspaceId"])[1]["access_token"]


def test_every_tool_of_the_contract_is_listed_and_annotated(browser, token):
    listed = browser.post("/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
                          headers={"Authorization": f"Bearer {token}", "Accept": "application/json, text/event-stream",
                                   "MCP-Protocol-Version": "2025-06-18"}).json()["result"]["tools"]
    by_name = {tool["name"]: tool for tool in listed}
    assert set(by_name) >= CONTRACT_TOOLS
    for name in ("list_sequences", "list_templates", "list_media", "list_webhooks"):
        assert by_name[name]["annotations"]["readOnlyHint"] is True, name
    for name in ("delete_post", "delete_webhook"):
        assert by_name[name]["annotations"]["destructiveHint"] is True, name


def test_an_assistant_retries_a_failed_post_and_deletes_another(client, tenant, browser, token):
    headers = bearer(tenant["apiKey"])
    bot = connect_account(client, tenant, "telegram")
    client.post("/sandbox/telegram/faults", json={"accountId": bot["id"], "failNext": 1, "status": 400})
    target = [{"accountId": bot["id"], "options": {"chatId": "@news"}}]
    failed = client.post("/v1/posts", headers=headers, json={"content": "Again", "publishNow": True,
                                                             "targets": target}).json()
    assert wait_settled(client, tenant, failed["id"])["status"] == "failed"

    retried = _tool(browser, token, "retry_post", {"postId": failed["id"]})
    assert retried.get("isError") is not True, retried
    assert wait_settled(client, tenant, failed["id"])["status"] == "published"
    assert [p["text"] for p in sent_posts(client, "telegram", bot["id"])] == ["Again"]  # once
    nothing = _tool(browser, token, "retry_post", {"postId": failed["id"]})
    assert nothing["isError"] is True and nothing["structuredContent"]["error"]["code"] == "conflict"

    live = _tool(browser, token, "delete_post", {"postId": failed["id"]})
    assert live["structuredContent"]["error"]["code"] == "conflict"  # published: needs fromPlatforms
    draft = client.post("/v1/posts", headers=headers, json={"content": "Draft", "targets": target}).json()
    deleted = _tool(browser, token, "delete_post", {"postId": draft["id"]})
    assert deleted["structuredContent"] == {"id": draft["id"], "deleted": True, "platforms": []}
    assert client.get(f"/v1/posts/{draft['id']}", headers=headers).status_code == 404
    removed = _tool(browser, token, "delete_post", {"postId": failed["id"], "fromPlatforms": True})
    assert removed["structuredContent"]["deleted"] is True
    assert [p["kind"] for p in client.get("/sandbox/telegram/sent", params={"accountId": bot["id"]}).json()["data"]
            ] == ["post", "delete_post"]


def test_an_assistant_lists_sequences_and_whatsapp_templates(client, tenant, browser, token):
    headers = bearer(tenant["apiKey"])
    bot = connect_account(client, tenant, "telegram")
    wa = connect_account(client, tenant, "whatsapp")
    made = client.post("/v1/sequences", headers=headers, json={
        "accountId": bot["id"], "name": "Welcome", "trigger": "manual",
        "steps": [{"delayMinutes": 0, "text": "Hi"}]}).json()
    sequences = _tool(browser, token, "list_sequences", {"accountId": bot["id"]})["structuredContent"]
    assert sequences == client.get("/v1/sequences", headers=headers, params={"accountId": bot["id"]}).json()
    assert [s["id"] for s in sequences["data"]] == [made["id"]]

    templates = _tool(browser, token, "list_templates", {"accountId": wa["id"]})["structuredContent"]
    assert {(t["name"], t["language"]) for t in templates["data"]} == {
        ("hello_world", "en_US"), ("order_update", "en_US"), ("order_update", "es"), ("delivery_named", "en_US"),
        ("launch_video", "en_US"), ("ticket_header", "en_US")}
    refused = _tool(browser, token, "list_templates", {"accountId": bot["id"]})
    assert refused["structuredContent"]["error"]["code"] == "validation_failed"


def test_an_assistant_manages_webhook_endpoints(client, tenant, browser, token):
    headers = bearer(tenant["apiKey"])
    made = _tool(browser, token, "create_webhook", {"url": "https://127.0.0.1:9/hooks", "events": ["post.published"]})
    assert made.get("isError") is not True, made
    endpoint = made["structuredContent"]
    assert endpoint["secret"].startswith("whsec_") and endpoint["events"] == ["post.published"]
    listed = _tool(browser, token, "list_webhooks", {})["structuredContent"]
    assert listed == client.get("/v1/webhooks", headers=headers).json()
    assert [w["id"] for w in listed["data"]] == [endpoint["id"]] and "secret" not in listed["data"][0]
    unknown = _tool(browser, token, "create_webhook", {"url": "https://127.0.0.1:9/x", "events": ["post.eaten"]})
    assert unknown["structuredContent"]["error"]["details"][0]["field"] == "events[0]"

    gone = _tool(browser, token, "delete_webhook", {"webhookId": endpoint["id"]})["structuredContent"]
    assert gone == {"id": endpoint["id"], "deleted": True}
    assert client.get("/v1/webhooks", headers=headers).json()["data"] == []
    again = _tool(browser, token, "delete_webhook", {"webhookId": endpoint["id"]})
    assert again["structuredContent"]["error"]["code"] == "not_found"
