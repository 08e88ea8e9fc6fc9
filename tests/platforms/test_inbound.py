"""Platform webhooks: signatures, the emulator's signed deliveries, and parsing into InboundEvents."""

from __future__ import annotations

import datetime as dt
import json

from platforms import inbound

SECRET = "app-secret-123"
BODY = b'{"object":"page","entry":[]}'


def _never(bot: str) -> str | None:
    return None


def test_meta_signature_good_bad_missing():
    good = {"X-Hub-Signature-256": inbound.meta_signature(SECRET, BODY)}
    assert inbound.verify_signature("facebook", good, BODY, app_secret=SECRET, telegram_secret_for=_never)
    assert inbound.verify_signature(
        "instagram",
        {"x-hub-signature-256": good["X-Hub-Signature-256"]},
        BODY,
        app_secret=SECRET,
        telegram_secret_for=_never,
    )
    assert not inbound.verify_signature(
        "facebook", good, BODY + b" ", app_secret=SECRET, telegram_secret_for=_never
    )
    assert not inbound.verify_signature(
        "facebook", good, BODY, app_secret="other", telegram_secret_for=_never
    )
    assert not inbound.verify_signature(
        "facebook", {"X-Hub-Signature-256": "sha256=00"}, BODY, app_secret=SECRET, telegram_secret_for=_never
    )
    assert not inbound.verify_signature("facebook", {}, BODY, app_secret=SECRET, telegram_secret_for=_never)


def test_telegram_secret_good_bad_missing():
    secrets = {"42": "s3cr3t"}
    check = dict(app_secret="", telegram_secret_for=secrets.get)
    header = {"X-Telegram-Bot-Api-Secret-Token": "s3cr3t"}
    assert inbound.verify_signature("telegram", header, b"{}", query={"bot": "42"}, **check)
    assert not inbound.verify_signature(
        "telegram", {"X-Telegram-Bot-Api-Secret-Token": "nope"}, b"{}", query={"bot": "42"}, **check
    )
    assert not inbound.verify_signature("telegram", {}, b"{}", query={"bot": "42"}, **check)
    assert not inbound.verify_signature("telegram", header, b"{}", query={"bot": "43"}, **check)
    assert not inbound.verify_signature("telegram", header, b"{}", query={}, **check)


def test_meta_challenge():
    params = {"hub.mode": "subscribe", "hub.verify_token": "vt", "hub.challenge": "1158201444"}
    assert inbound.verify_meta_challenge(params, "vt") == "1158201444"
    assert inbound.verify_meta_challenge({**params, "hub.verify_token": "bad"}, "vt") is None
    assert inbound.verify_meta_challenge({**params, "hub.mode": "unsubscribe"}, "vt") is None


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


def test_emulator_whatsapp_and_telegram_messages(sandbox):
    wa = sandbox.connected("whatsapp")
    sandbox.inbound("whatsapp", wa, {"id": "+15557654321", "name": "Lu"}, "oi")
    hook = sandbox.hooks[-1]
    assert hook.verified
    (event,) = hook.events
    assert (
        event.platform_account_id,
        event.contact_id,
        event.contact_handle,
        event.contact_name,
        event.text,
    ) == (wa.platform_account_id, "15557654321", "+15557654321", "Lu", "oi")
    tg = sandbox.connected("telegram")
    sandbox.inbound("telegram", tg, {"id": "99", "handle": "max", "name": "Max Power"}, "/start")
    hook = sandbox.hooks[-1]
    assert hook.verified and hook.query == {"bot": tg.platform_account_id}
    (event,) = hook.events
    assert (event.kind, event.contact_id, event.contact_handle, event.contact_name) == (
        "message",
        "99",
        "max",
        "Max Power",
    )
    assert event.dedupe_key.startswith(f"telegram:{tg.platform_account_id}:")


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
    echo, postback, read = inbound.parse("facebook", payload)
    assert (echo.kind, echo.app_id, echo.contact_id) == ("echo", "1517776481860111", "U1")
    assert (postback.kind, postback.postback_payload, postback.dedupe_key) == (
        "postback",
        "START",
        "facebook:postback:m_pb",
    )
    assert read.kind == "read" and read.watermark == dt.datetime.fromtimestamp(1700000000, dt.UTC)
    assert inbound.parse("facebook", payload) == [echo, postback, read]


def test_control_validation_is_422_and_unknown_account_404(sandbox):
    bad = sandbox.control("telegram", "inbound-message", {"accountId": 5, "text": "x", "extra": 1})
    assert bad.status_code == 422
    error = bad.json()["error"]
    assert error["code"] == "validation_failed"
    assert {d["field"] for d in error["details"]} == {"accountId", "from", "extra"}
    unknown = sandbox.control("telegram", "followers", {"accountId": "acc_nope", "followers": 1})
    assert unknown.status_code == 404
    assert sandbox.control("x", "faults", {"failNext": 1, "status": 418}).status_code == 422
    assert json.loads(sandbox.control("x", "latency", {"milliseconds": 0}).text) == {"milliseconds": 0}


def test_service_account_ids_are_translated(sandbox):
    acc = sandbox.connected("telegram")
    sandbox.aliases[("telegram", "acc_svc_1")] = acc.platform_account_id
    sandbox.inbound("telegram", acc, {"id": "1212"}, "hey")
    sandbox.adapters["telegram"].send_dm(acc, recipient="1212", text="yo")
    rows = sandbox.client.get(sandbox.url("telegram", "sent"), params={"accountId": "acc_svc_1"}).json()[
        "data"
    ]
    assert [(r["accountId"], r["text"]) for r in rows] == [("acc_svc_1", "yo")]


def test_latency_control_delays_answers(sandbox):
    import time

    acc = sandbox.account("linkedin")
    sandbox.control("linkedin", "latency", {"milliseconds": 300})
    started = time.monotonic()
    sandbox.adapters["linkedin"].follower_count(acc)
    elapsed = time.monotonic() - started
    sandbox.control("linkedin", "latency", {"milliseconds": 0})
    assert elapsed >= 0.3
