"""Conversations on X, TikTok and YouTube (CONTRACT section 3, Inbox; section 5, the sandbox's
controls): a contact's message or comment arrives as the platform delivers it (X's Account Activity
webhook or its DM events polled, TikTok's Business Messaging webhook, YouTube's comment threads
polled), is listed under its platform filter, and a reply reaches the platform once."""

from __future__ import annotations

import base64
import datetime as dt
import hashlib
import hmac
import json
import time
from typing import Any

import pytest

from kit import clock
from platforms.tiktok.inbound import tiktok_signature
from platforms.x.inbound import x_signature
from platforms.youtube.rules import POLL_UNITS
from service.accounts import adapters
from storage.db import connection, db
from storage.models import AccountChore, PlatformQuota
from tests.conftest import bearer
from tests.support.sandbox import connect_account
from tests.support.webhook_receiver import wait_for

pytestmark = pytest.mark.shared_service


@pytest.fixture(scope="module")
def live_overrides() -> dict[str, Any]:
    return {"inbox_poll_seconds": 1.0}


def _conversations(client, tenant, platform: str) -> list[dict[str, Any]]:
    answer = client.get("/v1/conversations", headers=bearer(tenant["apiKey"]), params={"platform": platform})
    assert answer.status_code == 200, answer.text
    return answer.json()["data"]


def _messages(client, tenant, conversation_id: str) -> list[dict[str, Any]]:
    answer = client.get(f"/v1/conversations/{conversation_id}/messages", headers=bearer(tenant["apiKey"]))
    assert answer.status_code == 200, answer.text
    return answer.json()["data"]


def _reply(client, tenant, conversation_id: str, text: str) -> dict[str, Any]:
    answer = client.post(f"/v1/conversations/{conversation_id}/messages", headers=bearer(tenant["apiKey"]),
                         json={"text": text})
    assert answer.status_code == 201, answer.text
    return answer.json()


def _sent(client, platform: str, account_id: str) -> list[dict[str, Any]]:
    answer = client.get(f"/sandbox/{platform}/sent", params={"accountId": account_id})
    assert answer.status_code == 200, answer.text
    return [row for row in answer.json()["data"] if row["kind"] in ("dm", "comment_reply")]


def _one_conversation(client, tenant, platform: str) -> dict[str, Any]:
    wait_for(lambda: len(_conversations(client, tenant, platform)) == 1, timeout=20)
    (conversation,) = _conversations(client, tenant, platform)
    return conversation


def test_an_x_dm_without_a_webhook_is_polled_listed_and_answered_once(client, tenant):
    account = connect_account(client, tenant, "x")
    # Connecting subscribed it to Account Activity; an app without it (its access tier) polls.
    client.post("/sandbox/x/account-activity", json={"accountId": account["id"], "subscribed": False}
                ).raise_for_status()
    kept = client.post("/sandbox/x/inbound-message", json={
        "accountId": account["id"], "from": {"id": "4242", "handle": "ana", "name": "Ana"}, "text": "Hi from X"})
    assert kept.status_code == 200, kept.text
    assert kept.json()["keptForPoll"] is True

    conversation = _one_conversation(client, tenant, "X")
    assert (conversation["platform"], conversation["contactHandle"], conversation["externalConversationId"]) == (
        "x", "ana", "4242")
    assert [m["text"] for m in _messages(client, tenant, conversation["id"])] == ["Hi from X"]

    sent = _reply(client, tenant, conversation["id"], "Hello Ana")
    assert sent["status"] == "sent"
    wait_for(lambda: len(_messages(client, tenant, conversation["id"])) == 2, timeout=10)
    # Our own reply comes back among the DM events: still one message, and one DM on the platform.
    polled = client.get(f"/v1/accounts/{account['id']}", headers=bearer(tenant["apiKey"])).json()
    previous = polled["capabilities"]["inbox"]["lastPolledAt"]
    wait_for(lambda: client.get(f"/v1/accounts/{account['id']}", headers=bearer(tenant["apiKey"]))
             .json()["capabilities"]["inbox"]["lastPolledAt"] != previous, timeout=10)
    assert [(m["direction"], m["text"]) for m in _messages(client, tenant, conversation["id"])] == [
        ("inbound", "Hi from X"), ("outbound", "Hello Ana")]
    dms = _sent(client, "x", account["id"])
    assert [(row["kind"], row["to"], row["text"]) for row in dms] == [("dm", "4242", "Hello Ana")]
    assert dms[0]["platformId"] == sent["platformMessageId"]


def test_an_x_dm_by_account_activity_webhook_is_stored_once(client, tenant):
    """Connecting subscribes the account to the app's Account Activity webhook
    (`POST /2/account_activity/webhooks/{webhook_id}/subscriptions/all`): its DMs come by webhook."""
    account = connect_account(client, tenant, "x")
    answer = client.post("/sandbox/x/inbound-message", json={
        "accountId": account["id"], "from": {"id": "5151", "handle": "bo"}, "text": "By webhook", "deliveries": 2})
    assert answer.status_code == 200, answer.text
    assert answer.json()["delivered"] is True
    conversation = _one_conversation(client, tenant, "X")
    assert [m["text"] for m in _messages(client, tenant, conversation["id"])] == ["By webhook"]
    inbox = client.get(f"/v1/accounts/{account['id']}", headers=bearer(tenant["apiKey"])).json()["capabilities"]
    assert inbox["inbox"]["arrivesBy"] == "webhook"


def test_x_crc_challenge_and_signatures(client):
    secret = adapters.config().x_consumer_secret
    answer = client.get("/hooks/x", params={"crc_token": "challenge-123"})
    assert answer.status_code == 200
    expected = base64.b64encode(hmac.new(secret.encode(), b"challenge-123", hashlib.sha256).digest()).decode()
    assert answer.json() == {"response_token": "sha256=" + expected}
    assert client.get("/hooks/x").status_code == 403

    body = json.dumps({"for_user_id": "1", "direct_message_events": []}).encode()
    bad = client.post("/hooks/x", content=body, headers={"x-twitter-webhooks-signature": "sha256=AAAA",
                                                         "Content-Type": "application/json"})
    assert bad.status_code == 403
    good = client.post("/hooks/x", content=body, headers={"x-twitter-webhooks-signature": x_signature(secret, body),
                                                          "Content-Type": "application/json"})
    assert good.status_code == 200


def test_a_tiktok_business_message_arrives_by_webhook_and_is_answered_once(client, tenant):
    account = connect_account(client, tenant, "tiktok")
    answer = client.post("/sandbox/tiktok/inbound-message", json={
        "accountId": account["id"], "from": {"id": "tt-user-9", "handle": "cleo"}, "text": "Is it in stock?"})
    assert answer.status_code == 200, answer.text
    assert answer.json()["delivered"] is True
    conversation = _one_conversation(client, tenant, "TIKTOK")
    assert conversation["contactHandle"] == "cleo"
    assert conversation["externalConversationId"] == answer.json()["conversationId"]

    sent = _reply(client, tenant, conversation["id"], "Yes, in stock")
    dms = _sent(client, "tiktok", account["id"])
    assert [(row["kind"], row["to"], row["text"]) for row in dms] == [
        ("dm", answer.json()["conversationId"], "Yes, in stock")]
    assert dms[0]["payload"]["recipient_type"] == "CONVERSATION"
    assert dms[0]["platformId"] == sent["platformMessageId"]
    record = client.get(f"/v1/accounts/{account['id']}", headers=bearer(tenant["apiKey"])).json()
    assert record["capabilities"]["messagingWindowHours"] == 48


def test_a_tiktok_reply_after_the_48_hour_window_is_refused_before_any_call(client, tenant):
    account = connect_account(client, tenant, "tiktok")
    client.post("/sandbox/tiktok/inbound-message", json={
        "accountId": account["id"], "from": {"id": "tt-old", "handle": "olde"}, "text": "Anyone?",
        "timestamp": int(time.time()) - 49 * 3600}).raise_for_status()
    conversation = _one_conversation(client, tenant, "TIKTOK")
    answer = client.post(f"/v1/conversations/{conversation['id']}/messages", headers=bearer(tenant["apiKey"]),
                         json={"text": "Sorry for the wait"})
    assert answer.status_code == 422
    assert answer.json()["error"]["code"] == "outside_messaging_window"
    assert _sent(client, "tiktok", account["id"]) == []


def test_tiktok_hook_refuses_a_bad_signature(client):
    secret = adapters.config().oauth_clients["tiktok"].client_secret
    body = json.dumps({"event": "im_receive_msg", "user_openid": "x", "content": "{}"}).encode()
    headers = {"Content-Type": "application/json"}
    old = tiktok_signature(secret, body, int(time.time()) - 3600)
    for signature in ("t=1,s=00", tiktok_signature("not-the-secret", body, int(time.time())), old):
        assert client.post("/hooks/tiktok", content=body, headers={**headers, "TikTok-Signature": signature}
                           ).status_code == 403
    assert client.post("/hooks/tiktok", content=body, headers=headers).status_code == 403
    good = tiktok_signature(secret, body, int(time.time()))
    assert client.post("/hooks/tiktok", content=body, headers={**headers, "TikTok-Signature": good}).status_code == 200


def test_a_personal_tiktok_account_says_it_has_no_messaging(client, tenant):
    client.post("/sandbox/tiktok/accounts", json={"username": "solo.maker", "personal": True}).raise_for_status()
    account = connect_account(client, tenant, "tiktok", username="solo.maker")

    def checked() -> bool:
        record = client.get(f"/v1/accounts/{account['id']}", headers=bearer(tenant["apiKey"])).json()
        return record["capabilities"]["inbox"]["businessAccount"] is False

    wait_for(checked, timeout=20)
    record = client.get(f"/v1/accounts/{account['id']}", headers=bearer(tenant["apiKey"])).json()
    assert record["capabilities"]["dm"] is False
    refused = client.post("/sandbox/tiktok/inbound-message", json={
        "accountId": account["id"], "from": {"id": "u1"}, "text": "hello?"})
    assert refused.status_code == 409


def test_a_youtube_comment_thread_is_a_conversation_read_once_and_answered_in_the_thread(client, tenant):
    account = connect_account(client, tenant, "youtube")
    first = client.post("/sandbox/youtube/comment", json={
        "accountId": account["id"], "mediaId": "vid123", "from": {"id": "UCviewer1", "handle": "@dana"},
        "text": "Great video!"})
    assert first.status_code == 200, first.text
    thread_id = first.json()["threadId"]
    conversation = _one_conversation(client, tenant, "YOUTUBE")
    assert (conversation["externalConversationId"], conversation["contactHandle"]) == (thread_id, "dana")

    client.post("/sandbox/youtube/comment", json={
        "accountId": account["id"], "mediaId": "vid123", "parentId": thread_id,
        "from": {"id": "UCviewer1", "handle": "@dana"}, "text": "Also: part two?"}).raise_for_status()
    wait_for(lambda: len(_messages(client, tenant, conversation["id"])) == 2, timeout=20)

    sent = _reply(client, tenant, conversation["id"], "Part two is coming!")
    replies = _sent(client, "youtube", account["id"])
    assert [(row["kind"], row["to"], row["text"]) for row in replies] == [
        ("comment_reply", thread_id, "Part two is coming!")]
    assert replies[0]["payload"]["snippet"] == {"parentId": thread_id, "textOriginal": "Part two is coming!"}

    # A few more polls: the thread (with our reply in it) is read again, nothing is stored twice.
    def spent() -> int:
        record = client.get(f"/v1/accounts/{account['id']}", headers=bearer(tenant["apiKey"])).json()
        return int(record["capabilities"]["inbox"]["quota"]["accountUnitsToday"])

    now = spent()
    wait_for(lambda: spent() >= now + 2 * POLL_UNITS, timeout=20)
    assert [(m["direction"], m["text"], m["platformMessageId"] is not None)
            for m in _messages(client, tenant, conversation["id"])] == [
        ("inbound", "Great video!", True), ("inbound", "Also: part two?", True),
        ("outbound", "Part two is coming!", True)]
    assert sent["platformMessageId"] == replies[0]["platformId"]
    assert len(_conversations(client, tenant, "YOUTUBE")) == 1


def test_a_new_reply_under_a_thread_older_than_the_first_page_is_read(client, tenant):
    # YouTube lists threads newest first by their top-level comment: under 100 newer threads, an old
    # thread's new reply is on no page the poll reads back to its cursor.
    account = connect_account(client, tenant, "youtube")

    def comment(author: str, text: str, **fields: str) -> dict[str, Any]:
        answer = client.post("/sandbox/youtube/comment", json={
            "accountId": account["id"], "mediaId": "vid1", "from": {"id": f"UC{author}", "handle": f"@{author}"},
            "text": text, **fields})
        assert answer.status_code == 200, answer.text
        return dict(answer.json())

    old = comment("early", "First!")["threadId"]
    conversation = _one_conversation(client, tenant, "YOUTUBE")
    for n in range(100):
        comment(f"viewer{n}", f"Comment {n}")

    def listed() -> int:
        answer = client.get("/v1/conversations", headers=bearer(tenant["apiKey"]),
                            params={"platform": "YOUTUBE", "limit": 100})
        return len(answer.json()["data"])

    wait_for(lambda: listed() == 100, timeout=30)
    comment("early", "Still waiting for part two", parentId=old)
    wait_for(lambda: len(_messages(client, tenant, conversation["id"])) == 2, timeout=20)
    assert [m["text"] for m in _messages(client, tenant, conversation["id"])] == [
        "First!", "Still waiting for part two"]


def test_youtube_polls_stop_before_the_quota_is_gone(client, tenant, live):
    account = connect_account(client, tenant, "youtube")
    budget = int(live.settings.youtube_daily_quota * live.settings.youtube_poll_share)

    def inbox() -> dict[str, Any]:
        record = client.get(f"/v1/accounts/{account['id']}", headers=bearer(tenant["apiKey"])).json()
        return dict(record["capabilities"]["inbox"])

    wait_for(lambda: inbox()["quota"]["accountUnitsToday"] >= 1, timeout=20)
    quota = inbox()["quota"]
    # The project has spent all but nothing of the polls' budget today (other channels, earlier polls).
    with connection(), db.atomic():
        PlatformQuota.update(units=budget).where(PlatformQuota.platform == "youtube",
                                                 PlatformQuota.day == quota["day"]).execute()
    client.post("/sandbox/youtube/comment", json={
        "accountId": account["id"], "mediaId": "v9", "from": {"id": "UCx", "handle": "@late"},
        "text": "Anyone there?"}).raise_for_status()
    spent = inbox()["quota"]["accountUnitsToday"]

    def resting_until_the_next_quota_day() -> bool:
        with connection():
            chore = AccountChore.get_or_none(AccountChore.id == f"inbox_poll_{account['id']}")
        # Not the next interval's due time: the next quota day's (midnight Pacific time).
        later = clock.now() + dt.timedelta(seconds=5 * live.settings.inbox_poll_seconds)
        return chore is not None and chore.status == "idle" and chore.next_attempt_at > later

    wait_for(resting_until_the_next_quota_day, timeout=20)
    assert inbox()["quota"]["accountUnitsToday"] == spent
    assert inbox()["quota"]["projectUnitsToday"] == budget
    assert _conversations(client, tenant, "YOUTUBE") == []
    with connection(), db.atomic():
        PlatformQuota.update(units=0).where(PlatformQuota.platform == "youtube").execute()


def test_sandbox_lists_every_control(client):
    answer = client.get("/sandbox/")
    assert answer.status_code == 200
    listed = {(c["method"], c["path"]): c for c in answer.json()["data"]}
    assert "parentId?" in listed[("POST", "/sandbox/{platform}/comment")]["body"]
    assert "x" in listed[("POST", "/sandbox/{platform}/inbound-message")]["platforms"]
    assert "tiktok" in listed[("POST", "/sandbox/{platform}/inbound-message")]["platforms"]
    document = client.get("/v1/openapi.json").json()
    assert "/sandbox/{platform}/comment" in document["info"]["description"]
