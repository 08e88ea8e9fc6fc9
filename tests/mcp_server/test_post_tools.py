"""Posts through MCP: create_post, list_posts, get_post call the same service as /v1."""

from __future__ import annotations

import httpx2

from tests.conftest import bearer
from tests.support.oauth_flow import call_tool_raw, hand_made_tokens
from tests.support.posts import wait_settled
from tests.support.sandbox import connect_account


def _result(answer: httpx2.Response) -> dict:
    assert answer.status_code == 200, answer.text
    return answer.json()["result"]


def test_an_assistant_publishes_a_post_and_reads_it_back(browser, client, tenant):
    bot = connect_account(client, tenant, "telegram")
    x = connect_account(client, tenant, "x")
    _, tokens = hand_made_tokens(browser, workspace_id=tenant["workspaceId"])
    token = tokens["access_token"]

    refused = _result(call_tool_raw(browser, token, "create_post", {
        "content": "漢" * 141, "publishNow": True, "targets": [{"accountId": x["id"]}]}))
    assert refused["isError"] is True
    assert refused["structuredContent"]["error"]["details"][0]["field"] == "targets[0].content"

    made = _result(call_tool_raw(browser, token, "create_post", {
        "content": "New menu today 🍜", "publishNow": True,
        "targets": [{"accountId": bot["id"], "options": {"chatId": "@menu"}},
                    {"accountId": x["id"], "content": "New menu 🍜 #lunch"}]}))
    assert made.get("isError") is not True, made
    post_id = made["structuredContent"]["id"]
    assert wait_settled(client, tenant, post_id)["status"] == "published"

    got = _result(call_tool_raw(browser, token, "get_post", {"postId": post_id}))["structuredContent"]
    assert got == client.get(f"/v1/posts/{post_id}", headers=bearer(tenant["apiKey"])).json()
    assert [t["content"] for t in got["targets"]] == ["New menu today 🍜", "New menu 🍜 #lunch"]
    listed = _result(call_tool_raw(browser, token, "list_posts", {"platform": "x", "status": "published"}))
    assert [p["id"] for p in listed["structuredContent"]["data"]] == [post_id]
    unknown = _result(call_tool_raw(browser, token, "list_posts", {"sauce": "all"}))
    assert unknown["structuredContent"]["error"]["code"] == "validation_failed"
