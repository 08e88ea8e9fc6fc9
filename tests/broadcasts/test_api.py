"""Broadcasts through /v1: the contract's rules (422 naming each field), the states and what may
change in each (409), the recipients log and the events, against the running service."""

from __future__ import annotations

import datetime as dt
import time

import pytest

from kit import clock
from storage.db import connection
from storage.models import Conversation, Event, Message
from tests.conftest import bearer
from tests.support.sandbox import connect_account
from tests.support.webhook_receiver import wait_for


def _contact(live, account, platform, contact_id, text="hi"):
    wrote = live.client.post(f"/sandbox/{platform}/inbound-message",
                             json={"accountId": account["id"], "from": {"id": contact_id, "name": f"C{contact_id}"},
                                   "text": text})
    assert wrote.status_code == 200, wrote.text


def _conversations(live, tenant, account):
    answer = live.client.get("/v1/conversations", headers=bearer(tenant["apiKey"]),
                             params={"accountId": account["id"], "limit": 100})
    return {row["externalConversationId"]: row for row in answer.json()["data"]}


def _bot_with_contacts(live, tenant, count=3):
    bot = connect_account(live.client, tenant, "telegram")
    for n in range(count):
        _contact(live, bot, "telegram", str(61000 + n))
    return bot, _conversations(live, tenant, bot)


def _create(live, tenant, **body):
    return live.client.post("/v1/broadcasts", json=body, headers=bearer(tenant["apiKey"]))


def _get(live, tenant, broadcast_id):
    answer = live.client.get(f"/v1/broadcasts/{broadcast_id}", headers=bearer(tenant["apiKey"]))
    assert answer.status_code == 200, answer.text
    return answer.json()


def _finished(live, tenant, broadcast_id, timeout=15):
    return wait_for(lambda: (b := _get(live, tenant, broadcast_id))["status"] in ("completed", "failed", "cancelled")
                    and b, timeout=timeout)


def _recipients(live, tenant, broadcast_id, **params):
    answer = live.client.get(f"/v1/broadcasts/{broadcast_id}/recipients", headers=bearer(tenant["apiKey"]),
                             params={"limit": 100, **params})
    assert answer.status_code == 200, answer.text
    return answer.json()


def _dms(live, platform, account):
    rows = live.client.get(f"/sandbox/{platform}/sent", params={"accountId": account["id"]}).json()["data"]
    return [row for row in rows if row["kind"] == "dm"]


def _fields(answer):
    assert answer.status_code == 422, answer.text
    assert answer.json()["error"]["code"] == "validation_failed"
    return {detail["field"] for detail in answer.json()["error"]["details"]}


def test_a_draft_has_the_create_fields_and_zero_counts(live):
    tenant = live.tenant()
    bot, _ = _bot_with_contacts(live, tenant, 1)
    label = "A label longer than twenty characters"
    answer = _create(live, tenant, accountId=bot["id"], name="Launch", text="Hello 👋 <b>", buttonLabel=label,
                     buttonUrl="https://shop.example.com/a", audience={"activeWithinDays": 7})
    assert answer.status_code == 201, answer.text
    body = answer.json()
    assert body["id"].startswith("bc_")
    assert body["status"] == "draft"
    assert body["buttonLabel"] == label  # stored whole
    assert body["text"] == "Hello 👋 <b>"
    assert body["audience"] == {"activeWithinDays": 7, "conversationIds": None}
    assert body["counts"] == {"targeted": 0, "sent": 0, "failed": 0, "skipped": 0}
    assert body["startedAt"] is None and body["completedAt"] is None and body["scheduledFor"] is None
    assert _get(live, tenant, body["id"]) == body


@pytest.mark.parametrize(("body", "fields"), [
    ({"buttonLabel": "Go"}, {"buttonLabel", "buttonUrl"}),
    ({"buttonUrl": "https://example.com"}, {"buttonLabel", "buttonUrl"}),
    ({"buttonLabel": "Go", "buttonUrl": "http://example.com"}, {"buttonUrl"}),
    ({"buttonLabel": "Go", "buttonUrl": "/relative"}, {"buttonUrl"}),
    ({"audience": {"activeWithinDays": 0}}, {"audience.activeWithinDays"}),
    ({"audience": {"activeWithinDays": 366}}, {"audience.activeWithinDays"}),
    ({"audience": {"activeWithinDays": "7"}}, {"audience.activeWithinDays"}),
    ({"audience": {"conversationIds": [""]}}, {"audience.conversationIds[0]"}),
    ({"audience": {"conversationIds": []}}, {"audience.conversationIds"}),
    ({"audience": {"conversationIds": ["conv_nope"]}}, {"audience.conversationIds[0]"}),
    ({"scheduledFor": "2030-01-01T09:00:00"}, {"scheduledFor"}),
    ({"scheduledFor": "2030-01-01T09:00:00", "timezone": "Mars/Olympus"}, {"timezone"}),
    ({"scheduledFor": "2020-01-01T09:00:00Z"}, {"scheduledFor"}),
    ({"scheduledFor": "tomorrow"}, {"scheduledFor"}),
    ({"scheduledFor": "2030-01-01T09:00:00Z", "sendNow": True}, {"scheduledFor", "sendNow"}),
    ({"sendNow": "yes"}, {"sendNow"}),
    ({"text": ""}, {"text"}),
    ({"text": "x" * 4097}, {"text"}),
    ({"name": None}, {"name"}),
    ({"surprise": 1}, {"surprise"}),
])
def test_each_rule_is_a_422_naming_the_field(live, body, fields):
    tenant = live.tenant()
    bot, _ = _bot_with_contacts(live, tenant, 0)
    answer = _create(live, tenant, **{"accountId": bot["id"], "name": "N", "text": "T", **body})
    assert _fields(answer) == fields


def test_a_conversation_of_another_account_is_refused_like_an_unknown_one(live):
    tenant, other = live.tenant(), live.tenant()
    bot, mine = _bot_with_contacts(live, tenant, 1)
    _, theirs = _bot_with_contacts(live, tenant, 1)
    _, foreign = _bot_with_contacts(live, other, 1)
    ids = [next(iter(mine.values()))["id"], next(iter(theirs.values()))["id"], next(iter(foreign.values()))["id"],
           "conv_0000000000000000000000000"]
    answer = _create(live, tenant, accountId=bot["id"], name="N", text="T", audience={"conversationIds": ids})
    assert _fields(answer) == {"audience.conversationIds[1]", "audience.conversationIds[2]",
                               "audience.conversationIds[3]"}
    messages = {d["message"] for d in answer.json()["error"]["details"]}
    assert len(messages) == 1  # the same words whether the id exists elsewhere or nowhere


def test_a_platform_without_direct_messages_is_refused(live):
    tenant = live.tenant()
    channel = connect_account(live.client, tenant, "youtube")
    assert _fields(_create(live, tenant, accountId=channel["id"], name="N", text="T")) == {"accountId"}


def test_another_workspaces_account_is_not_found(live):
    tenant, other = live.tenant(), live.tenant()
    bot, _ = _bot_with_contacts(live, other, 0)
    answer = _create(live, tenant, accountId=bot["id"], name="N", text="T")
    assert answer.status_code == 404


def test_send_now_reaches_every_conversation_once_with_events_and_a_recipients_log(live):
    tenant = live.tenant()
    bot, conversations = _bot_with_contacts(live, tenant, 3)
    answer = _create(live, tenant, accountId=bot["id"], name="Now", text="Sale today", sendNow=True)
    assert answer.status_code == 201, answer.text
    assert answer.json()["status"] == "scheduled"
    done = _finished(live, tenant, answer.json()["id"])
    assert done["status"] == "completed"
    assert done["counts"] == {"targeted": 3, "sent": 3, "failed": 0, "skipped": 0}
    assert done["startedAt"] is not None and done["completedAt"] >= done["startedAt"]
    assert sorted(row["to"] for row in _dms(live, "telegram", bot)) == sorted(conversations)
    log = _recipients(live, tenant, done["id"])
    assert log["pagination"]["total"] == 3
    assert {row["conversationId"] for row in log["data"]} == {c["id"] for c in conversations.values()}
    assert all(row["status"] == "sent" and row["messageId"].startswith("msg_") and row["sentAt"]
               and row["reason"] is None for row in log["data"])
    with connection():
        kinds = [e.type for e in Event.select().where(Event.workspace == tenant["workspaceId"],
                                                      Event.type.startswith("broadcast.")).order_by(Event.created_at)]
        started, completed = (Event.get(Event.workspace == tenant["workspaceId"], Event.type == t)
                              for t in ("broadcast.started", "broadcast.completed"))
        sources = {m.source for m in Message.select().where(Message.id.in_([r["messageId"] for r in log["data"]]))}
    assert kinds == ["broadcast.started", "broadcast.completed"]
    assert started.data["id"] == done["id"] and started.data["status"] == "sending"
    assert completed.data == done
    assert sources == {"broadcast"}


def test_conversation_ids_win_over_active_within_days(live):
    tenant = live.tenant()
    bot, conversations = _bot_with_contacts(live, tenant, 3)
    chosen = [conversations["61000"]["id"], conversations["61002"]["id"]]
    answer = _create(live, tenant, accountId=bot["id"], name="Some", text="Just you two", sendNow=True,
                     audience={"conversationIds": chosen, "activeWithinDays": 1})
    done = _finished(live, tenant, answer.json()["id"])
    assert done["counts"]["targeted"] == 2
    assert sorted(row["to"] for row in _dms(live, "telegram", bot)) == ["61000", "61002"]


def test_active_within_days_leaves_out_quiet_contacts(live):
    tenant = live.tenant()
    bot, _ = _bot_with_contacts(live, tenant, 2)
    quiet = live.client.post("/v1/inbox/conversations", headers=bearer(tenant["apiKey"]),
                             json={"accountId": bot["id"], "externalConversationId": "61999"})
    assert quiet.status_code == 201
    answer = _create(live, tenant, accountId=bot["id"], name="Active", text="Hi actives", sendNow=True,
                     audience={"activeWithinDays": 1})
    done = _finished(live, tenant, answer.json()["id"])
    assert done["counts"]["targeted"] == 2
    assert sorted(row["to"] for row in _dms(live, "telegram", bot)) == ["61000", "61001"]


def test_recipients_outside_the_window_are_skipped_before_any_call(live):
    tenant = live.tenant()
    page = connect_account(live.client, tenant, "instagram")
    _contact(live, page, "instagram", "ig-1001")
    stale = live.client.post("/v1/inbox/conversations", headers=bearer(tenant["apiKey"]),
                             json={"accountId": page["id"], "externalConversationId": "ig-2002"})
    assert stale.status_code == 201
    answer = _create(live, tenant, accountId=page["id"], name="IG", text="Window", sendNow=True)
    done = _finished(live, tenant, answer.json()["id"])
    assert done["status"] == "completed"
    assert done["counts"] == {"targeted": 2, "sent": 1, "failed": 0, "skipped": 1}
    rows = {row["conversationId"]: row for row in _recipients(live, tenant, done["id"])["data"]}
    skipped = rows[stale.json()["id"]]
    assert skipped["status"] == "skipped" and skipped["reason"] == "outside_messaging_window"
    assert skipped["messageId"] is None
    assert [row["to"] for row in _dms(live, "instagram", page)] == ["ig-1001"]


def test_a_scheduled_broadcast_can_change_and_a_sending_one_cannot(live):
    tenant = live.tenant()
    bot, _ = _bot_with_contacts(live, tenant, 2)
    later = (dt.datetime.now(dt.UTC) + dt.timedelta(hours=2)).strftime("%Y-%m-%dT%H:%M:%SZ")
    created = _create(live, tenant, accountId=bot["id"], name="Later", text="v1", scheduledFor=later).json()
    assert created["status"] == "scheduled" and created["scheduledFor"] == later
    path = f"/v1/broadcasts/{created['id']}"
    changed = live.client.put(path, json={"text": "v2", "buttonLabel": "Open", "buttonUrl": "https://x.example"},
                              headers=bearer(tenant["apiKey"]))
    assert changed.status_code == 200, changed.text
    assert changed.json()["text"] == "v2" and changed.json()["scheduledFor"] == later  # kept
    assert changed.json()["name"] == "Later"
    # the button rule holds for the result: clearing one half alone is refused
    assert _fields(live.client.put(path, json={"buttonUrl": None}, headers=bearer(tenant["apiKey"]))) == {
        "buttonLabel", "buttonUrl"}
    assert _fields(live.client.put(path, json={"accountId": bot["id"]}, headers=bearer(tenant["apiKey"]))) == {
        "accountId"}
    draft = live.client.put(path, json={"scheduledFor": None}, headers=bearer(tenant["apiKey"]))
    assert draft.json()["status"] == "draft"

    live.client.post("/sandbox/telegram/latency", json={"milliseconds": 700})
    started = live.client.put(path, json={"sendNow": True}, headers=bearer(tenant["apiKey"]))
    assert started.json()["status"] == "scheduled"
    wait_for(lambda: _get(live, tenant, created["id"])["status"] == "sending", timeout=5)
    refused = live.client.put(path, json={"text": "v3"}, headers=bearer(tenant["apiKey"]))
    assert refused.status_code == 409 and refused.json()["error"]["code"] == "conflict"
    assert live.client.delete(path, headers=bearer(tenant["apiKey"])).status_code == 409
    done = _finished(live, tenant, created["id"])
    assert [row["text"] for row in _dms(live, "telegram", bot)] == ["v2", "v2"]
    assert live.client.put(path, json={"text": "v4"}, headers=bearer(tenant["apiKey"])).status_code == 409
    assert done["status"] == "completed"


def test_only_a_draft_can_be_deleted(live):
    tenant = live.tenant()
    bot, _ = _bot_with_contacts(live, tenant, 0)
    draft = _create(live, tenant, accountId=bot["id"], name="D", text="T").json()
    later = (dt.datetime.now(dt.UTC) + dt.timedelta(days=1)).isoformat()
    scheduled = _create(live, tenant, accountId=bot["id"], name="S", text="T", scheduledFor=later).json()
    gone = live.client.delete(f"/v1/broadcasts/{draft['id']}", headers=bearer(tenant["apiKey"]))
    assert gone.status_code == 200 and gone.json() == {"id": draft["id"], "deleted": True}
    assert live.client.get(f"/v1/broadcasts/{draft['id']}", headers=bearer(tenant["apiKey"])).status_code == 404
    assert live.client.delete(f"/v1/broadcasts/{scheduled['id']}", headers=bearer(tenant["apiKey"])).status_code == 409


def test_cancel_a_scheduled_broadcast_and_nothing_is_sent(live):
    tenant = live.tenant()
    bot, _ = _bot_with_contacts(live, tenant, 2)
    soon = (dt.datetime.now(dt.UTC) + dt.timedelta(minutes=1)).isoformat()
    created = _create(live, tenant, accountId=bot["id"], name="C", text="never", scheduledFor=soon).json()
    cancelled = live.client.post(f"/v1/broadcasts/{created['id']}/cancel", headers=bearer(tenant["apiKey"]))
    assert cancelled.status_code == 200 and cancelled.json()["status"] == "cancelled"
    assert cancelled.json()["completedAt"] is not None
    again = live.client.post(f"/v1/broadcasts/{created['id']}/cancel", headers=bearer(tenant["apiKey"]))
    assert again.status_code == 200 and again.json()["status"] == "cancelled"
    assert live.client.put(f"/v1/broadcasts/{created['id']}", json={"text": "x"},
                           headers=bearer(tenant["apiKey"])).status_code == 409
    draft = _create(live, tenant, accountId=bot["id"], name="D", text="T").json()
    assert live.client.post(f"/v1/broadcasts/{draft['id']}/cancel",
                            headers=bearer(tenant["apiKey"])).status_code == 409
    clock.advance(120)  # past its time
    time.sleep(0.6)  # a few scheduler ticks: nothing to await, absence is the point
    assert _dms(live, "telegram", bot) == []
    assert _get(live, tenant, created["id"])["status"] == "cancelled"


def test_cancel_while_sending_skips_everyone_not_yet_sent(live):
    tenant = live.tenant()
    bot, conversations = _bot_with_contacts(live, tenant, 8)
    live.client.post("/sandbox/telegram/latency", json={"milliseconds": 300})
    created = _create(live, tenant, accountId=bot["id"], name="Stop", text="some of you", sendNow=True).json()
    wait_for(lambda: len(_dms(live, "telegram", bot)) >= 1, timeout=10)
    cancelled = live.client.post(f"/v1/broadcasts/{created['id']}/cancel", headers=bearer(tenant["apiKey"]))
    assert cancelled.status_code == 200 and cancelled.json()["status"] == "cancelled"
    # every recipient settles: none pending; the ones never sent are skipped as cancelled
    rows = wait_for(lambda: (r := _recipients(live, tenant, created["id"])["data"])
                    and all(row["status"] != "pending" for row in r) and r, timeout=10)
    final = _get(live, tenant, created["id"])
    sent_to = [row["to"] for row in _dms(live, "telegram", bot)]
    skipped = [row for row in rows if row["status"] == "skipped"]
    assert skipped and all(row["reason"] == "cancelled" and row["messageId"] is None for row in skipped)
    assert len(sent_to) < 8 and len(set(sent_to)) == len(sent_to)
    assert final["status"] == "cancelled"
    assert final["counts"]["sent"] == len(sent_to) == sum(row["status"] == "sent" for row in rows)
    assert final["counts"]["targeted"] == 8 == final["counts"]["sent"] + final["counts"]["skipped"]
    with connection():  # the unsent messages are gone, not left to send
        assert Message.select().where(Message.source == "broadcast", Message.status == "pending",
                                      Message.conversation.in_([c["id"] for c in conversations.values()])).count() == 0


def test_list_filters_by_status_and_account(live):
    tenant = live.tenant()
    bot, _ = _bot_with_contacts(live, tenant, 0)
    other, _ = _bot_with_contacts(live, tenant, 0)
    a = _create(live, tenant, accountId=bot["id"], name="A", text="T").json()
    later = (dt.datetime.now(dt.UTC) + dt.timedelta(days=1)).isoformat()
    b = _create(live, tenant, accountId=bot["id"], name="B", text="T", scheduledFor=later).json()
    c = _create(live, tenant, accountId=other["id"], name="C", text="T").json()
    listed = live.client.get("/v1/broadcasts", headers=bearer(tenant["apiKey"])).json()
    assert [row["id"] for row in listed["data"]] == [c["id"], b["id"], a["id"]]
    assert listed["pagination"] == {"page": 1, "limit": 20, "total": 3, "pages": 1}
    drafts = live.client.get("/v1/broadcasts", params={"status": "draft", "accountId": bot["id"]},
                             headers=bearer(tenant["apiKey"])).json()
    assert [row["id"] for row in drafts["data"]] == [a["id"]]
    assert live.client.get("/v1/broadcasts", params={"status": "nope"},
                           headers=bearer(tenant["apiKey"])).status_code == 422
    assert live.client.get("/v1/broadcasts", params={"limit": 101},
                           headers=bearer(tenant["apiKey"])).status_code == 422


def test_deleting_the_account_for_good_takes_its_broadcasts(live):
    tenant = live.tenant()
    bot, _ = _bot_with_contacts(live, tenant, 1)
    sent = _create(live, tenant, accountId=bot["id"], name="Done", text="T", sendNow=True).json()
    _finished(live, tenant, sent["id"])
    draft = _create(live, tenant, accountId=bot["id"], name="Draft", text="T").json()
    assert live.client.post(f"/v1/accounts/{bot['id']}/disconnect", headers=bearer(tenant["apiKey"])).status_code == 200
    gone = live.client.delete(f"/v1/accounts/{bot['id']}/permanent", headers=bearer(tenant["apiKey"]))
    assert gone.status_code == 200, gone.text
    for broadcast in (sent, draft):
        assert live.client.get(f"/v1/broadcasts/{broadcast['id']}", headers=bearer(tenant["apiKey"])).status_code == 404


def test_scheduling_on_a_disconnected_account_is_a_conflict(live):
    tenant = live.tenant()
    bot, _ = _bot_with_contacts(live, tenant, 0)
    draft = _create(live, tenant, accountId=bot["id"], name="D", text="T").json()
    live.client.post(f"/v1/accounts/{bot['id']}/disconnect", headers=bearer(tenant["apiKey"]))
    assert _create(live, tenant, accountId=bot["id"], name="N", text="T", sendNow=True).status_code == 409
    refused = live.client.put(f"/v1/broadcasts/{draft['id']}", json={"sendNow": True},
                              headers=bearer(tenant["apiKey"]))
    assert refused.status_code == 409


def test_a_read_key_lists_but_cannot_create_or_cancel(live):
    tenant = live.tenant()
    bot, _ = _bot_with_contacts(live, tenant, 0)
    later = (dt.datetime.now(dt.UTC) + dt.timedelta(days=1)).isoformat()
    scheduled = _create(live, tenant, accountId=bot["id"], name="S", text="T", scheduledFor=later).json()
    made = live.client.post("/v1/api-keys", json={"name": "reader", "permission": "read"},
                            headers=bearer(tenant["apiKey"]))
    reader = bearer(made.json()["key"])
    assert live.client.get("/v1/broadcasts", headers=reader).json()["pagination"]["total"] == 1
    assert live.client.post("/v1/broadcasts", json={"accountId": bot["id"], "name": "N", "text": "T"},
                            headers=reader).status_code == 403
    assert live.client.post(f"/v1/broadcasts/{scheduled['id']}/cancel", headers=reader).status_code == 403
    assert _get(live, tenant, scheduled["id"])["status"] == "scheduled"


def test_a_whatsapp_message_reported_failed_later_fails_its_recipient(live):
    tenant = live.tenant()
    number = connect_account(live.client, tenant, "whatsapp")
    # The platform's window closed long ago (its clock), while ours still thinks it open: WhatsApp
    # accepts the message, then reports it failed (131047) through its status webhook.
    old = live.client.post("/sandbox/whatsapp/inbound-message", json={
        "accountId": number["id"], "from": {"id": "15550104444"}, "text": "old", "timestamp": "2020-01-01T00:00:00Z"})
    assert old.status_code == 200
    with connection():
        Conversation.update(last_inbound_at=dt.datetime.now(dt.UTC).replace(tzinfo=None)).where(
            Conversation.account == number["id"]).execute()
    created = _create(live, tenant, accountId=number["id"], name="Late", text="too late", sendNow=True).json()
    rows = wait_for(lambda: (r := _recipients(live, tenant, created["id"])["data"]) and r[0]["status"] == "failed"
                    and r, timeout=15)
    assert "131047" in rows[0]["reason"]
    final = _get(live, tenant, created["id"])
    assert final["counts"] == {"targeted": 1, "sent": 0, "failed": 1, "skipped": 0}


def test_an_empty_audience_completes_at_once_with_zero_counts(live):
    tenant = live.tenant()
    bot, _ = _bot_with_contacts(live, tenant, 0)
    created = _create(live, tenant, accountId=bot["id"], name="Nobody", text="echo", sendNow=True).json()
    done = _finished(live, tenant, created["id"])
    assert done["status"] == "completed"
    assert done["counts"] == {"targeted": 0, "sent": 0, "failed": 0, "skipped": 0}
    assert _recipients(live, tenant, created["id"])["data"] == []


def test_a_key_limited_to_one_profile_sees_only_that_profiles_broadcasts(live):
    tenant = live.tenant()
    mine, _ = _bot_with_contacts(live, tenant, 0)
    other_profile = live.client.post("/v1/profiles", json={"name": "Other brand"},
                                     headers=bearer(tenant["apiKey"])).json()
    theirs = connect_account(live.client, {**tenant, "profileId": other_profile["id"]}, "telegram")
    a = _create(live, tenant, accountId=mine["id"], name="Mine", text="T").json()
    b = _create(live, tenant, accountId=theirs["id"], name="Theirs", text="T").json()
    made = live.client.post("/v1/api-keys", json={"name": "brand", "scope": "profiles",
                                                   "profileIds": [tenant["profileId"]]},
                            headers=bearer(tenant["apiKey"]))
    limited = bearer(made.json()["key"])
    listed = live.client.get("/v1/broadcasts", headers=limited).json()
    assert [row["id"] for row in listed["data"]] == [a["id"]]
    assert live.client.get(f"/v1/broadcasts/{b['id']}", headers=limited).status_code == 403
    assert live.client.get("/v1/broadcasts", params={"accountId": theirs["id"]}, headers=limited).status_code == 403
    assert live.client.post("/v1/broadcasts", json={"accountId": theirs["id"], "name": "N", "text": "T"},
                            headers=limited).status_code == 403
    other = live.tenant()
    assert live.client.get(f"/v1/broadcasts/{a['id']}", headers=bearer(other["apiKey"])).status_code == 404
