"""WhatsApp broadcasts and sequence steps that send an approved template instead of text (CONTRACT
section 3: "the only way to reach contacts outside the 24 h window"), checked against the account's
templates when saved, through /v1 and MCP; what WhatsApp received is read back from the sandbox."""

from __future__ import annotations

import pytest

from tests.conftest import bearer
from tests.support.oauth_flow import call_tool_raw, hand_made_tokens
from tests.support.sandbox import connect_account
from tests.support.webhook_receiver import wait_for

pytestmark = pytest.mark.shared_service

ORDER = {"name": "order_update", "language": "en_US", "parameters": ["A-1042", "Friday"]}
# As records show it: a template without a media header or URL button variables.
ORDER_RECORD = {**ORDER, "headerMediaUrl": None, "buttonParameters": [], "headerText": None}


def _number_with_contacts(client, tenant):
    """A WhatsApp number, one contact who wrote (inside the window) and one who never did (outside)."""
    number = connect_account(client, tenant, "whatsapp")
    wrote = client.post("/sandbox/whatsapp/inbound-message",
                        json={"accountId": number["id"], "from": {"id": "15550201111"}, "text": "hi"})
    assert wrote.status_code == 200, wrote.text
    quiet = client.post("/v1/inbox/conversations", headers=bearer(tenant["apiKey"]),
                        json={"accountId": number["id"], "contactHandle": "+15550202222"})
    assert quiet.status_code == 201, quiet.text
    return number, quiet.json()


def _dms(client, account):
    rows = client.get("/sandbox/whatsapp/sent", params={"accountId": account["id"]}).json()["data"]
    return [row for row in rows if row["kind"] == "dm"]


def test_a_template_broadcast_reaches_contacts_outside_the_window(client, tenant):
    headers = bearer(tenant["apiKey"])
    number, _ = _number_with_contacts(client, tenant)
    made = client.post("/v1/broadcasts", headers=headers, json={
        "accountId": number["id"], "name": "Shipping", "template": ORDER, "sendNow": True})
    assert made.status_code == 201, made.text
    assert made.json()["template"] == ORDER_RECORD and made.json()["text"] is None
    done = wait_for(lambda: (b := client.get(f"/v1/broadcasts/{made.json()['id']}", headers=headers).json())
                    ["status"] == "completed" and b, timeout=15)
    assert done["counts"] == {"targeted": 2, "sent": 2, "failed": 0, "skipped": 0}
    sent = _dms(client, number)
    assert sorted(row["to"] for row in sent) == ["15550201111", "15550202222"]
    assert {row["text"] for row in sent} == {"Your order A-1042 ships on Friday."}
    assert {row["payload"]["type"] for row in sent} == {"template"}


def test_a_template_is_checked_against_the_accounts_approved_ones(client, tenant):
    headers = bearer(tenant["apiKey"])
    number, _ = _number_with_contacts(client, tenant)
    bot = connect_account(client, tenant, "telegram")
    base = {"accountId": number["id"], "name": "Bad"}
    cases = [
        ({**base, "template": {**ORDER, "name": "no_such_template"}}, ["template"]),
        ({**base, "template": {"name": "spring_offer", "language": "en_US", "parameters": ["20%"]}}, ["template"]),
        ({**base, "template": {**ORDER, "parameters": ["A-1"]}}, ["template.parameters"]),
        ({**base, "accountId": bot["id"], "template": ORDER}, ["template"]),
        ({**base, "template": ORDER, "text": "and text"}, ["text"]),
        ({**base, "template": ORDER, "buttonLabel": "Go", "buttonUrl": "https://example.com"}, ["buttonLabel"]),
        (base, ["text"]),
    ]
    for body, fields in cases:
        answer = client.post("/v1/broadcasts", headers=headers, json=body)
        assert answer.status_code == 422, (body, answer.text)
        assert [d["field"] for d in answer.json()["error"]["details"]] == fields, body
    draft = client.post("/v1/broadcasts", headers=headers, json={**base, "text": "first text"}).json()
    changed = client.put(f"/v1/broadcasts/{draft['id']}", headers=headers, json={"template": ORDER})
    assert changed.status_code == 200, changed.text
    assert (changed.json()["text"], changed.json()["template"]) == (None, ORDER_RECORD)
    back = client.put(f"/v1/broadcasts/{draft['id']}", headers=headers, json={"text": "text again"}).json()
    assert (back["text"], back["template"]) == ("text again", None)


def test_a_sequence_step_sends_a_template_outside_the_window(client, tenant):
    headers = bearer(tenant["apiKey"])
    number, quiet = _number_with_contacts(client, tenant)
    made = client.post("/v1/sequences", headers=headers, json={
        "accountId": number["id"], "name": "Follow-up", "trigger": "manual",
        "steps": [{"delayMinutes": 0, "template": ORDER}]})
    assert made.status_code == 201, made.text
    assert made.json()["steps"][0]["template"] == ORDER_RECORD and made.json()["steps"][0]["text"] is None
    refused = client.post("/v1/sequences", headers=headers, json={
        "accountId": number["id"], "name": "Bad", "trigger": "manual",
        "steps": [{"delayMinutes": 0, "text": "hi"}, {"delayMinutes": 5, "template": {**ORDER, "language": "fr"}}]})
    assert refused.status_code == 422
    assert [d["field"] for d in refused.json()["error"]["details"]] == ["steps[1].template"]

    enrolled = client.post(f"/v1/sequences/{made.json()['id']}/enroll", headers=headers,
                           json={"conversationId": quiet["id"]})
    assert enrolled.status_code == 200, enrolled.text
    (sent,) = wait_for(lambda: _dms(client, number), timeout=15)
    assert sent["to"] == "15550202222" and sent["text"] == "Your order A-1042 ships on Friday."


def test_an_assistant_creates_a_template_broadcast(client, tenant, browser):
    number, _ = _number_with_contacts(client, tenant)
    _, tokens = hand_made_tokens(browser, workspace_id=tenant["workspaceId"])
    made = call_tool_raw(browser, tokens["access_token"], "create_broadcast", {
        "accountId": number["id"], "name": "From the assistant", "template": ORDER}).json()["result"]
    assert made.get("isError") is not True, made
    assert made["structuredContent"]["status"] == "draft" and made["structuredContent"]["template"] == ORDER_RECORD
    wrong = call_tool_raw(browser, tokens["access_token"], "create_broadcast", {
        "accountId": number["id"], "name": "Wrong", "template": {**ORDER, "name": "nope"}}).json()["result"]
    assert wrong["structuredContent"]["error"]["details"][0]["field"] == "template"
