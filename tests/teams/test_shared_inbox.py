"""The shared inbox through /v1 and MCP: status, snooze, assignee, labels, internal notes and
search; an inbound message opens a resolved conversation again, a snooze ends by itself, and each
change is a `conversation.updated` event."""

from __future__ import annotations

import datetime as dt

import pytest

from kit import clock
from service.inbox import sharing
from storage.db import connection, db
from storage.models import Conversation, Event
from tests.conftest import bearer
from tests.support.oauth_flow import call_tool_raw
from tests.support.sandbox import connect_account
from tests.teams.people import join, mcp_token

pytestmark = pytest.mark.shared_service


def _dm(client, account, contact_id, text, **sender):
    answer = client.post("/sandbox/telegram/inbound-message",
                         json={"accountId": account["id"], "from": {"id": contact_id, **sender}, "text": text})
    assert answer.status_code == 200, answer.text


def _list(client, tenant, **params) -> list[dict]:
    answer = client.get("/v1/conversations", headers=bearer(tenant["apiKey"]), params=params)
    assert answer.status_code == 200, answer.text
    return answer.json()["data"]


def _patch(client, tenant, conversation_id, **body):
    return client.patch(f"/v1/conversations/{conversation_id}", json=body, headers=bearer(tenant["apiKey"]))


def _updates(tenant) -> list[dict]:
    with connection():
        return [e.data for e in Event.select().where(Event.type == "conversation.updated",
                                                     Event.workspace == tenant["workspaceId"]).order_by(Event.id)]


@pytest.fixture
def inbox(client, tenant):
    bot = connect_account(client, tenant, "telegram")
    _dm(client, bot, "7001", "Where is my parcel? Tracking number 4471", handle="zoe_k", name="Zoë Kowalski")
    _dm(client, bot, "7002", "Do you ship to Brazil?", handle="ana_b", name="Ana Beatriz")
    by_name = {c["contactName"]: c for c in _list(client, tenant)}
    return {"bot": bot, "zoe": by_name["Zoë Kowalski"], "ana": by_name["Ana Beatriz"]}


def test_a_conversation_is_assigned_labelled_and_resolved_and_a_new_message_opens_it(client, tenant, inbox):
    zoe = inbox["zoe"]
    assert (zoe["status"], zoe["assigneeId"], zoe["labels"]) == ("open", None, [])
    changed = _patch(client, tenant, zoe["id"], assigneeId=tenant["userId"], labels=["shipping", "vip"],
                     status="resolved")
    assert changed.status_code == 200, changed.text
    assert (changed.json()["status"], changed.json()["assigneeId"], changed.json()["labels"]) == (
        "resolved", tenant["userId"], ["shipping", "vip"])
    assert [c["id"] for c in _list(client, tenant, status="resolved")] == [zoe["id"]]
    assert [c["id"] for c in _list(client, tenant, assigneeId=tenant["userId"])] == [zoe["id"]]
    assert [c["id"] for c in _list(client, tenant, assigneeId="none")] == [inbox["ana"]["id"]]
    assert [c["id"] for c in _list(client, tenant, label="vip")] == [zoe["id"]]
    _dm(client, inbox["bot"], "7001", "Any news?", handle="zoe_k", name="Zoë Kowalski")
    again = client.get(f"/v1/conversations/{zoe['id']}", headers=bearer(tenant["apiKey"])).json()
    assert again["status"] == "open" and again["labels"] == ["shipping", "vip"]
    assert [update["status"] for update in _updates(tenant)] == ["resolved", "open"]


def test_a_snooze_ends_by_itself(client, tenant, inbox):
    ana = inbox["ana"]
    soon = clock.iso(clock.now() + dt.timedelta(hours=1))
    snoozed = _patch(client, tenant, ana["id"], status="snoozed", snoozedUntil=soon)
    assert snoozed.json()["status"] == "snoozed" and snoozed.json()["snoozedUntil"] == soon
    with connection(), db.atomic():  # its time comes
        Conversation.update(snoozed_until=clock.now() - dt.timedelta(seconds=1)).where(
            Conversation.id == ana["id"]).execute()
    with connection():
        assert sharing.wake_snoozed() >= 1
    woke = client.get(f"/v1/conversations/{ana['id']}", headers=bearer(tenant["apiKey"])).json()
    assert (woke["status"], woke["snoozedUntil"]) == ("open", None)


@pytest.mark.parametrize(("body", "field"), [
    ({"status": "snoozed"}, "snoozedUntil"),
    ({"status": "snoozed", "snoozedUntil": "2001-01-01T00:00:00Z"}, "snoozedUntil"),
    ({"assigneeId": "usr_nobody"}, "assigneeId"),
    ({"labels": ["x"] * 21}, "labels"),
    ({"status": "closed"}, "status"),
])
def test_a_bad_change_is_a_422_naming_its_field(client, tenant, inbox, body, field):
    answer = _patch(client, tenant, inbox["zoe"]["id"], **body)
    assert answer.status_code == 422
    assert answer.json()["error"]["details"][0]["field"] == field


def test_an_assignee_must_see_the_conversations_profile(client, tenant, inbox):
    from tests.support.factories import add_profile

    other = add_profile(tenant["workspaceId"])
    elsewhere = join(client, tenant, "member", profileIds=[other])
    refused = _patch(client, tenant, inbox["zoe"]["id"], assigneeId=elsewhere["userId"])
    assert refused.status_code == 422
    teammate = join(client, tenant, "member")
    assert _patch(client, tenant, inbox["zoe"]["id"], assigneeId=teammate["userId"]).status_code == 200


@pytest.mark.parametrize(("q", "who"), [
    ("zoe", ["zoe"]), ("KOWAL", ["zoe"]), ("zoë", ["zoe"]), ("ana_b", ["ana"]), ("parcel", ["zoe"]),
    ("brazil ship", ["ana"]), ("4471", ["zoe"]), ("nothing-like-it", []), ("!!!", []),
])
def test_search_finds_contacts_and_message_text_case_and_accents_aside(client, tenant, inbox, q, who):
    assert [c["id"] for c in _list(client, tenant, q=q)] == [inbox[name]["id"] for name in who]


def test_notes_stay_with_the_team(client, tenant, inbox):
    zoe = inbox["zoe"]
    made = client.post(f"/v1/conversations/{zoe['id']}/notes", json={"text": "Called the courier 📞"},
                       headers=bearer(tenant["apiKey"]))
    assert made.status_code == 201
    listed = client.get(f"/v1/conversations/{zoe['id']}/notes", headers=bearer(tenant["apiKey"])).json()["data"]
    assert [note["text"] for note in listed] == ["Called the courier 📞"]
    sent = client.get("/sandbox/telegram/sent", params={"accountId": inbox["bot"]["id"]}).json()
    assert all("courier" not in (item.get("text") or "") for item in sent["data"])
    messages = client.get(f"/v1/conversations/{zoe['id']}/messages", headers=bearer(tenant["apiKey"])).json()["data"]
    assert all("courier" not in (m["text"] or "") for m in messages)


def test_the_shared_inbox_through_mcp(client, live, tenant, inbox):
    member = join(client, tenant, "member")
    token = mcp_token(live.url, member, tenant["workspaceId"])

    def tool(name, **arguments):
        answer = call_tool_raw(client, token, name, arguments)
        assert answer.status_code == 200, answer.text
        return answer.json()["result"]["structuredContent"]

    found = tool("list_conversations", q="parcel")
    assert [c["id"] for c in found["data"]] == [inbox["zoe"]["id"]]
    mine = tool("update_conversation", conversationId=inbox["zoe"]["id"], assigneeId=member["userId"])
    assert mine["assigneeId"] == member["userId"] and mine["status"] == "open"
    note = tool("add_note", conversationId=inbox["zoe"]["id"], text="I'll take it")
    assert note["authorId"] == member["userId"]
    assert [c["id"] for c in tool("list_conversations", assigneeId=member["userId"])["data"]] == [inbox["zoe"]["id"]]
    viewer = join(client, tenant, "viewer")
    read_only = mcp_token(live.url, viewer, tenant["workspaceId"])
    refused = call_tool_raw(client, read_only, "add_note", {"conversationId": inbox["zoe"]["id"], "text": "hi"})
    assert refused.status_code == 403 or refused.json()["result"]["structuredContent"]["error"]["code"] == "forbidden"
