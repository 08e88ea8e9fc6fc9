"""Posts through the running service and the sandbox: each target published exactly once."""

from __future__ import annotations

from collections import Counter

from tests.conftest import bearer
from tests.support.posts import JPEG, MP4, get_post, sent_posts, upload, wait_settled
from tests.support.sandbox import connect_account

VIDEO_PLATFORMS = ("instagram", "tiktok", "youtube", "facebook", "telegram", "meta_ads")
IMAGE_ONLY = ("x", "linkedin")


def _options(platform: str) -> dict:
    if platform == "tiktok":
        return {"privacyLevel": "SELF_ONLY"}
    if platform == "telegram":
        return {"chatId": "@springnews"}
    if platform == "meta_ads":
        return {"pageId": "1234567890", "link": "https://example.com/spring"}
    return {}


def test_a_post_reaches_every_platform_once(live):
    tenant = live.tenant()
    accounts = {p: connect_account(live.client, tenant, p) for p in (*VIDEO_PLATFORMS, *IMAGE_ONLY, "whatsapp")}
    video = upload(live.client, tenant, MP4, "video/mp4", "spring.mp4")
    image = upload(live.client, tenant, JPEG, "image/jpeg", "spring.jpg")
    headers = bearer(tenant["apiKey"])

    refused = live.client.post("/v1/posts", headers=headers, json={
        "content": "Spring", "targets": [{"accountId": accounts["whatsapp"]["id"]}], "publishNow": True})
    assert refused.status_code == 422
    assert refused.json()["error"]["details"][0]["field"] == "targets[0].accountId"

    made = []
    for media_id, platforms in ((video["id"], VIDEO_PLATFORMS), (image["id"], IMAGE_ONLY)):
        answer = live.client.post("/v1/posts", headers=headers, json={
            "content": "Spring is here 🌸", "mediaIds": [media_id], "publishNow": True,
            "targets": [{"accountId": accounts[p]["id"], "options": _options(p)} for p in platforms]})
        assert answer.status_code == 201, answer.text
        assert answer.json()["status"] == "publishing"
        made.append(answer.json()["id"])

    for post_id in made:
        post = wait_settled(live.client, tenant, post_id)
        assert post["status"] == "published", [(t["platform"], t["error"]) for t in post["targets"]]
        assert post["publishedAt"]
        for target in post["targets"]:
            assert target["status"] == "published" and target["platformPostId"], target
    for platform in (*VIDEO_PLATFORMS, *IMAGE_ONLY):
        on_platform = sent_posts(live.client, platform, accounts[platform]["id"])
        assert len(on_platform) == 1, (platform, on_platform)

    listed = live.client.get("/v1/posts", headers=headers, params={"platform": "tiktok"}).json()
    assert [p["id"] for p in listed["data"]] == [made[0]]
    assert listed["pagination"]["total"] == 1


def test_a_failed_target_is_retried_and_published_ones_stay_untouched(live):
    tenant = live.tenant()
    bot = connect_account(live.client, tenant, "telegram")
    page = connect_account(live.client, tenant, "facebook")
    headers = bearer(tenant["apiKey"])
    live.client.post("/sandbox/telegram/faults", json={"accountId": bot["id"], "failNext": 1, "status": 400})
    answer = live.client.post("/v1/posts", headers=headers, json={
        "content": "Hello", "publishNow": True,
        "targets": [{"accountId": bot["id"], "options": {"chatId": "@news"}},
                    {"accountId": page["id"], "content": "Hello, Facebook"}]})
    assert answer.status_code == 201, answer.text
    post = wait_settled(live.client, tenant, answer.json()["id"])
    assert post["status"] == "partial"
    assert [t["status"] for t in post["targets"]] == ["failed", "published"]
    assert post["targets"][0]["error"]
    assert post["targets"][1]["content"] == "Hello, Facebook"

    retried = live.client.post(f"/v1/posts/{post['id']}/retry", headers=headers)
    assert retried.status_code == 200, retried.text
    post = wait_settled(live.client, tenant, post["id"])
    assert post["status"] == "published"
    assert len(sent_posts(live.client, "telegram", bot["id"])) == 1
    facebook = sent_posts(live.client, "facebook", page["id"])
    assert [row["text"] for row in facebook] == ["Hello, Facebook"]

    again = live.client.post(f"/v1/posts/{post['id']}/retry", headers=headers)
    assert again.status_code == 409


def test_drafts_change_and_published_posts_do_not(live):
    tenant = live.tenant()
    bot = connect_account(live.client, tenant, "telegram")
    headers = bearer(tenant["apiKey"])
    draft = live.client.post("/v1/posts", headers=headers, json={"content": "v1", "targets": [{"accountId": bot["id"], "options": {"chatId": "@news"}}]})
    assert draft.status_code == 201 and draft.json()["status"] == "draft"
    assert draft.json()["targets"][0]["status"] == "queued"
    changed = live.client.put(f"/v1/posts/{draft.json()['id']}", headers=headers,
                              json={"content": "v2", "targets": [{"accountId": bot["id"], "options": {"chatId": "@news"}}],
                                    "publishNow": True})
    assert changed.status_code == 200, changed.text
    post = wait_settled(live.client, tenant, draft.json()["id"])
    assert post["content"] == "v2" and post["status"] == "published"
    assert [row["text"] for row in sent_posts(live.client, "telegram", bot["id"])] == ["v2"]
    assert live.client.put(f"/v1/posts/{post['id']}", headers=headers,
                           json={"content": "v3", "targets": [{"accountId": bot["id"], "options": {"chatId": "@news"}}]}
                           ).status_code == 409
    assert live.client.delete(f"/v1/posts/{post['id']}", headers=headers).status_code == 409
    assert get_post(live.client, tenant, post["id"])["status"] == "published"
    counts = Counter(row["kind"] for row in live.client.get("/sandbox/telegram/sent",
                                                             params={"accountId": bot["id"]}).json()["data"])
    assert counts == {"post": 1}


def test_one_idempotency_key_is_one_post(live):
    tenant = live.tenant()
    bot = connect_account(live.client, tenant, "telegram")
    headers = {**bearer(tenant["apiKey"]), "Idempotency-Key": "launch-post-1"}
    body = {"content": "Once", "publishNow": True, "targets": [{"accountId": bot["id"], "options": {"chatId": "@n"}}]}
    first = live.client.post("/v1/posts", headers=headers, json=body)
    second = live.client.post("/v1/posts", headers=headers, json=body)
    assert first.status_code == second.status_code == 201
    assert first.json()["id"] == second.json()["id"]
    wait_settled(live.client, tenant, first.json()["id"])
    assert len(sent_posts(live.client, "telegram", bot["id"])) == 1
    assert live.client.get("/v1/posts", headers=bearer(tenant["apiKey"])).json()["pagination"]["total"] == 1
