"""X's DMs: `GET /2/dm_events` pages newest first with X's own next tokens (a token it did not issue
is refused), parsed into the events the Account Activity webhook gives; its signature and CRC."""

from __future__ import annotations

import pytest

from platforms.base import Rejected
from platforms.x import inbound
from tests.platforms.conftest import adapters_with


def test_x_dm_events_come_newest_first_a_page_at_a_time(sandbox):
    acc = sandbox.account("x")
    for n in range(103):
        answer = sandbox.control("x", "inbound-message", {"accountId": acc.platform_account_id,
                                                           "from": {"id": "777", "handle": "kim"}, "text": f"m{n}"})
        assert answer.status_code == 200, answer.text
    adapter = sandbox.adapters["x"]
    first = adapter.inbox_page(acc, page_token=None)
    events = inbound.parse_dm_events(acc.platform_account_id, first)
    assert len(events) == 100 and events[0].text == "m102" and events[-1].text == "m3"
    assert (events[0].kind, events[0].contact_id, events[0].contact_handle) == ("message", "777", "kim")
    assert events[0].dedupe_key == f"x:dm:{events[0].platform_message_id}"
    second = adapter.inbox_page(acc, page_token=first["meta"]["next_token"])
    assert [e.text for e in inbound.parse_dm_events(acc.platform_account_id, second)] == ["m2", "m1", "m0"]
    assert "next_token" not in second["meta"]
    with pytest.raises(Rejected):
        adapter.inbox_page(acc, page_token="not-a-token")

    sent = adapter.send_dm(acc, recipient="777", text="hello kim")
    newest = inbound.parse_dm_events(acc.platform_account_id, adapter.inbox_page(acc, page_token=None))[0]
    assert (newest.kind, newest.contact_id, newest.platform_message_id) == ("echo", "777", sent.platform_message_id)


def test_x_signature_and_crc():
    body = b'{"for_user_id":"1"}'
    good = {"x-twitter-webhooks-signature": inbound.x_signature("consumer", body)}
    adapter = adapters_with(x_consumer_secret="consumer")["x"]
    assert adapter.verify_webhook(good, body, {})
    assert not adapter.verify_webhook(good, body + b" ", {})
    assert not adapters_with(x_consumer_secret="other")["x"].verify_webhook(good, body, {})
    assert adapter.webhook_check({"crc_token": "abc"}) == {"response_token": inbound.x_signature("consumer", b"abc")}
    assert adapter.webhook_check({}) is None


