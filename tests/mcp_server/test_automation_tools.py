"""Comment automations and sequences through MCP: the same service functions as /v1."""

from __future__ import annotations

import httpx2
import pytest

from storage.db import connection
from storage.models import User
from tests.conftest import bearer
from tests.support.oauth_flow import browser_sign_in, call_tool_raw, hand_made_tokens
from tests.support.sandbox import connect_account
from tests.support.webhook_receiver import wait_for

pytestmark = pytest.mark.shared_service


def _result(answer: httpx2.Response) -> dict:
    assert answer.status_code == 200, answer.text
    return answer.json()["result"]


@pytest.fixture
def token(live, tenant):
    with connection():
        email = User.get_by_id(tenant["userId"]).email
    with httpx2.Client(base_url=live.url, timeout=30) as browser:
        browser_sign_in(browser, email, "correct horse")
        _, tokens = hand_made_tokens(browser, workspace_id=tenant["workspaceId"])
    return tokens["access_token"]


def test_an_assistant_sets_up_and_changes_a_comment_automation(live, tenant, token):
    client = live.client
    instagram = connect_account(client, tenant, "instagram")
    refused = _result(call_tool_raw(client, token, "create_comment_automation", {
        "accountId": instagram["id"], "name": "Price", "matchType": "contains", "dmText": "Prices inside"}))
    assert refused["isError"] is True
    assert refused["structuredContent"]["error"]["code"] == "validation_failed"
    assert [d["field"] for d in refused["structuredContent"]["error"]["details"]] == ["keywords"]
    created = _result(call_tool_raw(client, token, "create_comment_automation", {
        "accountId": instagram["id"], "name": "Price", "keywords": ["preco"], "matchType": "contains",
        "dmText": "Prices inside", "dmButtonLabel": "Prices", "dmButtonUrl": "https://example.com/p"}))
    automation = created["structuredContent"]
    assert (automation["keywords"], automation["status"], automation["stats"]["triggered"]) == (["preco"], "active", 0)
    changed = _result(call_tool_raw(client, token, "update_comment_automation", {
        "automationId": automation["id"], "status": "paused"}))["structuredContent"]
    assert (changed["status"], changed["dmButtonLabel"], changed["keywords"]) == ("paused", "Prices", ["preco"])
    listed = _result(call_tool_raw(client, token, "list_comment_automations", {"status": "paused"}))
    assert [a["id"] for a in listed["structuredContent"]["data"]] == [automation["id"]]
    via_api = client.get(f"/v1/comment-automations/{automation['id']}", headers=bearer(tenant["apiKey"]))
    assert via_api.json()["status"] == "paused"


def test_an_assistant_creates_a_sequence_and_enrols_a_conversation(live, tenant, token):
    client = live.client
    bot = connect_account(client, tenant, "telegram")
    client.post("/sandbox/telegram/inbound-message", json={
        "accountId": bot["id"], "from": {"id": "9901"}, "text": "hi"}).raise_for_status()
    conversation = client.get("/v1/conversations", headers=bearer(tenant["apiKey"])).json()["data"][0]
    sequence = _result(call_tool_raw(client, token, "create_sequence", {
        "accountId": bot["id"], "name": "Onboarding", "trigger": "manual",
        "steps": [{"delayMinutes": 0, "text": "Welcome aboard"}]}))["structuredContent"]
    renamed = _result(call_tool_raw(client, token, "update_sequence", {
        "sequenceId": sequence["id"], "name": "Onboarding v2"}))["structuredContent"]
    assert (renamed["name"], renamed["steps"]) == ("Onboarding v2", sequence["steps"])
    enrolled = _result(call_tool_raw(client, token, "enroll_in_sequence", {
        "sequenceId": sequence["id"], "conversationId": conversation["id"]}))["structuredContent"]
    assert (enrolled["status"], enrolled["conversationId"]) == ("active", conversation["id"])
    wait_for(lambda: [r["text"] for r in client.get("/sandbox/telegram/sent", params={"accountId": bot["id"]})
                      .json()["data"]] == ["Welcome aboard"])
