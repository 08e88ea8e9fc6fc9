"""The contract's bounds on what a caller sends (CONTRACT §1): instants and dates outside
1970-01-01 .. 9999-12-30 and page numbers past any list are a 422 naming the field, on /v1 and
through MCP alike, never a 500 (Python's datetime overflows near years 1 and 9999; an OFFSET past
64 bits is an error in SQLite and PostgreSQL)."""

from __future__ import annotations

import httpx2
import pytest

from http_api.app import all_operations
from kit.shapes import MAX_PAGE
from tests.conftest import bearer
from tests.support.oauth_flow import call_tool_raw, hand_made_tokens
from tests.support.sandbox import connect_account

pytestmark = pytest.mark.shared_service

EXTREME_INSTANTS = [
    ("9999-12-31T23:00:00-05:00", None),
    ("0001-01-01T00:00:00+05:00", None),
    ("9999-12-31T23:59:59", "America/New_York"),
    ("0001-01-01T00:00:00", "Asia/Tokyo"),
    ("9999-12-31T00:00:00Z", None),
    ("1969-12-31T23:59:59Z", None),
]
HUGE_PAGES = ["999999999999999999", str(MAX_PAGE + 1), "0"]


def _details(answer: httpx2.Response) -> dict[str, str]:
    assert answer.status_code == 422, answer.text
    body = answer.json()
    assert body["error"]["code"] == "validation_failed"
    return {d["field"]: d["message"] for d in body["error"]["details"]}


def _tool(answer: httpx2.Response) -> dict:
    assert answer.status_code == 200, answer.text
    result = answer.json()["result"]
    assert result["isError"] is True, result
    return result["structuredContent"]["error"]


@pytest.mark.parametrize(("scheduled_for", "timezone"), EXTREME_INSTANTS)
def test_a_scheduled_time_out_of_bounds_is_422_on_broadcasts_and_posts(live, scheduled_for, timezone):
    tenant = live.tenant()
    bot = connect_account(live.client, tenant, "telegram")
    zone = {"timezone": timezone} if timezone else {}
    broadcast = live.client.post("/v1/broadcasts", headers=bearer(tenant["apiKey"]), json={
        "accountId": bot["id"], "name": "N", "text": "T", "scheduledFor": scheduled_for, **zone})
    assert "scheduledFor" in _details(broadcast)
    post = live.client.post("/v1/posts", headers=bearer(tenant["apiKey"]), json={
        "content": "hello", "targets": [{"accountId": bot["id"], "options": {"chatId": "@c"}}],
        "scheduledFor": scheduled_for, **zone})
    assert "scheduledFor" in _details(post)


def test_follower_analytics_far_in_the_future_is_422_or_an_answer_never_a_500(live):
    tenant = live.tenant()
    connect_account(live.client, tenant, "telegram")
    for granularity in ("day", "week", "month"):
        near_end = live.client.get("/v1/analytics/followers", headers=bearer(tenant["apiKey"]), params={
            "fromDate": "9999-01-01", "toDate": "9999-12-30", "granularity": granularity})
        assert near_end.status_code == 200, (granularity, near_end.text)
        assert near_end.json()["toDate"] == "9999-12-30"
        past_end = live.client.get("/v1/analytics/followers", headers=bearer(tenant["apiKey"]), params={
            "fromDate": "9999-01-01", "toDate": "9999-12-31", "granularity": granularity})
        assert _details(past_end) == {"toDate": "must be between 1970-01-01 and 9999-12-30 (UTC)"}
        too_early = live.client.get("/v1/analytics/followers", headers=bearer(tenant["apiKey"]), params={
            "fromDate": "0001-01-01", "toDate": "0001-01-02", "granularity": granularity})
        assert set(_details(too_early)) == {"fromDate", "toDate"}


@pytest.mark.parametrize("page", HUGE_PAGES)
def test_a_page_past_every_list_is_422_on_every_list(client, tenant, page):
    lists = [op for op in all_operations() if op.method == "GET" and op.query is not None
             and "page" in op.query.model_fields and "{" not in op.path]
    assert len(lists) >= 6
    for operation in lists:
        answer = client.get("/v1" + operation.path, headers=bearer(tenant["apiKey"]), params={"page": page})
        assert answer.status_code == 422, (operation.operation_id, answer.text)
        assert set(_details(answer)) == {"page"}


def test_the_last_allowed_page_is_an_empty_page(client, tenant):
    answer = client.get("/v1/posts", headers=bearer(tenant["apiKey"]), params={"page": MAX_PAGE, "limit": 100})
    assert answer.status_code == 200, answer.text
    assert answer.json()["data"] == []
    assert answer.json()["pagination"]["page"] == MAX_PAGE


def test_mcp_refuses_extreme_dates_and_pages_with_validation_failed(browser, client, tenant):
    bot = connect_account(client, tenant, "telegram")
    _, tokens = hand_made_tokens(browser, workspace_id=tenant["workspaceId"])
    token = tokens["access_token"]
    for page in (2**62, 2**63, 10**30):
        for tool in ("list_posts", "list_broadcasts", "list_conversations", "list_accounts"):
            error = _tool(call_tool_raw(browser, token, tool, {"page": page}))
            assert error["code"] == "validation_failed", (tool, page, error)
            assert [d["field"] for d in error["details"]] == ["page"]
    for scheduled_for, timezone in EXTREME_INSTANTS[:3]:
        zone = {"timezone": timezone} if timezone else {}
        error = _tool(call_tool_raw(browser, token, "create_broadcast", {
            "accountId": bot["id"], "name": "N", "text": "T", "scheduledFor": scheduled_for, **zone}))
        assert error["code"] == "validation_failed"
        assert "scheduledFor" in [d["field"] for d in error["details"]]
        error = _tool(call_tool_raw(browser, token, "create_post", {
            "content": "hello", "targets": [{"accountId": bot["id"], "options": {"chatId": "@c"}}],
            "scheduledFor": scheduled_for, **zone}))
        assert error["code"] == "validation_failed"
        assert "scheduledFor" in [d["field"] for d in error["details"]]
    error = _tool(call_tool_raw(browser, token, "get_follower_analytics", {
        "fromDate": "9999-01-01", "toDate": "9999-12-31", "granularity": "month"}))
    assert error["code"] == "validation_failed"
    assert [d["field"] for d in error["details"]] == ["toDate"]
