"""The inbox end to end (CONTRACT section 3 "Inbox"): contacts write through the sandbox, the
service answers through the API, and what the platform received is read back from the emulator."""

import datetime as dt
import threading

import httpx2
import pytest

from storage.db import connection
from storage.models import Event, Message
from tests.conftest import bearer
from tests.support.factories import add_key, add_profile
from tests.support.sandbox import connect_account

pytestmark = pytest.mark.shared_service


def _dm(client, platform, account, contact_id, text, **sender):
    body = {"accountId": account["id"], "from": {"id": contact_id, **sender}, "text": text}
    if "timestamp" in sender:
        body["timestamp"] = sender.pop("timestamp")
        body["from"] = {"id": contact_id, **sender}
    if "deliveries" in sender:
        body["deliveries"] = sender.pop("deliveries")
        body["from"] = {"id": contact_id, **sender}
    answer = client.post(f"/sandbox/{platform}/inbound-message", json=body)
    assert answer.status_code == 200, answer.text
    assert answer.json()["delivered"] is True


def _conversations(client, tenant, **params):
    answer = client.get("/v1/conversations", headers=bearer(tenant["apiKey"]), params=params)
    assert answer.status_code == 200, answer.text
    return answer.json()


def _messages(client, tenant, conversation_id, **params):
    answer = client.get(f"/v1/conversations/{conversation_id}/messages", headers=bearer(tenant["apiKey"]),
                        params=params)
    assert answer.status_code == 200, answer.text
    return answer.json()["data"]


def _events(tenant, kind):
    """The workspace's events of that kind (other tests' workspaces share the storage)."""
    with connection():
        return [e.data for e in Event.select().where(Event.type == kind, Event.workspace == tenant["workspaceId"])
                .order_by(Event.created_at, Event.id)]


def test_a_contacts_dm_appears_in_the_inbox_once(client, tenant):
    bot = connect_account(client, tenant, "telegram")
    _dm(client, "telegram", bot, "5001", "Olá 👋 <b>", handle="Carl_X", name="Carl Sagan", deliveries=2)
    listed = _conversations(client, tenant)
    assert listed["pagination"] == {"page": 1, "limit": 20, "total": 1, "pages": 1}
    conversation = listed["data"][0]
    assert conversation["accountId"] == bot["id"]
    assert conversation["platform"] == "telegram"
    assert conversation["contactHandle"] == "carl_x"
    assert conversation["contactName"] == "Carl Sagan"
    assert conversation["externalConversationId"] == "5001"
    assert conversation["unreadCount"] == 1
    assert conversation["lastInboundAt"] == conversation["lastMessageAt"]
    assert conversation["status"] == "open"
    messages = _messages(client, tenant, conversation["id"])
    assert [(m["direction"], m["text"], m["status"], m["source"]) for m in messages] == [
        ("inbound", "Olá 👋 <b>", "received", "inbox")]
    assert [e["id"] for e in _events(tenant, "conversation.started")] == [conversation["id"]]
    assert [e["id"] for e in _events(tenant, "message.received")] == [messages[0]["id"]]
    one = client.get(f"/v1/conversations/{conversation['id']}", headers=bearer(tenant["apiKey"]))
    assert one.status_code == 200
    assert one.json() == conversation


def _start(client, tenant, key=None, **body):
    return client.post("/v1/inbox/conversations", headers=bearer(key or tenant["apiKey"]), json=body)


def _send(client, tenant, conversation_id, text, key=None):
    return client.post(f"/v1/conversations/{conversation_id}/messages", headers=bearer(key or tenant["apiKey"]),
                       json={"text": text})


def _sent(client, platform, account):
    answer = client.get(f"/sandbox/{platform}/sent", params={"accountId": account["id"]})
    assert answer.status_code == 200
    return [row for row in answer.json()["data"] if row["kind"] == "dm"]


def test_a_reply_reaches_the_contact_on_the_platform(client, tenant):
    ig = connect_account(client, tenant, "instagram")
    _dm(client, "instagram", ig, "igsid-77", "Do you ship to Porto?")
    conversation = _conversations(client, tenant)["data"][0]
    assert conversation["externalConversationId"] == "igsid-77"
    assert conversation["contactHandle"] is None  # Meta names the contact only by a scoped id

    answer = _send(client, tenant, conversation["id"], "Yes — 2 days 🚚")
    assert answer.status_code == 201, answer.text
    message = answer.json()
    assert message["status"] == "sent"
    assert message["direction"] == "outbound"
    assert message["source"] == "inbox"
    assert message["conversationId"] == conversation["id"]
    sent = _sent(client, "instagram", ig)
    assert [(row["to"], row["text"], row["platformId"]) for row in sent] == [
        ("igsid-77", "Yes — 2 days 🚚", message["platformMessageId"])]
    after = client.get(f"/v1/conversations/{conversation['id']}", headers=bearer(tenant["apiKey"])).json()
    assert after["unreadCount"] == 0
    assert after["lastMessageAt"] >= conversation["lastMessageAt"]
    assert [m["text"] for m in _messages(client, tenant, conversation["id"])] == [
        "Do you ship to Porto?", "Yes — 2 days 🚚"]
    assert [e["id"] for e in _events(tenant, "message.sent")] == [message["id"]]


def test_a_second_start_returns_the_same_conversation(client, tenant):
    bot = connect_account(client, tenant, "telegram")
    first = _start(client, tenant, accountId=bot["id"], contactHandle="@Carl", contactName="Carl")
    assert first.status_code == 201, first.text
    assert first.json()["contactHandle"] == "carl"
    again = _start(client, tenant, accountId=bot["id"], contactHandle="CARL")
    assert again.status_code == 200
    assert again.json()["id"] == first.json()["id"]
    # The contact then writes: their chat joins the conversation started by handle.
    _dm(client, "telegram", bot, "5001", "hi", handle="carl", name="Carl")
    listed = _conversations(client, tenant)["data"]
    assert [c["id"] for c in listed] == [first.json()["id"]]
    assert listed[0]["externalConversationId"] == "5001"
    by_chat = _start(client, tenant, accountId=bot["id"], externalConversationId="5001")
    assert by_chat.status_code == 200
    assert by_chat.json()["id"] == first.json()["id"]
    assert len(_events(tenant, "conversation.started")) == 1


def test_whatsapp_numbers_are_compared_in_e164(client, tenant):
    wa = connect_account(client, tenant, "whatsapp")
    first = _start(client, tenant, accountId=wa["id"], contactHandle="+44 20 7946-0958")
    assert first.status_code == 201
    assert first.json()["contactHandle"] == "+442079460958"
    for spelling in ("0044 (20) 7946 0958", "442079460958"):
        again = _start(client, tenant, accountId=wa["id"], contactHandle=spelling)
        assert again.status_code == 200
        assert again.json()["id"] == first.json()["id"]
    _dm(client, "whatsapp", wa, "442079460958", "hello", name="Ana")
    listed = _conversations(client, tenant)["data"]
    assert [(c["id"], c["contactName"], c["unreadCount"]) for c in listed] == [(first.json()["id"], "Ana", 1)]
    bad = _start(client, tenant, accountId=wa["id"], contactHandle="call me")
    assert bad.status_code == 422
    assert bad.json()["error"]["details"][0]["field"] == "contactHandle"


def test_twenty_racing_starts_make_one_conversation(client, tenant, server_url):
    bot = connect_account(client, tenant, "telegram")
    barrier = threading.Barrier(20)
    answers = []

    def start(i):
        with httpx2.Client(base_url=server_url, timeout=30) as own:
            barrier.wait()
            answers.append(own.post("/v1/inbox/conversations", headers=bearer(tenant["apiKey"]),
                                    json={"accountId": bot["id"], "contactHandle": "@Racer" if i % 2 else "racer"}))

    threads = [threading.Thread(target=start, args=(i,)) for i in range(20)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(a.status_code for a in answers) == [200] * 19 + [201]
    assert len({a.json()["id"] for a in answers}) == 1
    assert _conversations(client, tenant)["pagination"]["total"] == 1
    assert len(_events(tenant, "conversation.started")) == 1


def test_start_needs_a_handle_or_an_id_and_a_connected_account(client, tenant):
    bot = connect_account(client, tenant, "telegram")
    neither = _start(client, tenant, accountId=bot["id"], contactName="Nobody")
    assert neither.status_code == 422
    assert {d["field"] for d in neither.json()["error"]["details"]} == {"contactHandle", "externalConversationId"}
    unknown_field = _start(client, tenant, accountId=bot["id"], contactHandle="a", handle="a")
    assert unknown_field.status_code == 422
    missing = _start(client, tenant, accountId="acc_missing", contactHandle="a")
    assert missing.status_code == 404
    client.post(f"/v1/accounts/{bot['id']}/disconnect", headers=bearer(tenant["apiKey"]))
    assert _start(client, tenant, accountId=bot["id"], contactHandle="a").status_code == 409


def test_list_is_newest_first_and_pages_within_bounds(client, tenant):
    bot = connect_account(client, tenant, "telegram")
    base = dt.datetime(2026, 3, 1, 12, 0, tzinfo=dt.UTC)
    for minute, chat in ((3, "1"), (1, "2"), (5, "3"), (2, "4"), (4, "5")):
        _dm(client, "telegram", bot, chat, f"from {chat}", timestamp=(base + dt.timedelta(minutes=minute)).isoformat())
    listed = _conversations(client, tenant)
    assert [c["externalConversationId"] for c in listed["data"]] == ["3", "5", "1", "4", "2"]
    second = _conversations(client, tenant, page=2, limit=2)
    assert [c["externalConversationId"] for c in second["data"]] == ["1", "4"]
    assert second["pagination"] == {"page": 2, "limit": 2, "total": 5, "pages": 3}
    assert _conversations(client, tenant, page=4, limit=2)["data"] == []
    assert len(_conversations(client, tenant, limit=100)["data"]) == 5
    for params in ({"page": 0}, {"page": -1}, {"page": "x"}, {"limit": 0}, {"limit": 101}, {"limit": "1.5"}):
        answer = client.get("/v1/conversations", headers=bearer(tenant["apiKey"]), params=params)
        assert answer.status_code == 422, params
        assert answer.json()["error"]["details"][0]["field"] == next(iter(params))


def test_platform_filter_takes_the_six_upper_case_names_only(client, tenant):
    bot = connect_account(client, tenant, "telegram")
    wa = connect_account(client, tenant, "whatsapp")
    _dm(client, "telegram", bot, "9", "tg")
    _dm(client, "whatsapp", wa, "15550001111", "wa")
    assert [c["platform"] for c in _conversations(client, tenant, platform="TELEGRAM")["data"]] == ["telegram"]
    assert [c["platform"] for c in _conversations(client, tenant, platform="WHATSAPP")["data"]] == ["whatsapp"]
    assert _conversations(client, tenant, platform="X")["data"] == []
    for value in ("telegram", "Telegram", "FACEBOOK", "META_ADS", "LINKEDIN", ""):
        answer = client.get("/v1/conversations", headers=bearer(tenant["apiKey"]), params={"platform": value})
        assert answer.status_code == 422, value
        assert answer.json()["error"]["details"][0]["field"] == "platform"
    assert [c["accountId"] for c in _conversations(client, tenant, accountId=wa["id"])["data"]] == [wa["id"]]
    assert _conversations(client, tenant, profileId=tenant["profileId"])["pagination"]["total"] == 2


def test_window_rule_of_meta_platforms_is_enforced_before_calling(client, tenant):
    ig = connect_account(client, tenant, "instagram")
    stale = (dt.datetime.now(dt.UTC) - dt.timedelta(hours=25)).isoformat()
    _dm(client, "instagram", ig, "igsid-old", "old question", timestamp=stale)
    conversation = _conversations(client, tenant)["data"][0]
    answer = _send(client, tenant, conversation["id"], "too late?")
    assert answer.status_code == 422
    assert answer.json()["error"]["code"] == "outside_messaging_window"
    assert _sent(client, "instagram", ig) == []
    assert [m["direction"] for m in _messages(client, tenant, conversation["id"])] == ["inbound"]
    # The contact writes again: the window opens.
    _dm(client, "instagram", ig, "igsid-old", "still there?")
    assert _send(client, tenant, conversation["id"], "yes!").status_code == 201
    # A WhatsApp contact who never wrote is outside the window; Telegram has none.
    wa = connect_account(client, tenant, "whatsapp")
    silent = _start(client, tenant, accountId=wa["id"], contactHandle="+15550002222").json()
    assert _send(client, tenant, silent["id"], "hello").json()["error"]["code"] == "outside_messaging_window"
    bot = connect_account(client, tenant, "telegram")
    _dm(client, "telegram", bot, "77", "hi", timestamp=stale)
    tg = _conversations(client, tenant, platform="TELEGRAM")["data"][0]
    assert _send(client, tenant, tg["id"], "hello after a day").status_code == 201


def test_platform_refusal_is_502_and_the_message_stays_failed(client, tenant):
    bot = connect_account(client, tenant, "telegram")
    _dm(client, "telegram", bot, "31", "hi")
    conversation = _conversations(client, tenant)["data"][0]
    client.post("/sandbox/telegram/faults", json={"accountId": bot["id"], "failNext": 1, "status": 400})
    answer = _send(client, tenant, conversation["id"], "will fail")
    assert answer.status_code == 502
    assert answer.json()["error"]["code"] == "platform_error"
    failed = _messages(client, tenant, conversation["id"])[-1]
    assert (failed["text"], failed["status"], failed["platformMessageId"]) == ("will fail", "failed", None)
    assert failed["error"]
    assert [e["id"] for e in _events(tenant, "message.failed")] == [failed["id"]]
    assert _send(client, tenant, conversation["id"], "works now").status_code == 201


def test_sending_on_a_disconnected_account_is_409(client, tenant):
    bot = connect_account(client, tenant, "telegram")
    _dm(client, "telegram", bot, "32", "hi")
    conversation = _conversations(client, tenant)["data"][0]
    client.post(f"/v1/accounts/{bot['id']}/disconnect", headers=bearer(tenant["apiKey"]))
    answer = _send(client, tenant, conversation["id"], "hello?")
    assert answer.status_code == 409
    assert answer.json()["error"]["code"] == "conflict"
    assert len(_messages(client, tenant, conversation["id"])) == 1


def test_message_text_bounds(client, tenant):
    bot = connect_account(client, tenant, "telegram")
    _dm(client, "telegram", bot, "33", "hi")
    conversation = _conversations(client, tenant)["data"][0]
    for body in ({"text": ""}, {"text": "x" * 4097}, {}, {"text": 5}, {"text": "a", "button": "b"}):
        answer = client.post(f"/v1/conversations/{conversation['id']}/messages",
                             headers=bearer(tenant["apiKey"]), json=body)
        assert answer.status_code == 422, body
    assert _send(client, tenant, conversation["id"], "x" * 4096).status_code == 201


def test_echoes_of_replies_written_on_the_platform_are_outbound_messages(client, tenant):
    fb = connect_account(client, tenant, "facebook")
    _dm(client, "facebook", fb, "psid-5", "hello page")
    conversation = _conversations(client, tenant)["data"][0]
    assert conversation["unreadCount"] == 1
    echo = client.post("/sandbox/facebook/echo", json={"accountId": fb["id"], "to": {"id": "psid-5"},
                                                       "text": "answered from the Page inbox"})
    assert echo.status_code == 200
    sent = _send(client, tenant, conversation["id"], "and from Switchboard").json()
    # Our own message's echo (our app id) is not stored a second time.
    client.post("/sandbox/facebook/echo", json={"accountId": fb["id"], "to": {"id": "psid-5"},
                                                "text": "and from Switchboard", "appId": "sandbox-facebook-client"})
    messages = _messages(client, tenant, conversation["id"])
    assert [(m["direction"], m["text"], m["status"]) for m in messages] == [
        ("inbound", "hello page", "received"),
        ("outbound", "answered from the Page inbox", "sent"),
        ("outbound", "and from Switchboard", "sent"),
    ]
    assert messages[2]["id"] == sent["id"]
    after = client.get(f"/v1/conversations/{conversation['id']}", headers=bearer(tenant["apiKey"])).json()
    assert after["unreadCount"] == 0


def test_receipts_move_a_message_forward_only(client, tenant):
    wa = connect_account(client, tenant, "whatsapp")
    _dm(client, "whatsapp", wa, "15550003333", "hi")
    conversation = _conversations(client, tenant)["data"][0]
    message = _send(client, tenant, conversation["id"], "hello").json()

    def receipt(kind):
        answer = client.post("/sandbox/whatsapp/receipt", json={
            "accountId": wa["id"], "from": {"id": "15550003333"}, "kind": kind,
            "messageIds": [message["platformMessageId"]]})
        assert answer.status_code == 200

    def status():
        return _messages(client, tenant, conversation["id"])[-1]["status"]

    receipt("delivery")
    assert status() == "delivered"
    receipt("read")
    assert status() == "read"
    receipt("delivery")
    assert status() == "read"


def test_another_workspace_sees_404_everywhere(client, tenant, other_tenant):
    bot = connect_account(client, tenant, "telegram")
    _dm(client, "telegram", bot, "41", "hi")
    conversation = _conversations(client, tenant)["data"][0]
    foreign = bearer(other_tenant["apiKey"])
    assert client.get(f"/v1/conversations/{conversation['id']}", headers=foreign).status_code == 404
    assert client.get(f"/v1/conversations/{conversation['id']}/messages", headers=foreign).status_code == 404
    sent = client.post(f"/v1/conversations/{conversation['id']}/messages", headers=foreign, json={"text": "x"})
    assert sent.status_code == 404
    assert sent.json()["error"]["code"] == "not_found"
    started = client.post("/v1/inbox/conversations", headers=foreign,
                          json={"accountId": bot["id"], "contactHandle": "someone"})
    assert started.status_code == 404
    assert client.get("/v1/conversations", headers=foreign).json()["data"] == []
    assert client.get("/v1/conversations", headers=foreign, params={"accountId": bot["id"]}).json()["data"] == []
    assert len(_messages(client, tenant, conversation["id"])) == 1


def test_keys_outside_the_profile_get_403_and_read_keys_cannot_write(client, tenant):
    second = add_profile(tenant["workspaceId"])
    scoped = add_key(tenant["workspaceId"], scope="profiles", profile_ids=[second])
    read = add_key(tenant["workspaceId"], permission="read")
    bot = connect_account(client, tenant, "telegram")
    _dm(client, "telegram", bot, "42", "hi")
    conversation = _conversations(client, tenant)["data"][0]
    cid = conversation["id"]
    assert client.get(f"/v1/conversations/{cid}", headers=bearer(scoped)).status_code == 403
    assert client.get(f"/v1/conversations/{cid}/messages", headers=bearer(scoped)).status_code == 403
    assert _send(client, tenant, cid, "x", key=scoped).status_code == 403
    assert _start(client, tenant, key=scoped, accountId=bot["id"], contactHandle="z").status_code == 403
    assert client.get("/v1/conversations", headers=bearer(scoped)).json()["data"] == []
    assert client.get("/v1/conversations", headers=bearer(scoped),
                      params={"profileId": tenant["profileId"]}).status_code == 403
    assert client.get("/v1/conversations", headers=bearer(scoped),
                      params={"accountId": bot["id"]}).status_code == 403
    assert client.get(f"/v1/conversations/{cid}", headers=bearer(read)).status_code == 200
    assert _send(client, tenant, cid, "x", key=read).status_code == 403
    assert _start(client, tenant, key=read, accountId=bot["id"], contactHandle="z").status_code == 403
    assert len(_messages(client, tenant, cid)) == 1


def test_permanent_deletion_of_the_account_takes_its_conversations(client, tenant):
    bot = connect_account(client, tenant, "telegram")
    for chat in ("51", "52"):
        _dm(client, "telegram", bot, chat, "hi")
    conversation_ids = [c["id"] for c in _conversations(client, tenant)["data"]]
    h = bearer(tenant["apiKey"])
    client.post(f"/v1/accounts/{bot['id']}/disconnect", headers=h)
    deleted = client.delete(f"/v1/accounts/{bot['id']}/permanent", headers=h)
    assert deleted.status_code == 200
    assert deleted.json()["conversations"] == 2
    assert _conversations(client, tenant) == {"data": [], "pagination": {"page": 1, "limit": 20, "total": 0, "pages": 0}}
    with connection():
        assert Message.select().where(Message.conversation.in_(conversation_ids)).count() == 0


def test_facebook_read_watermark_marks_everything_sent_before_it(client, tenant):
    fb = connect_account(client, tenant, "facebook")
    _dm(client, "facebook", fb, "psid-8", "hi")
    conversation = _conversations(client, tenant)["data"][0]
    first = _send(client, tenant, conversation["id"], "one").json()
    _send(client, tenant, conversation["id"], "two")
    delivered = client.post("/sandbox/facebook/receipt", json={
        "accountId": fb["id"], "from": {"id": "psid-8"}, "kind": "delivery", "messageIds": [first["platformMessageId"]]})
    assert delivered.status_code == 200
    assert [m["status"] for m in _messages(client, tenant, conversation["id"])] == ["received", "delivered", "sent"]
    read = client.post("/sandbox/facebook/receipt", json={
        "accountId": fb["id"], "from": {"id": "psid-8"}, "kind": "read", "messageIds": []})
    assert read.status_code == 200
    assert [m["status"] for m in _messages(client, tenant, conversation["id"])] == ["received", "read", "read"]


def test_a_handle_that_changed_hands_does_not_merge_two_contacts(client, tenant):
    bot = connect_account(client, tenant, "telegram")
    _dm(client, "telegram", bot, "601", "first owner", handle="sam")
    _dm(client, "telegram", bot, "602", "second owner", handle="sam")
    listed = _conversations(client, tenant)["data"]
    assert sorted((c["externalConversationId"], c["contactHandle"]) for c in listed) == [("601", "sam"), ("602", None)]
    assert all(c["unreadCount"] == 1 for c in listed)
