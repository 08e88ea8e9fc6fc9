"""Webhooks the platforms really send (`tests/platforms/corpus/`, each with its source), posted signed to
`/hooks/{platform}`: each lands as what it is. A message keeps its attachments and shows a placeholder
when it has no text; a reaction, edit or deletion lands on the message it names; a receipt or a system
notice is no message. Never a blank message, never a refused delivery (a refused one is sent again
and again, and repeated failures get a webhook disabled)."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from platforms.graph.inbound import meta_signature
from platforms.x.inbound import x_signature
from service.accounts import adapters
from tests.conftest import bearer
from tests.support.sandbox import connect_account

pytestmark = pytest.mark.shared_service

CORPUS = Path(__file__).parent / "corpus"

# What each body lands as: ("message", [attachment types]), ("echo", [types]), ("reaction", emoji or ""),
# ("edit", new text), ("delete", None), ("nothing", None) for receipts, notices and typing.
EXPECTED: dict[str, dict[str, dict[str, tuple[str, Any]]]] = {
    "whatsapp": {
        "pywa_message.json": {
            "text": ("message", []), "image": ("message", ["image"]), "media_with_url": ("message", ["image"]),
            "video": ("message", ["video"]), "document": ("message", ["file"]), "audio": ("message", ["audio"]),
            "voice": ("message", ["voice"]), "static_sticker": ("message", ["sticker"]),
            "animated_sticker": ("message", ["sticker"]), "reaction": ("reaction", "😮"),
            "unreaction_empty": ("reaction", ""), "unreaction_no_emoji": ("reaction", ""),
            "current_location": ("message", ["location"]), "chosen_location": ("message", ["location"]),
            "contacts": ("message", ["contact", "contact", "contact"]), "order": ("message", ["order"]),
            "unsupported": ("message", ["unsupported"]), "unsupported_with_type": ("message", ["unsupported"]),
            "reply": ("message", []), "forwarded": ("message", []), "forwarded_many_times": ("message", []),
            "interactive_message_with_err": ("message", ["interactive"]), "referral": ("message", []),
        },
        "pywa_deleted_message.json": {"revoke": ("delete", None)},
        "pywa_edited_message.json": {"image": ("edit", "Updated image caption")},
        "pywa_system.json": {"phone_number_change": ("nothing", None), "identity_change": ("nothing", None)},
        "pywa_message_status.json": {name: ("nothing", None) for name in
                                     ("sent", "delivered", "read", "played", "failed", "with_tracker", "group")},
        "pywa_callback_button.json": {"button": ("message", []), "quick_reply": ("message", []),
                                      "quick_reply_without_context": ("message", [])},
        "pywa_callback_selection.json": {"callback": ("message", []), "description": ("message", [])},
        "meta_reference_user_id.json": {"quick_reply_from_user_id_only": ("message", [])},
    },
    "instagram": {
        "chatwoot_instagram_message_create_event.json": {
            "message_create": ("message", []), "standby": ("message", []), "story_reply": ("message", []),
            "unsend": ("delete", None), "attachment_share": ("message", ["share"]),
            "story_mention": ("message", ["story_mention"]), "story_mention_echo": ("echo", ["story_mention"]),
            "seen": ("nothing", None),
        },
        "meta_reference_messaging.json": {
            "image": ("message", ["image"]), "audio": ("message", ["audio"]), "ig_reel": ("message", ["ig_reel"]),
            "unsupported": ("message", ["unsupported"]), "reaction": ("reaction", "❤️"), "unreact": ("reaction", ""),
            "message_edit": ("edit", "EDITED-TEXT"),
        },
    },
    "facebook": {
        "meta_reference_messaging.json": {
            "text": ("message", []), "image": ("message", ["image"]), "location": ("message", ["location"]),
            "sticker": ("message", ["image"]), "reaction": ("reaction", "😄"), "unreact": ("reaction", ""),
            "message_edit": ("edit", "EDITED_TEXT"), "delivery": ("nothing", None), "read": ("nothing", None),
            "standby_text": ("message", []),
        },
    },
    "telegram": {
        "bot_api_updates.json": {
            "text": ("message", []), "photo": ("message", ["image"]), "photo_with_caption": ("message", ["image"]),
            "voice": ("message", ["voice"]), "sticker": ("message", ["sticker"]),
            "location": ("message", ["location"]), "contact": ("message", ["contact"]),
            "document": ("message", ["file"]), "edited_message": ("edit", "hello & welcome, edited"),
            "message_reaction": ("reaction", "👍"), "new_chat_members": ("nothing", None),
            "pinned_message": ("nothing", None), "my_chat_member": ("nothing", None),
        },
    },
    "x": {
        "account_activity_events.json": {
            "message_create": ("message", []), "message_with_media": ("message", ["image"]),
            "typing": ("nothing", None), "mark_read": ("nothing", None),
        },
    },
}

# The text a person sees for some of them: unescaped as written, a placeholder for an attachment alone.
TEXTS = {
    ("x", "account_activity_events.json", "message_create"): "Hello World! Fish & chips <3",
    ("whatsapp", "pywa_message.json", "voice"): "[voice]",
    ("whatsapp", "pywa_message.json", "contacts"): "[contact] [contact] [contact]",
    ("whatsapp", "pywa_message.json", "current_location"): "[location]",
    ("whatsapp", "pywa_message.json", "image"): "[image]",
    ("whatsapp", "meta_reference_user_id.json", "quick_reply_from_user_id_only"): "title",
    ("instagram", "chatwoot_instagram_message_create_event.json", "standby"):
        "This is the first standby message from the customer, after 24 hours.",
    ("instagram", "chatwoot_instagram_message_create_event.json", "attachment_share"): "[share]",
    ("telegram", "bot_api_updates.json", "sticker"): "[sticker]",
    ("telegram", "bot_api_updates.json", "photo_with_caption"): "look",
}

CASES = [(platform, file, name) for platform, files in EXPECTED.items()
         for file, names in files.items() for name in names]


def test_every_body_of_the_corpus_has_its_expectation():
    on_disk = {(path.parent.name, path.name, name) for path in CORPUS.glob("*/*.json")
               for name in json.loads(path.read_text())}
    assert on_disk == set(CASES)


# -- how each platform addresses the account, signs a delivery and names a message --------------
def _meta_items(body: dict[str, Any]) -> list[dict[str, Any]]:
    return [item for entry in body["entry"] for item in [*entry.get("messaging", []), *entry.get("standby", [])]]


def _addressed(platform: str, body: dict[str, Any], account: str) -> dict[str, Any]:
    body = copy.deepcopy(body)
    if platform == "whatsapp":
        for entry in body["entry"]:
            for change in entry["changes"]:
                change["value"]["metadata"]["phone_number_id"] = account
    elif platform in ("instagram", "facebook"):
        for entry in body["entry"]:
            business = entry["id"]
            entry["id"] = account
            for item in [*entry.get("messaging", []), *entry.get("standby", [])]:
                for side in ("sender", "recipient"):
                    if item[side]["id"] == business or (side == "recipient" and not item.get("message", {})
                                                       .get("is_echo")):
                        item[side]["id"] = account
    elif platform == "x":
        body["for_user_id"] = account
        for key in ("direct_message_events", "direct_message_indicate_typing_events",
                    "direct_message_mark_read_events"):
            for event in body.get(key, []):
                (event.get("message_create") or event)["target"]["recipient_id"] = account
    return body


def _deliver(client, platform: str, body: dict[str, Any], account: str):
    raw = json.dumps(body).encode()
    headers = {"Content-Type": "application/json"}
    config = adapters.config()
    if platform in ("whatsapp", "instagram", "facebook"):
        headers["X-Hub-Signature-256"] = meta_signature(config.meta_app_secret, raw)
        return client.post(f"/hooks/{platform}", content=raw, headers=headers)
    if platform == "telegram":
        headers["X-Telegram-Bot-Api-Secret-Token"] = config.telegram_secret(account)
        return client.post(f"/hooks/telegram?bot={account}", content=raw, headers=headers)
    headers["x-twitter-webhooks-signature"] = x_signature(config.x_consumer_secret, raw)
    return client.post("/hooks/x", content=raw, headers=headers)


def _named_message(platform: str, body: dict[str, Any]) -> tuple[str, str]:
    """The message a reaction, edit or deletion names, and the contact who wrote it."""
    if platform == "whatsapp":
        message = body["entry"][0]["changes"][0]["value"]["messages"][0]
        inner = message[message["type"]]
        return inner.get("message_id") or inner["original_message_id"], message["from"]
    if platform == "telegram":
        update = next(value for key, value in body.items() if key != "update_id")
        return str(update["message_id"]), str(update["chat"]["id"])
    item = _meta_items(body)[0]
    named = item.get("reaction") or item.get("message_edit") or item["message"]
    return named["mid"], item["sender"]["id"]


def _text_message(platform: str, account: str, message_id: str, contact: str) -> dict[str, Any]:
    """A plain text message from `contact` with the id a later reaction, edit or deletion names."""
    if platform == "whatsapp":
        return {"object": "whatsapp_business_account", "entry": [{"id": "waba", "changes": [{"field": "messages",
                "value": {"messaging_product": "whatsapp", "metadata": {"phone_number_id": account},
                          "messages": [{"from": contact, "id": message_id, "timestamp": "1697040000", "type": "text",
                                        "text": {"body": "the original"}}]}}]}]}
    if platform == "telegram":
        return {"update_id": 900001, "message": {"message_id": int(message_id), "date": 1700000000,
                "chat": {"id": int(contact), "type": "private"},
                "from": {"id": int(contact), "is_bot": False, "first_name": "Ada"}, "text": "the original"}}
    return {"object": "instagram" if platform == "instagram" else "page", "entry": [{"id": account, "time": 1,
            "messaging": [{"sender": {"id": contact}, "recipient": {"id": account}, "timestamp": 1458692752000,
                           "message": {"mid": message_id, "text": "the original"}}]}]}


def _messages(client, tenant, account_id: str) -> list[dict[str, Any]]:
    auth = bearer(tenant["apiKey"])
    listed = client.get("/v1/conversations", headers=auth, params={"accountId": account_id, "limit": 100})
    assert listed.status_code == 200, listed.text
    out = []
    for conversation in listed.json()["data"]:
        answer = client.get(f"/v1/conversations/{conversation['id']}/messages", headers=auth)
        assert answer.status_code == 200, answer.text
        out += [{**m, "unread": conversation["unreadCount"]} for m in answer.json()["data"]]
    return out


@pytest.mark.parametrize(("platform", "file", "name"), CASES, ids=[f"{p}-{f[:-5]}-{n}" for p, f, n in CASES])
def test_a_real_delivery_lands_as_what_it_is(client, tenant, platform, file, name):
    kind, expected = EXPECTED[platform][file][name]
    account = connect_account(client, tenant, platform)
    platform_id = account["platformAccountId"]
    body = _addressed(platform, json.loads((CORPUS / platform / file).read_text())[name], platform_id)
    if kind in ("reaction", "edit", "delete"):
        target, contact = _named_message(platform, body)
        seeded = _deliver(client, platform, _text_message(platform, platform_id, target, contact), platform_id)
        assert seeded.status_code == 200, seeded.text

    answer = _deliver(client, platform, body, platform_id)

    assert answer.status_code == 200, answer.text
    messages = _messages(client, tenant, account["id"])
    if kind == "nothing":
        assert messages == []
    elif kind in ("message", "echo"):
        assert len(messages) == 1, messages
        message = messages[0]
        assert message["direction"] == ("inbound" if kind == "message" else "outbound")
        assert message["text"] and message["text"].strip()
        assert message["text"] == TEXTS.get((platform, file, name), message["text"])
        assert [item["type"] for item in message["attachments"]] == expected
        assert message["reactions"] == [] and message["editedAt"] is None and message["deletedAt"] is None
    else:
        assert [m["platformMessageId"] for m in messages] == [target], "no new message, the named one changed"
        message = messages[0]
        assert message["unread"] == 1  # the original only: a reaction or an edit is nothing new to read
        if kind == "reaction":
            assert [r["emoji"] for r in message["reactions"]] == ([expected] if expected else [])
        elif kind == "edit":
            assert (message["text"], message["editedAt"] is not None) == (expected, True)
        else:
            assert message["deletedAt"] is not None
