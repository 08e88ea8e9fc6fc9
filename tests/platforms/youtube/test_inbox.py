"""YouTube's comment threads, read by polling: pages newest first, a reply only with `parentId` and
`textOriginal`, the channel's own replies as echoes."""

from __future__ import annotations

from platforms.youtube import inbound


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
    events = inbound.parse_threads(acc.platform_account_id, first)
    assert [e.text for e in events[:2]] == ["c11", "re"]  # the newest thread first, its reply after it
    assert (events[0].contact_id, events[1].contact_id, events[1].contact_handle) == (threads[-1], threads[-1], None)
    second = sandbox.client.get(url, params={**query, "pageToken": first["nextPageToken"]}, headers=auth).json()
    assert [e.text for e in inbound.parse_threads(acc.platform_account_id, second)] == ["c1", "c0"]
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
    own = [e for e in inbound.parse_threads(acc.platform_account_id, sandbox.client.get(
        url, params={**query, "maxResults": "100"}, headers=auth).json()) if e.kind == "echo"]
    assert [(e.contact_id, e.platform_message_id) for e in own] == [(threads[0], sent.platform_message_id)]


