"""Replies with a button and attachments (CONTRACT section 3, "Inbox": `buttonLabel`, `buttonUrl`,
`mediaIds` on `POST /v1/conversations/{id}/messages`), checked per platform, through /v1 and MCP's
`send_message`; what each platform received is read back from the sandbox emulator."""

from __future__ import annotations

import pytest

from tests.conftest import bearer
from tests.support.oauth_flow import call_tool_raw, hand_made_tokens
from tests.support.posts import JPEG, MP4, upload
from tests.support.sandbox import connect_account

pytestmark = pytest.mark.shared_service


def _conversation(client, tenant, platform, contact):
    """An account of `platform` and the conversation its contact opened (which opens Meta's window)."""
    account = connect_account(client, tenant, platform)
    wrote = client.post(f"/sandbox/{platform}/inbound-message",
                        json={"accountId": account["id"], "from": {"id": contact, "name": "Ada"}, "text": "hello"})
    assert wrote.status_code == 200, wrote.text
    listed = client.get("/v1/conversations", headers=bearer(tenant["apiKey"]), params={"accountId": account["id"]})
    (conversation,) = listed.json()["data"]
    return account, conversation


def _dms(client, platform, account):
    rows = client.get(f"/sandbox/{platform}/sent", params={"accountId": account["id"]}).json()["data"]
    return [row for row in rows if row["kind"] == "dm"]


def _reply(client, tenant, conversation, **body):
    return client.post(f"/v1/conversations/{conversation['id']}/messages", headers=bearer(tenant["apiKey"]),
                       json=body)


def test_a_telegram_reply_carries_a_button_and_a_photo(client, tenant):
    bot, conversation = _conversation(client, tenant, "telegram", "7001")
    button = {"buttonLabel": "Track your order now", "buttonUrl": "https://shop.example.com/track/1042"}
    sent = _reply(client, tenant, conversation, text="Your order shipped 📦", **button)
    assert sent.status_code == 201, sent.text
    assert (sent.json()["buttonLabel"], sent.json()["buttonUrl"]) == (button["buttonLabel"], button["buttonUrl"])
    (first,) = _dms(client, "telegram", bot)
    assert first["payload"]["reply_markup"] == {"inline_keyboard": [[{"text": "Track your order now",
                                                                       "url": button["buttonUrl"]}]]}

    photo = upload(client, tenant, JPEG, "image/jpeg", "receipt.jpg")
    with_photo = _reply(client, tenant, conversation, text="Your receipt", mediaIds=[photo["id"]], **button)
    assert with_photo.status_code == 201, with_photo.text
    assert with_photo.json()["mediaIds"] == [photo["id"]]
    second = _dms(client, "telegram", bot)[1]
    assert second["payload"]["photo"] == photo["url"] and second["payload"]["caption"] == "Your receipt"
    assert second["text"] == "Your receipt" and "reply_markup" in second["payload"]
    listed = client.get(f"/v1/conversations/{conversation['id']}/messages", headers=bearer(tenant["apiKey"]))
    assert [m["mediaIds"] for m in listed.json()["data"] if m["direction"] == "outbound"] == [[], [photo["id"]]]


def test_a_whatsapp_reply_sends_a_video_with_its_caption_or_as_the_buttons_header(client, tenant):
    wa, conversation = _conversation(client, tenant, "whatsapp", "15550001111")
    video = upload(client, tenant, MP4, "video/mp4", "demo.mp4")
    plain = _reply(client, tenant, conversation, text="The demo", mediaIds=[video["id"]])
    assert plain.status_code == 201, plain.text
    buttoned = _reply(client, tenant, conversation, text="Book a call", mediaIds=[video["id"]],
                      buttonLabel="Book", buttonUrl="https://cal.example.com/ada")
    assert buttoned.status_code == 201, buttoned.text
    first, second = _dms(client, "whatsapp", wa)
    assert first["payload"]["type"] == "video"
    assert first["payload"]["video"] == {"link": video["url"], "caption": "The demo"}
    interactive = second["payload"]["interactive"]
    assert interactive["header"] == {"type": "video", "video": {"link": video["url"]}}
    assert interactive["action"]["parameters"] == {"display_text": "Book", "url": "https://cal.example.com/ada"}


def test_each_platform_refuses_what_it_cannot_take_before_anything_is_sent(client, tenant, other_tenant):
    insta, conversation = _conversation(client, tenant, "instagram", "ig-contact-1")
    bot, telegram_conversation = _conversation(client, tenant, "telegram", "7002")
    photo = upload(client, tenant, JPEG, "image/jpeg")
    video = upload(client, tenant, MP4, "video/mp4")
    foreign = upload(client, other_tenant, JPEG, "image/jpeg")
    cases = [
        (conversation, {"text": "Look", "mediaIds": [photo["id"]]}, ["mediaIds"]),
        (conversation, {"text": "Half a button", "buttonLabel": "Go"}, ["buttonLabel", "buttonUrl"]),
        (conversation, {"text": "Plain link", "buttonLabel": "Go", "buttonUrl": "http://example.com"}, ["buttonUrl"]),
        (telegram_conversation, {"text": "Two", "mediaIds": [photo["id"], video["id"]]}, ["mediaIds"]),
        (telegram_conversation, {"text": "x" * 1025, "mediaIds": [photo["id"]]}, ["text"]),
        (telegram_conversation, {"text": "Theirs", "mediaIds": [foreign["id"]]}, ["mediaIds[0]"]),
    ]
    for target, body, fields in cases:
        answer = _reply(client, tenant, target, **body)
        assert answer.status_code == 422, (body, answer.text)
        assert [d["field"] for d in answer.json()["error"]["details"]] == fields, body
    assert _dms(client, "instagram", insta) == [] and _dms(client, "telegram", bot) == []

    # Instagram takes the button itself, as its button template.
    sent = _reply(client, tenant, conversation, text="Our menu", buttonLabel="Menu", buttonUrl="https://example.com/m")
    assert sent.status_code == 201, sent.text
    (dm,) = _dms(client, "instagram", insta)
    assert dm["payload"]["message"]["attachment"]["payload"]["buttons"][0]["title"] == "Menu"


def test_an_assistant_replies_with_a_button_and_an_attachment(client, tenant, browser):
    bot, conversation = _conversation(client, tenant, "telegram", "7003")
    photo = upload(client, tenant, JPEG, "image/jpeg")
    _, tokens = hand_made_tokens(browser, workspace_id=tenant["workspaceId"])
    answer = call_tool_raw(browser, tokens["access_token"], "send_message", {
        "conversationId": conversation["id"], "text": "Here it is", "mediaIds": [photo["id"]],
        "buttonLabel": "Open", "buttonUrl": "https://example.com/open"}).json()["result"]
    assert answer.get("isError") is not True, answer
    assert answer["structuredContent"]["mediaIds"] == [photo["id"]]
    (dm,) = _dms(client, "telegram", bot)
    assert dm["payload"]["photo"] == photo["url"]
    assert dm["payload"]["reply_markup"]["inline_keyboard"][0][0]["url"] == "https://example.com/open"
