"""A broadcast's button as each platform received it (the emulator's sent log keeps the request body):
Instagram and Facebook a button template, WhatsApp an interactive cta_url, Telegram an inline keyboard
url button; a button the platform refuses goes as the text with the URL on its own line after it."""

from __future__ import annotations

import pytest

from tests.conftest import bearer
from tests.support.sandbox import connect_account
from tests.support.webhook_receiver import wait_for

LABEL = "See every deal in the sale"  # 26 characters: stored whole, shown cut to 20
URL = "https://shop.example.com/sale?from=broadcast"
REFUSED_URL = "https://localhost/sale"  # a local address: every platform refuses it as a button

CONTACT = {"instagram": "ig-7001", "facebook": "fb-7001", "whatsapp": "15550107001", "telegram": "7001",
           "x": "4407001"}


def _broadcast_to_one(live, platform, url):
    tenant = live.tenant()
    account = connect_account(live.client, tenant, platform)
    if platform == "x":  # X sends no DM webhooks: the conversation is started through the API
        wrote = live.client.post("/v1/inbox/conversations", headers=bearer(tenant["apiKey"]),
                                 json={"accountId": account["id"], "externalConversationId": CONTACT[platform]})
    else:
        wrote = live.client.post(f"/sandbox/{platform}/inbound-message",
                                 json={"accountId": account["id"], "from": {"id": CONTACT[platform], "name": "Dana"},
                                       "text": "hello"})
    assert wrote.status_code in (200, 201), wrote.text
    created = live.client.post("/v1/broadcasts", headers=bearer(tenant["apiKey"]), json={
        "accountId": account["id"], "name": "Sale", "text": "The sale is on", "buttonLabel": LABEL,
        "buttonUrl": url, "sendNow": True})
    assert created.status_code == 201, created.text
    assert created.json()["buttonLabel"] == LABEL

    def done():
        got = live.client.get(f"/v1/broadcasts/{created.json()['id']}", headers=bearer(tenant["apiKey"])).json()
        return got["status"] == "completed" and got

    finished = wait_for(done, timeout=15)
    assert finished["counts"] == {"targeted": 1, "sent": 1, "failed": 0, "skipped": 0}
    rows = live.client.get(f"/sandbox/{platform}/sent", params={"accountId": account["id"]}).json()["data"]
    return [row for row in rows if row["kind"] == "dm"]


def test_instagram_and_facebook_get_a_button_template(live):
    for platform in ("instagram", "facebook"):
        (row,) = _broadcast_to_one(live, platform, URL)
        assert row["payload"]["message"] == {"attachment": {"type": "template", "payload": {
            "template_type": "button", "text": "The sale is on",
            "buttons": [{"type": "web_url", "url": URL, "title": LABEL[:20]}]}}}


def test_whatsapp_gets_an_interactive_cta_url(live):
    (row,) = _broadcast_to_one(live, "whatsapp", URL)
    assert row["payload"]["type"] == "interactive"
    assert row["payload"]["interactive"] == {
        "type": "cta_url", "body": {"text": "The sale is on"},
        "action": {"name": "cta_url", "parameters": {"display_text": LABEL[:20], "url": URL}}}


def test_telegram_gets_an_inline_keyboard_url_button(live):
    (row,) = _broadcast_to_one(live, "telegram", URL)
    assert row["payload"]["text"] == "The sale is on"
    assert row["payload"]["reply_markup"] == {"inline_keyboard": [[{"text": LABEL[:20], "url": URL}]]}


@pytest.mark.parametrize("platform", ["instagram", "facebook", "whatsapp", "telegram"])
def test_a_refused_button_goes_as_text_with_the_url_on_its_own_line(live, platform):
    rows = _broadcast_to_one(live, platform, REFUSED_URL)
    assert rows[-1]["text"] == f"The sale is on\n{REFUSED_URL}"
    assert "reply_markup" not in rows[-1]["payload"] and "attachment" not in str(rows[-1]["payload"])
    assert len([row for row in rows if row["platformId"]]) == 1  # the refused call delivered nothing


def test_a_platform_without_buttons_gets_the_text_and_the_url(live):
    (row,) = _broadcast_to_one(live, "x", URL)
    assert row["text"] == f"The sale is on\n{URL}"
