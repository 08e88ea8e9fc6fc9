"""DMs, buttons and the plain-text fallback, checked against each platform's documented payload."""

from __future__ import annotations

import time

import pytest

from platforms.base import Button, OutsideMessagingWindow, Unsupported

SHOP = Button("Open the shop now, please", "https://shop.example.com/sale")


def test_instagram_dm_with_button_is_a_button_template(sandbox):
    acc = sandbox.connected("instagram")
    sandbox.inbound("instagram", acc, {"id": "9001", "handle": "ana", "name": "Ana"}, "hello")
    sent = sandbox.adapters["instagram"].send_dm(acc, recipient="9001", text="Our sale", button=SHOP)
    assert sent.fallback_used is False
    record = sandbox.sent("instagram", acc)[-1]
    assert (
        record["kind"] == "dm" and record["to"] == "9001" and record["platformId"] == sent.platform_message_id
    )
    assert record["payload"] == {
        "recipient": {"id": "9001"},
        "messaging_type": "RESPONSE",
        "message": {
            "attachment": {
                "type": "template",
                "payload": {
                    "template_type": "button",
                    "text": "Our sale",
                    "buttons": [
                        {
                            "type": "web_url",
                            "url": "https://shop.example.com/sale",
                            "title": "Open the shop now, p",
                        }
                    ],
                },
            }
        },
    }


def test_instagram_private_reply_refuses_the_template_and_falls_back_to_text(sandbox):
    acc = sandbox.connected("instagram")
    answer = sandbox.control(
        "instagram",
        "comment",
        {
            "accountId": acc.platform_account_id,
            "mediaId": "180001",
            "from": {"id": "9002", "handle": "bob"},
            "text": "price?",
        },
    )
    comment_id = answer.json()["commentId"]
    sent = sandbox.adapters["instagram"].private_reply(
        acc, comment_id=comment_id, text="Here it is", button=SHOP
    )
    assert sent.fallback_used is True
    record = sandbox.sent("instagram", acc)[-1]
    assert record["kind"] == "private_reply" and record["to"] == comment_id
    assert record["payload"] == {
        "recipient": {"comment_id": comment_id},
        "messaging_type": "RESPONSE",
        "message": {"text": "Here it is\nhttps://shop.example.com/sale"},
    }


def test_facebook_dm_plain_and_button_and_refused_local_url(sandbox):
    acc = sandbox.connected("facebook")
    sandbox.inbound("facebook", acc, {"id": "7001", "name": "Carla Diaz"}, "hi")
    adapter = sandbox.adapters["facebook"]
    plain = adapter.send_dm(acc, recipient="7001", text="Thanks!")
    assert plain.payload == {
        "recipient": {"id": "7001"},
        "messaging_type": "RESPONSE",
        "message": {"text": "Thanks!"},
    }
    native = adapter.send_dm(acc, recipient="7001", text="Look", button=Button("Go", "https://example.com/a"))
    assert native.fallback_used is False
    refused = adapter.send_dm(
        acc, recipient="7001", text="Local", button=Button("Go", "http://localhost:8000/a")
    )
    assert refused.fallback_used is True
    kinds = [(r["kind"], r["text"]) for r in sandbox.sent("facebook", acc)]
    assert kinds == [("dm", "Thanks!"), ("dm", "Look"), ("dm", "Local\nhttp://localhost:8000/a")]


def test_whatsapp_cta_url_and_text_payloads(sandbox):
    acc = sandbox.connected("whatsapp")
    sandbox.inbound("whatsapp", acc, {"id": "15550001111", "name": "Dee"}, "hola")
    adapter = sandbox.adapters["whatsapp"]
    sent = adapter.send_dm(acc, recipient="+15550001111", text="See the menu", button=SHOP)
    assert sent.fallback_used is False and sent.platform_message_id.startswith("wamid.")
    adapter.send_dm(acc, recipient="+15550001111", text="Plain one")
    payloads = [r["payload"] for r in sandbox.sent("whatsapp", acc)]
    assert payloads == [
        {
            "messaging_product": "whatsapp",
            "recipient_type": "individual",
            "to": "15550001111",
            "type": "interactive",
            "interactive": {
                "type": "cta_url",
                "body": {"text": "See the menu"},
                "action": {
                    "name": "cta_url",
                    "parameters": {
                        "display_text": "Open the shop now, p",
                        "url": "https://shop.example.com/sale",
                    },
                },
            },
        },
        {
            "messaging_product": "whatsapp",
            "recipient_type": "individual",
            "to": "15550001111",
            "type": "text",
            "text": {"preview_url": False, "body": "Plain one"},
        },
    ]


def test_whatsapp_refused_button_falls_back(sandbox):
    acc = sandbox.connected("whatsapp")
    sandbox.inbound("whatsapp", acc, {"id": "15550002222"}, "hi")
    sent = sandbox.adapters["whatsapp"].send_dm(
        acc, recipient="15550002222", text="x" * 1500, button=Button("Open", "https://example.com")
    )
    assert sent.fallback_used is True
    assert sent.payload["type"] == "text"
    assert sent.payload["text"]["body"] == "x" * 1500 + "\nhttps://example.com"


def test_telegram_inline_keyboard_and_fallback_on_invalid_button_url(sandbox):
    acc = sandbox.connected("telegram")
    sandbox.inbound("telegram", acc, {"id": "424242", "handle": "eve", "name": "Eve"}, "/start")
    adapter = sandbox.adapters["telegram"]
    adapter.send_dm(acc, recipient="424242", text="Menu", button=SHOP)
    fallback = adapter.send_dm(
        acc, recipient="424242", text="Local", button=Button("Open", "http://127.0.0.1/x")
    )
    assert fallback.fallback_used is True
    payloads = [r["payload"] for r in sandbox.sent("telegram", acc)]
    assert payloads == [
        {
            "chat_id": 424242,
            "text": "Menu",
            "reply_markup": {
                "inline_keyboard": [
                    [{"text": "Open the shop now, p", "url": "https://shop.example.com/sale"}]
                ]
            },
        },
        {"chat_id": 424242, "text": "Local\nhttp://127.0.0.1/x"},
    ]


def test_x_dm_has_no_button_so_the_url_follows_the_text(sandbox):
    acc = sandbox.account("x")
    sent = sandbox.adapters["x"].send_dm(acc, recipient="1234567", text="Hi there", button=SHOP)
    assert sent.fallback_used is True
    record = sandbox.sent("x", acc)[-1]
    assert record["kind"] == "dm" and record["to"] == "1234567"
    assert record["payload"] == {"text": "Hi there\nhttps://shop.example.com/sale"}


@pytest.mark.parametrize("platform", ["instagram", "facebook"])
def test_outside_the_24h_window_is_outside_messaging_window(sandbox, platform):
    acc = sandbox.connected(platform)
    sandbox.inbound(platform, acc, {"id": "8008"}, "old message", timestamp="2020-01-01T00:00:00Z")
    with pytest.raises(OutsideMessagingWindow) as caught:
        sandbox.adapters[platform].send_dm(acc, recipient="8008", text="late", button=SHOP)
    assert caught.value.code in ("10.2534022", "10.2018278")
    assert sandbox.sent(platform, acc) == []


def test_whatsapp_outside_the_window_is_accepted_then_reported_failed_by_a_status_webhook(sandbox):
    acc = sandbox.connected("whatsapp")
    sandbox.inbound("whatsapp", acc, {"id": "15550009999"}, "old message", timestamp="2020-01-01T00:00:00Z")
    sent = sandbox.adapters["whatsapp"].send_dm(acc, recipient="15550009999", text="late")
    assert sent.platform_message_id.startswith("wamid.")
    assert sandbox.sent("whatsapp", acc) == []  # nothing reached the person

    def failed_events():
        return [e for hook in list(sandbox.hooks) if hook.verified for e in hook.events if e.kind == "failed"]

    deadline = time.monotonic() + 10
    while not failed_events() and time.monotonic() < deadline:
        time.sleep(0.02)
    (event,) = failed_events()
    assert event.message_ids == (sent.platform_message_id,)
    assert event.text.startswith("Re-engagement message (131047): Message failed to send because more than 24 hours")


def test_window_reopens_with_a_new_inbound_message(sandbox):
    acc = sandbox.connected("instagram")
    sandbox.inbound("instagram", acc, {"id": "8100"}, "old", timestamp=1_600_000_000)
    with pytest.raises(OutsideMessagingWindow):
        sandbox.adapters["instagram"].send_dm(acc, recipient="8100", text="late")
    sandbox.inbound("instagram", acc, {"id": "8100"}, "new")
    assert sandbox.adapters["instagram"].send_dm(acc, recipient="8100", text="now").platform_message_id


def test_button_title_over_20_is_refused_by_the_platform(sandbox):
    acc = sandbox.connected("instagram")
    sandbox.inbound("instagram", acc, {"id": "8200"}, "hi")
    token = acc.credentials["accessToken"]
    answer = sandbox.client.post(
        sandbox.url("instagram", f"v23.0/{acc.platform_account_id}/messages"),
        headers={"Authorization": f"Bearer {token}"},
        json={
            "recipient": {"id": "8200"},
            "message": {
                "attachment": {
                    "type": "template",
                    "payload": {
                        "template_type": "button",
                        "text": "t",
                        "buttons": [{"type": "web_url", "url": "https://e.com", "title": "x" * 21}],
                    },
                }
            },
        },
    )
    assert answer.status_code == 400
    assert answer.json()["error"]["code"] == 100


def test_instagram_private_reply_once_per_comment_and_public_reply(sandbox):
    acc = sandbox.connected("instagram")
    comment_id = sandbox.control(
        "instagram",
        "comment",
        {
            "accountId": acc.platform_account_id,
            "mediaId": "180002",
            "from": {"id": "9003", "handle": "cy"},
            "text": "info",
        },
    ).json()["commentId"]
    adapter = sandbox.adapters["instagram"]
    adapter.private_reply(acc, comment_id=comment_id, text="sent you a DM")
    with pytest.raises(Exception) as caught:
        adapter.private_reply(acc, comment_id=comment_id, text="again")
    assert "already" in str(caught.value)
    reply_id = adapter.public_reply(acc, comment_id=comment_id, text="Check your DMs")
    record = sandbox.sent("instagram", acc)[-1]
    assert (record["kind"], record["to"], record["platformId"]) == ("public_reply", comment_id, reply_id)
    assert record["payload"] == {"message": "Check your DMs"}


def test_facebook_private_and_public_reply(sandbox):
    acc = sandbox.connected("facebook")
    post = f"{acc.platform_account_id}_555"
    comment_id = sandbox.control(
        "facebook",
        "comment",
        {
            "accountId": acc.platform_account_id,
            "mediaId": post,
            "from": {"id": "7100", "handle": "Fay"},
            "text": "?",
        },
    ).json()["commentId"]
    adapter = sandbox.adapters["facebook"]
    sent = adapter.private_reply(
        acc, comment_id=comment_id, text="Hi", button=Button("Shop", "https://e.com/s")
    )
    assert sent.fallback_used is False
    assert sent.payload["recipient"] == {"comment_id": comment_id}
    assert adapter.public_reply(acc, comment_id=comment_id, text="Answered")
    assert [r["kind"] for r in sandbox.sent("facebook", acc)] == ["private_reply", "public_reply"]


def test_platforms_without_dms_say_unsupported(sandbox):
    # TikTok (Business Messaging) and YouTube (comment threads) have conversations of their own.
    for platform in ("linkedin", "meta_ads"):
        acc = sandbox.account(platform)
        assert sandbox.adapters[platform].capabilities.dm is False
        with pytest.raises(Unsupported):
            sandbox.adapters[platform].send_dm(acc, recipient="1", text="x")


def test_instagram_conversations_and_contact_profile(sandbox):
    acc = sandbox.connected("instagram")
    sandbox.inbound("instagram", acc, {"id": "9100", "handle": "gia", "name": "Gia G"}, "one")
    sandbox.inbound("instagram", acc, {"id": "9101", "handle": "hal", "name": "Hal H"}, "two")
    adapter = sandbox.adapters["instagram"]
    conversations = adapter.list_conversations(acc)
    assert [c["participants"][1] for c in conversations] == [
        {"id": "9101", "username": "hal"},
        {"id": "9100", "username": "gia"},
    ]
    assert all(c["id"] and c["updatedTime"] for c in conversations)
    assert adapter.contact_profile(acc, contact_id="9100") == {
        "id": "9100",
        "username": "gia",
        "name": "Gia G",
        "profilePic": None,
    }
    with pytest.raises(Unsupported):
        sandbox.adapters["facebook"].list_conversations(acc)


def test_lists_follow_graph_paging(sandbox):
    acc = sandbox.connected("instagram")
    for n in range(30):  # Graph answers 25 a page
        sandbox.inbound("instagram", acc, {"id": str(9200 + n), "handle": f"c{n}"}, "hi")
    conversations = sandbox.adapters["instagram"].list_conversations(acc)
    assert sorted(c["participants"][1]["id"] for c in conversations) == [str(9200 + n) for n in range(30)]
    # A WhatsApp Business Account with more numbers than a page: the last one still connects.
    whatsapp = sandbox.adapters["whatsapp"]
    for n in range(30):
        identity = whatsapp.connect_with_token(phoneNumberId=str(106540352242900 + n), wabaId="102290129340777",
                                               accessToken=f"sandbox-token-{n}")
    assert identity.platform_account_id == "106540352242929"
