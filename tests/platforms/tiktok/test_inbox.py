"""TikTok's Business Messaging: only in a conversation the person opened, within 48 hours, and only
for a Business Account; its webhooks' signature (a replayed one refused)."""

from __future__ import annotations

import time

import pytest

from platforms.base import OutsideMessagingWindow, Rejected
from platforms.registry import OAuthClient
from platforms.tiktok import inbound
from tests.platforms.conftest import adapters_with


def test_tiktok_business_messages_only_in_an_open_conversation_of_a_business_account(sandbox):
    acc = sandbox.account("tiktok")
    adapter = sandbox.adapters["tiktok"]
    assert adapter.business_messaging(acc) is True
    with pytest.raises(Rejected):  # nobody wrote: no conversation to answer in
        adapter.send_dm(acc, recipient="tt_conv_unknown", text="hi")
    opened = sandbox.control("tiktok", "inbound-message", {"accountId": acc.platform_account_id,
                                                          "from": {"id": "u1", "handle": "ana"}, "text": "hello"})
    conversation = opened.json()["conversationId"]
    payload = opened.json()["payload"]
    (event,) = inbound.parse(payload)
    assert (event.kind, event.contact_id, event.contact_handle, event.text) == ("message", conversation, "ana", "hello")
    sent = adapter.send_dm(acc, recipient=conversation, text="hi ana")
    (row,) = sandbox.sent("tiktok", acc)
    assert (row["kind"], row["to"], row["platformId"]) == ("dm", conversation, sent.platform_message_id)
    assert row["payload"]["text"] == {"body": "hi ana"}

    sandbox.control("tiktok", "inbound-message", {"accountId": acc.platform_account_id, "from": {"id": "u2"},
                                                  "text": "old", "timestamp": int(time.time()) - 49 * 3600})
    late = sandbox.emulator.state.account("tiktok", acc.platform_account_id).extra["tt_conversations"]
    stale = next(cid for cid, c in late.items() if c["from_id"] == "u2")
    with pytest.raises(OutsideMessagingWindow):
        adapter.send_dm(acc, recipient=stale, text="sorry")

    personal = sandbox.account("tiktok", personal=True)
    assert adapter.business_messaging(personal) is False


def test_tiktok_signature():
    body = b'{"event":"im_receive_msg"}'
    adapter = adapters_with(oauth_clients={"tiktok": OAuthClient("id", "client-secret")})["tiktok"]
    stamp = int(time.time())
    signed = {"TikTok-Signature": inbound.tiktok_signature("client-secret", body, stamp)}
    assert adapter.verify_webhook(signed, body, {})
    assert not adapters_with(oauth_clients={"tiktok": OAuthClient("id", "other")})["tiktok"].verify_webhook(
        signed, body, {})
    replayed = {"TikTok-Signature": inbound.tiktok_signature("client-secret", body, stamp - 301)}
    assert not adapter.verify_webhook(replayed, body, {})
    assert not adapters_with()["tiktok"].verify_webhook(signed, body, {})  # no client secret configured


