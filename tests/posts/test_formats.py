"""Publishing formats through the running service and the sandbox, each held to its platform's rules."""

from __future__ import annotations

from tests.conftest import bearer
from tests.support.posts import JPEG, MP4, sent_posts, upload, wait_settled
from tests.support.sandbox import connect_account


def _sent(live, platform: str, account_id: str, kind: str) -> list[dict]:
    rows = live.client.get(f"/sandbox/{platform}/sent", params={"accountId": account_id}).json()["data"]
    return [row for row in rows if row["kind"] == kind]


def _publish(live, tenant, body: dict) -> dict:
    answer = live.client.post("/v1/posts", headers=bearer(tenant["apiKey"]), json={"publishNow": True, **body})
    assert answer.status_code == 201, answer.text
    return wait_settled(live.client, tenant, answer.json()["id"])


def _refused(live, tenant, body: dict) -> list[str]:
    answer = live.client.post("/v1/posts", headers=bearer(tenant["apiKey"]), json={"publishNow": True, **body})
    assert answer.status_code == 422, answer.text
    return [problem["field"] for problem in answer.json()["error"]["details"]]


def test_an_x_video_goes_up_in_chunks_and_is_posted_once_processed(live):
    tenant = live.tenant()
    x = connect_account(live.client, tenant, "x")
    video = upload(live.client, tenant, MP4, "video/mp4", "launch.mp4")
    post = _publish(live, tenant, {"content": "Launch day", "mediaIds": [video["id"]],
                                   "targets": [{"accountId": x["id"]}]})
    assert post["status"] == "published", post["targets"][0]["error"]
    steps = _sent(live, "x", x["id"], "media_upload")
    # initialize (JSON), one append, finalize (no body), then STATUS polls
    assert steps[0]["payload"] == {"media_type": "video/mp4", "total_bytes": len(MP4), "media_category": "tweet_video"}
    assert steps[1]["payload"]["segment_index"] == 0 and steps[1]["payload"]["bytes"] == len(MP4)
    assert steps[2]["payload"] == {}
    assert {s["payload"]["command"] for s in steps[3:]} == {"STATUS"}
    (tweet,) = sent_posts(live.client, "x", x["id"])
    assert tweet["payload"]["media"] == {"media_ids": [steps[0]["platformId"]]}
    assert post["targets"][0]["platformPostId"] == tweet["platformId"]

    image = upload(live.client, tenant, JPEG, "image/jpeg", "still.jpg")
    assert _refused(live, tenant, {"content": "Both", "mediaIds": [video["id"], image["id"]],
                                   "targets": [{"accountId": x["id"]}]}) == ["mediaIds"]


def test_an_x_thread_is_posts_each_replying_to_the_previous(live):
    tenant = live.tenant()
    x = connect_account(live.client, tenant, "x")
    post = _publish(live, tenant, {"content": "1/3 A thread", "targets": [
        {"accountId": x["id"], "options": {"thread": ["2/3 the middle", "3/3 " + "中" * 130]}}]})
    assert post["status"] == "published", post["targets"][0]["error"]
    (head,) = sent_posts(live.client, "x", x["id"])
    replies = _sent(live, "x", x["id"], "public_reply")
    assert [r["text"] for r in replies] == ["2/3 the middle", "3/3 " + "中" * 130]
    assert [r["to"] for r in replies] == [head["platformId"], replies[0]["platformId"]]
    assert post["targets"][0]["platformPostId"] == head["platformId"]

    fields = _refused(live, tenant, {"content": "Too long a thread", "targets": [
        {"accountId": x["id"], "options": {"thread": ["fine", "中" * 141], "replySettings": "nobody"}}]})
    assert sorted(fields) == ["targets[0].options.replySettings", "targets[0].options.thread[1]"]
    assert _refused(live, tenant, {"content": "Not a list", "targets": [
        {"accountId": x["id"], "options": {"thread": "second"}}]}) == ["targets[0].options.thread"]
    assert len(sent_posts(live.client, "x", x["id"])) == 1  # nothing of the refused ones reached X

    options = live.client.get(f"/v1/accounts/{x['id']}/publish-options", headers=bearer(tenant["apiKey"])).json()
    assert options["thread"]["maxPosts"] == 25


def test_linkedin_takes_a_video_and_several_images(live):
    tenant = live.tenant()
    member = connect_account(live.client, tenant, "linkedin")
    video = upload(live.client, tenant, MP4 + b"\x04" * 80_000, "video/mp4", "talk.mp4")
    post = _publish(live, tenant, {"content": "My talk", "mediaIds": [video["id"]],
                                   "targets": [{"accountId": member["id"]}]})
    assert post["status"] == "published", post["targets"][0]["error"]
    (made,) = sent_posts(live.client, "linkedin", member["id"])
    urn = made["payload"]["content"]["media"]["id"]
    assert urn.startswith("urn:li:video:")
    finalized = [s for s in _sent(live, "linkedin", member["id"], "media_upload") if s["payload"]]
    assert finalized[-1]["payload"]["finalizeUploadRequest"]["video"] == urn

    images = [upload(live.client, tenant, JPEG, "image/jpeg", f"slide{n}.jpg")["id"] for n in range(3)]
    post = _publish(live, tenant, {"content": "Three slides", "mediaIds": images,
                                   "targets": [{"accountId": member["id"]}]})
    assert post["status"] == "published", post["targets"][0]["error"]
    carousel = sent_posts(live.client, "linkedin", member["id"])[-1]["payload"]["content"]
    assert [i["id"].split(":")[2] for i in carousel["multiImage"]["images"]] == ["image"] * 3

    small = upload(live.client, tenant, MP4, "video/mp4", "tiny.mp4")
    assert _refused(live, tenant, {"content": "Too small", "mediaIds": [small["id"]],
                                   "targets": [{"accountId": member["id"]}]}) == ["mediaIds"]
    assert _refused(live, tenant, {"content": "Mixed", "mediaIds": [video["id"], images[0]],
                                   "targets": [{"accountId": member["id"]}]}) == ["mediaIds"]


def test_instagram_stories_and_reels_are_their_own_containers(live):
    tenant = live.tenant()
    ig = connect_account(live.client, tenant, "instagram")
    image = upload(live.client, tenant, JPEG, "image/jpeg", "story.jpg")
    video = upload(live.client, tenant, MP4, "video/mp4", "reel.mp4")
    story = _publish(live, tenant, {"content": "Behind the scenes", "mediaIds": [image["id"]],
                                    "targets": [{"accountId": ig["id"], "options": {"mediaType": "STORIES"}}]})
    reel = _publish(live, tenant, {"content": "The making of", "mediaIds": [video["id"]], "targets": [
        {"accountId": ig["id"], "options": {"mediaType": "REELS", "coverUrl": "https://cdn.example.com/cover.jpg",
                                            "shareToFeed": False}}]})
    assert story["status"] == reel["status"] == "published", (story["targets"], reel["targets"])
    made = {row["platformId"]: row["payload"]["container"] for row in sent_posts(live.client, "instagram", ig["id"])}
    assert made[story["targets"][0]["platformPostId"]]["media_type"] == "STORIES"
    assert "caption" not in made[story["targets"][0]["platformPostId"]]
    assert "/stories/" in story["targets"][0]["url"]
    reel_container = made[reel["targets"][0]["platformPostId"]]
    assert (reel_container["media_type"], reel_container["cover_url"], reel_container["share_to_feed"]) == (
        "REELS", "https://cdn.example.com/cover.jpg", False)

    fields = _refused(live, tenant, {"content": "No", "mediaIds": [image["id"]], "targets": [
        {"accountId": ig["id"], "options": {"mediaType": "REELS", "shareToFeed": "yes"}}]})
    assert sorted(fields) == ["mediaIds", "targets[0].options.shareToFeed"]
    assert _refused(live, tenant, {"content": "No", "mediaIds": [image["id"]], "targets": [
        {"accountId": ig["id"], "options": {"mediaType": "GUIDE"}}]}) == ["targets[0].options.mediaType"]
    assert _refused(live, tenant, {"content": "No", "mediaIds": [image["id"]], "targets": [
        {"accountId": ig["id"], "options": {"coverUrl": "https://cdn.example.com/c.jpg"}}]}) == [
        "targets[0].options.coverUrl"]
    options = live.client.get(f"/v1/accounts/{ig['id']}/publish-options", headers=bearer(tenant["apiKey"])).json()
    assert options["mediaType"] == ["STORIES", "REELS"]


def test_youtube_schedules_its_publication_and_sets_a_custom_thumbnail(live):
    import datetime as dt

    tenant = live.tenant()
    channel = connect_account(live.client, tenant, "youtube")
    video = upload(live.client, tenant, MP4, "video/mp4", "episode.mp4")
    cover = upload(live.client, tenant, JPEG, "image/jpeg", "cover.jpg")
    when = (dt.datetime.now(dt.UTC) + dt.timedelta(days=2)).replace(microsecond=0).isoformat().replace("+00:00", "Z")
    post = _publish(live, tenant, {"content": "Episode 12", "mediaIds": [video["id"]], "targets": [
        {"accountId": channel["id"], "options": {"publishAt": when, "thumbnailMediaId": cover["id"]}}]})
    assert post["status"] == "published", post["targets"][0]["error"]
    assert post["targets"][0]["error"] is None
    (uploaded,) = sent_posts(live.client, "youtube", channel["id"])
    assert uploaded["payload"]["status"]["privacyStatus"] == "private"
    assert uploaded["payload"]["status"]["publishAt"] == when
    (thumbnail,) = _sent(live, "youtube", channel["id"], "thumbnail")
    assert thumbnail["to"] == post["targets"][0]["platformPostId"] == uploaded["platformId"]
    assert thumbnail["payload"]["bytes"] == len(JPEG)

    fields = _refused(live, tenant, {"content": "Bad", "mediaIds": [video["id"]], "targets": [
        {"accountId": channel["id"], "options": {"publishAt": "2020-01-01T00:00:00Z", "privacyStatus": "public",
                                                 "thumbnailMediaId": video["id"]}}]})
    assert sorted(fields) == ["targets[0].options.privacyStatus", "targets[0].options.publishAt",
                              "targets[0].options.thumbnailMediaId"]
    assert _refused(live, tenant, {"content": "Bad", "mediaIds": [video["id"]], "targets": [
        {"accountId": channel["id"], "options": {"publishAt": "next tuesday"}}]}) == ["targets[0].options.publishAt"]
    assert len(sent_posts(live.client, "youtube", channel["id"])) == 1


def test_a_first_comment_follows_the_post_once_on_each_platform(live):
    tenant = live.tenant()
    platforms = ("instagram", "facebook", "linkedin", "x")
    accounts = {p: connect_account(live.client, tenant, p) for p in platforms}
    image = upload(live.client, tenant, JPEG, "image/jpeg", "launch.jpg")
    post = _publish(live, tenant, {"content": "We launched", "mediaIds": [image["id"]], "targets": [
        {"accountId": accounts[p]["id"], "options": {"firstComment": f"Link in bio ({p})"}} for p in platforms]})
    assert post["status"] == "published", [(t["platform"], t["error"]) for t in post["targets"]]
    for target in post["targets"]:
        platform = target["platform"]
        kind = "public_reply" if platform == "x" else "comment"
        (comment,) = _sent(live, platform, accounts[platform]["id"], kind)
        assert (comment["to"], comment["text"]) == (target["platformPostId"], f"Link in bio ({platform})")
        assert target["firstComment"] == {"text": f"Link in bio ({platform})", "status": "posted",
                                          "platformCommentId": comment["platformId"], "error": None}

    # A refused comment leaves the post published, the refusal on the target, and is not tried again.
    page = accounts["facebook"]["id"]
    live.client.post("/sandbox/facebook/faults", json={"accountId": page, "failNext": 1, "status": 400,
                                                       "path": "comments"})
    post = _publish(live, tenant, {"content": "Second", "targets": [
        {"accountId": page, "options": {"firstComment": "Refused"}}]})
    (target,) = post["targets"]
    assert target["status"] == "published" and target["platformPostId"]
    assert target["firstComment"]["status"] == "failed" and target["firstComment"]["error"]
    assert [c["text"] for c in _sent(live, "facebook", page, "comment")] == ["Link in bio (facebook)"]

    fields = _refused(live, tenant, {"content": "No", "mediaIds": [image["id"]], "targets": [
        {"accountId": accounts["x"]["id"], "options": {"firstComment": "中" * 141}},
        {"accountId": accounts["linkedin"]["id"], "options": {"firstComment": ""}},
        {"accountId": connect_account(live.client, tenant, "youtube")["id"], "options": {"firstComment": "Hi"}}]})
    assert sorted(fields) == ["mediaIds", "targets[0].options.firstComment", "targets[1].options.firstComment",
                              "targets[2].options.firstComment"]
