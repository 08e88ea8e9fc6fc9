"""The adapters' inbox reads and sends on X, YouTube and TikTok against the emulator, and the rules
it holds them to: pages newest first with the platform's own next tokens (a token it did not issue
is refused), a YouTube reply only with `parentId` and `textOriginal`, TikTok's Business Messaging
only in a conversation the person opened, within 48 hours, and only for a Business Account."""

from __future__ import annotations

import time

import pytest

from platforms import inbound
from platforms.base import OutsideMessagingWindow, Rejected


def test_x_dm_events_come_newest_first_a_page_at_a_time(sandbox):
    acc = sandbox.account("x")
    for n in range(103):
        answer = sandbox.control("x", "inbound-message", {"accountId": acc.platform_account_id,
                                                           "from": {"id": "777", "handle": "kim"}, "text": f"m{n}"})
        assert answer.status_code == 200, answer.text
    adapter = sandbox.adapters["x"]
    first = adapter.inbox_page(acc, page_token=None)
    events = inbound.parse_x_dm_events(acc.platform_account_id, first)
    assert len(events) == 100 and events[0].text == "m102" and events[-1].text == "m3"
    assert (events[0].kind, events[0].contact_id, events[0].contact_handle) == ("message", "777", "kim")
    assert events[0].dedupe_key == f"x:dm:{events[0].platform_message_id}"
    second = adapter.inbox_page(acc, page_token=first["meta"]["next_token"])
    assert [e.text for e in inbound.parse_x_dm_events(acc.platform_account_id, second)] == ["m2", "m1", "m0"]
    assert "next_token" not in second["meta"]
    with pytest.raises(Rejected):
        adapter.inbox_page(acc, page_token="not-a-token")

    sent = adapter.send_dm(acc, recipient="777", text="hello kim")
    newest = inbound.parse_x_dm_events(acc.platform_account_id, adapter.inbox_page(acc, page_token=None))[0]
    assert (newest.kind, newest.contact_id, newest.platform_message_id) == ("echo", "777", sent.platform_message_id)


def test_youtube_threads_page_and_a_reply_needs_its_thread(sandbox):
    acc = sandbox.account("youtube")
    threads = []
    for n in range(12):
        answer = sandbox.control("youtube", "comment", {"accountId": acc.platform_account_id, "mediaId": "vidA",
                                                        "from": {"id": f"UCfan{n}", "handle": f"@fan{n}"},
                                                        "text": f"c{n}"})
        assert answer.status_code == 200, answer.text
        threads.append(answer.json()["threadId"])
    reply = sandbox.control("youtube", "comment", {"accountId": acc.platform_account_id, "mediaId": "vidA",
                                                   "parentId": threads[-1], "from": {"id": "UCfan0"}, "text": "re"})
    assert reply.json()["threadId"] == threads[-1]
    unknown = sandbox.control("youtube", "comment", {"accountId": acc.platform_account_id, "mediaId": "vidA",
                                                     "parentId": "Ugnope", "from": {"id": "UCx"}, "text": "?"})
    assert unknown.status_code == 422

    url = sandbox.url("youtube", "youtube/v3/commentThreads")
    auth = {"Authorization": f"Bearer {acc.credentials['accessToken']}"}
    query = {"part": "snippet,replies", "allThreadsRelatedToChannelId": acc.platform_account_id, "maxResults": "10"}
    first = sandbox.client.get(url, params=query, headers=auth).json()
    events = inbound.parse_youtube_threads(acc.platform_account_id, first)
    assert [e.text for e in events[:2]] == ["c11", "re"]  # the newest thread first, its reply after it
    assert (events[0].contact_id, events[1].contact_id, events[1].contact_handle) == (threads[-1], threads[-1], None)
    second = sandbox.client.get(url, params={**query, "pageToken": first["nextPageToken"]}, headers=auth).json()
    assert [e.text for e in inbound.parse_youtube_threads(acc.platform_account_id, second)] == ["c1", "c0"]
    bad = sandbox.client.get(url, params={**query, "pageToken": "forged"}, headers=auth)
    assert bad.status_code == 400 and bad.json()["error"]["errors"][0]["reason"] == "invalidPageToken"
    other = sandbox.client.get(url, params={**query, "allThreadsRelatedToChannelId": "UCsomeoneelse"}, headers=auth)
    assert other.status_code == 403

    comments = sandbox.url("youtube", "youtube/v3/comments")
    refused = sandbox.client.post(comments, params={"part": "snippet"}, headers=auth,
                                  json={"snippet": {"textOriginal": "no parent"}})
    assert refused.status_code == 400
    sent = sandbox.adapters["youtube"].send_dm(acc, recipient=threads[0], text="Thanks!")
    (row,) = [r for r in sandbox.sent("youtube", acc) if r["kind"] == "comment_reply"]
    assert (row["to"], row["text"], row["platformId"]) == (threads[0], "Thanks!", sent.platform_message_id)
    own = [e for e in inbound.parse_youtube_threads(acc.platform_account_id, sandbox.client.get(
        url, params={**query, "maxResults": "100"}, headers=auth).json()) if e.kind == "echo"]
    assert [(e.contact_id, e.platform_message_id) for e in own] == [(threads[0], sent.platform_message_id)]


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
    (event,) = inbound.parse("tiktok", payload)
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


def test_x_and_tiktok_signatures():
    body = b'{"for_user_id":"1"}'
    good = {"x-twitter-webhooks-signature": inbound.x_signature("consumer", body)}
    check = {"app_secret": "", "telegram_secret_for": lambda bot: None}
    assert inbound.verify_signature("x", good, body, x_consumer_secret="consumer", **check)
    assert not inbound.verify_signature("x", good, body + b" ", x_consumer_secret="consumer", **check)
    assert not inbound.verify_signature("x", good, body, x_consumer_secret="other", **check)
    assert inbound.x_crc_response({"crc_token": "abc"}, "consumer") == {
        "response_token": inbound.x_signature("consumer", b"abc")}
    stamp = int(time.time())
    signed = {"TikTok-Signature": inbound.tiktok_signature("client-secret", body, stamp)}
    assert inbound.verify_signature("tiktok", signed, body, tiktok_client_secret="client-secret", **check)
    assert not inbound.verify_signature("tiktok", signed, body, tiktok_client_secret="other", **check)
    replayed = {"TikTok-Signature": inbound.tiktok_signature("client-secret", body, stamp - 301)}
    assert not inbound.verify_signature("tiktok", replayed, body, tiktok_client_secret="client-secret", **check)
