"""Saved replies: kept through /v1, listed through MCP, and sent with their variables filled for the
conversation they go to."""

from __future__ import annotations

import pytest

from tests.conftest import bearer
from tests.support.oauth_flow import call_tool_raw
from tests.support.sandbox import connect_account
from tests.teams.people import join, mcp_token

pytestmark = pytest.mark.shared_service


def test_a_saved_reply_is_sent_with_its_variables_filled(client, tenant):
    bot = connect_account(client, tenant, "telegram")
    client.post("/sandbox/telegram/inbound-message", json={"accountId": bot["id"], "from": {
        "id": "8001", "handle": "noor_h", "name": "Noor Haddad"}, "text": "Hello?"}).raise_for_status()
    [conversation] = client.get("/v1/conversations", headers=bearer(tenant["apiKey"])).json()["data"]
    made = client.post("/v1/saved-replies", headers=bearer(tenant["apiKey"]), json={
        "name": "Greeting", "text": "Hi {{contact.name}} (@{{contact.handle}}), {{account.name}} here. {{unknown}}"})
    assert made.status_code == 201, made.text
    sent = client.post(f"/v1/conversations/{conversation['id']}/messages", headers=bearer(tenant["apiKey"]),
                       json={"savedReplyId": made.json()["id"]})
    assert sent.status_code == 201, sent.text
    expected = f"Hi Noor Haddad (@noor_h), {bot['displayName']} here. {{{{unknown}}}}"
    assert sent.json()["text"] == expected
    received = client.get("/sandbox/telegram/sent", params={"accountId": bot["id"]}).json()["data"]
    assert [item["text"] for item in received] == [expected]


def test_saved_replies_are_changed_listed_and_deleted(client, live, tenant):
    made = client.post("/v1/saved-replies", headers=bearer(tenant["apiKey"]),
                       json={"name": "Thanks", "text": "Thank you!"}).json()
    changed = client.patch(f"/v1/saved-replies/{made['id']}", headers=bearer(tenant["apiKey"]),
                           json={"text": "Thank you, {{contact.name}}!"})
    assert changed.json()["text"] == "Thank you, {{contact.name}}!" and changed.json()["name"] == "Thanks"
    viewer = join(client, tenant, "viewer")
    token = mcp_token(live.url, viewer, tenant["workspaceId"])
    listed = call_tool_raw(client, token, "list_saved_replies").json()["result"]["structuredContent"]
    assert [(item["name"], item["text"]) for item in listed["data"]] == [("Thanks", "Thank you, {{contact.name}}!")]
    gone = client.delete(f"/v1/saved-replies/{made['id']}", headers=bearer(tenant["apiKey"]))
    assert gone.json() == {"id": made["id"], "deleted": True}
    assert client.get(f"/v1/saved-replies/{made['id']}", headers=bearer(tenant["apiKey"])).status_code == 404


def test_a_saved_reply_with_text_is_a_422(client, tenant):
    bot = connect_account(client, tenant, "telegram")
    started = client.post("/v1/inbox/conversations", headers=bearer(tenant["apiKey"]),
                          json={"accountId": bot["id"], "contactHandle": "@pat"}).json()
    made = client.post("/v1/saved-replies", headers=bearer(tenant["apiKey"]), json={"name": "A", "text": "B"}).json()
    answer = client.post(f"/v1/conversations/{started['id']}/messages", headers=bearer(tenant["apiKey"]),
                         json={"savedReplyId": made["id"], "text": "also this"})
    assert answer.status_code == 422 and answer.json()["error"]["details"][0]["field"] == "savedReplyId"
