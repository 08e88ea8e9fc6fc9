"""Meta's webhooks (Instagram, Facebook, WhatsApp): the signature and the subscription check each
Graph adapter answers, the emulator's signed deliveries, and the Messenger entries parsed into events."""

from __future__ import annotations

import datetime as dt

from platforms.graph.inbound import meta_signature, parse_messenger, verify_meta_challenge
from tests.platforms.conftest import adapters_with

SECRET = "app-secret-123"
BODY = b'{"object":"page","entry":[]}'


def test_meta_signature_good_bad_missing():
    adapters = adapters_with(meta_app_secret=SECRET)
    facebook, instagram = adapters["facebook"], adapters["instagram"]
    good = {"X-Hub-Signature-256": meta_signature(SECRET, BODY)}
    assert facebook.verify_webhook(good, BODY, {})
    assert instagram.verify_webhook({"x-hub-signature-256": good["X-Hub-Signature-256"]}, BODY, {})
    assert not facebook.verify_webhook(good, BODY + b" ", {})
    assert not adapters_with(meta_app_secret="other")["facebook"].verify_webhook(good, BODY, {})
    assert not facebook.verify_webhook({"X-Hub-Signature-256": "sha256=00"}, BODY, {})
    assert not facebook.verify_webhook({}, BODY, {})


def test_instagram_accepts_the_instagram_apps_signature_and_whatsapp_another_meta_apps():
    adapters = adapters_with(meta_app_secret=SECRET, instagram_app_secret="ig-secret",
                             meta_app_secrets={"200": "other-app-secret"})
    by_instagram_app = {"X-Hub-Signature-256": meta_signature("ig-secret", BODY)}
    assert adapters["instagram"].verify_webhook(by_instagram_app, BODY, {})
    assert not adapters["facebook"].verify_webhook(by_instagram_app, BODY, {})
    by_other_app = {"X-Hub-Signature-256": meta_signature("other-app-secret", BODY)}
    assert adapters["whatsapp"].verify_webhook(by_other_app, BODY, {})
    assert not adapters["instagram"].verify_webhook(by_other_app, BODY, {})


def test_meta_challenge():
    params = {"hub.mode": "subscribe", "hub.verify_token": "vt", "hub.challenge": "1158201444"}
    assert verify_meta_challenge(params, "vt") == "1158201444"
    assert verify_meta_challenge({**params, "hub.verify_token": "bad"}, "vt") is None
    assert verify_meta_challenge({**params, "hub.mode": "unsubscribe"}, "vt") is None


def test_the_graph_adapters_answer_the_subscription_check_and_the_others_refuse_it():
    adapters = adapters_with(meta_verify_token="vt")
    params = {"hub.mode": "subscribe", "hub.verify_token": "vt", "hub.challenge": "1158201444"}
    assert [adapters[name].webhook_check(params) for name in ("instagram", "facebook", "whatsapp")] == [
        "1158201444"] * 3
    assert adapters["telegram"].webhook_check(params) is None


def test_parse_messenger_payloads_literal():
    payload = {
        "object": "page",
        "entry": [
            {
                "id": "PAGE",
                "time": 1700000000000,
                "messaging": [
                    {
                        "sender": {"id": "PAGE"},
                        "recipient": {"id": "U1"},
                        "timestamp": 1700000000000,
                        "message": {
                            "mid": "m_echo",
                            "is_echo": True,
                            "app_id": 1517776481860111,
                            "text": "bot said",
                        },
                    },
                    {
                        "sender": {"id": "U1"},
                        "recipient": {"id": "PAGE"},
                        "timestamp": 1700000000001,
                        "postback": {"mid": "m_pb", "title": "Get Started", "payload": "START"},
                    },
                    {
                        "sender": {"id": "U1"},
                        "recipient": {"id": "PAGE"},
                        "timestamp": 1700000000002,
                        "read": {"watermark": 1700000000000},
                    },
                ],
            }
        ],
    }
    echo, postback, read = parse_messenger("facebook", payload)
    assert (echo.kind, echo.app_id, echo.contact_id) == ("echo", "1517776481860111", "U1")
    assert (postback.kind, postback.postback_payload, postback.dedupe_key) == (
        "postback",
        "START",
        "facebook:postback:m_pb",
    )
    assert read.kind == "read" and read.watermark == dt.datetime.fromtimestamp(1700000000, dt.UTC)
    assert parse_messenger("facebook", payload) == [echo, postback, read]


def test_emulator_instagram_dm_and_story_reply_arrive_signed_and_parse(sandbox):
    acc = sandbox.connected("instagram")
    sandbox.inbound("instagram", acc, {"id": "5001", "handle": "iris", "name": "Iris"}, "Hi there")
    hook = sandbox.hooks[-1]
    assert hook.platform == "instagram" and hook.verified
    (event,) = hook.events
    assert (event.kind, event.platform_account_id, event.contact_id, event.text) == (
        "message",
        acc.platform_account_id,
        "5001",
        "Hi there",
    )
    assert event.dedupe_key == f"instagram:mid:{event.platform_message_id}"
    assert event.occurred_at.tzinfo is not None
    sandbox.inbound("instagram", acc, {"id": "5001"}, "love it", storyReply=True, storyId="1810001")
    (story,) = sandbox.hooks[-1].events
    assert (story.kind, story.media_id, story.text) == ("story_reply", "1810001", "love it")


def test_emulator_duplicate_delivery_has_the_same_dedupe_key(sandbox):
    acc = sandbox.connected("facebook")
    before = len(sandbox.hooks)
    sandbox.inbound("facebook", acc, {"id": "6001", "name": "Jo"}, "twice", deliveries=2)
    first, second = sandbox.hooks[before:]
    assert first.body == second.body and first.verified and second.verified
    assert first.events[0].dedupe_key == second.events[0].dedupe_key


def test_emulator_comment_webhooks(sandbox):
    ig = sandbox.connected("instagram")
    sandbox.control(
        "instagram",
        "comment",
        {
            "accountId": ig.platform_account_id,
            "mediaId": "1790",
            "commentId": "c-1",
            "from": {"id": "5002", "handle": "kim"},
            "text": "Price?",
        },
    )
    (event,) = sandbox.hooks[-1].events
    assert (
        event.kind,
        event.comment_id,
        event.media_id,
        event.contact_handle,
        event.text,
        event.from_self,
    ) == ("comment", "c-1", "1790", "kim", "Price?", False)
    assert event.dedupe_key == "instagram:comment:c-1"
    fb = sandbox.connected("facebook")
    post = f"{fb.platform_account_id}_77"
    sandbox.control(
        "facebook",
        "comment",
        {
            "accountId": fb.platform_account_id,
            "mediaId": post,
            "from": {"id": fb.platform_account_id, "handle": "Page"},
            "text": "ours",
        },
    )
    (own,) = sandbox.hooks[-1].events
    assert (own.kind, own.media_id, own.from_self) == ("comment", post, True)


def test_unsubscribed_account_gets_no_webhook(sandbox):
    acc = sandbox.account("instagram")
    answer = sandbox.control(
        "instagram",
        "inbound-message",
        {"accountId": acc.platform_account_id, "from": {"id": "1"}, "text": "x"},
    )
    assert answer.status_code == 409


def test_echo_and_receipts(sandbox):
    fb = sandbox.connected("facebook")
    sandbox.control(
        "facebook", "echo", {"accountId": fb.platform_account_id, "to": {"id": "6100"}, "text": "from inbox"}
    )
    (echo,) = sandbox.hooks[-1].events
    assert (echo.kind, echo.contact_id, echo.text, echo.app_id) == ("echo", "6100", "from inbox", None)
    sandbox.control(
        "facebook",
        "receipt",
        {
            "accountId": fb.platform_account_id,
            "from": {"id": "6100"},
            "kind": "delivery",
            "messageIds": ["m_1", "m_2"],
        },
    )
    (delivery,) = sandbox.hooks[-1].events
    assert (delivery.kind, delivery.message_ids) == ("delivery", ("m_1", "m_2"))
    assert isinstance(delivery.watermark, dt.datetime)
    wa = sandbox.connected("whatsapp")
    sandbox.control(
        "whatsapp",
        "receipt",
        {
            "accountId": wa.platform_account_id,
            "from": {"id": "15550000000"},
            "kind": "read",
            "messageIds": ["wamid.A"],
        },
    )
    (read,) = sandbox.hooks[-1].events
    assert (read.kind, read.platform_message_id, read.dedupe_key) == (
        "read",
        "wamid.A",
        "whatsapp:status:wamid.A:read",
    )
