"""A post's life: scheduled on time, cancelled, deleted from the platforms, its events; and an
Instagram video whose container takes minutes, published without starting its steps again."""

from __future__ import annotations

import datetime as dt
import time

from kit import clock
from storage.db import connection
from storage.models import Event, PostTarget
from tests.conftest import bearer
from tests.support.posts import JPEG, MP4, get_post, sent_posts, upload, wait_settled
from tests.support.sandbox import connect_account
from tests.support.webhook_receiver import wait_for


def _events(workspace_id: str, kind: str | None = None) -> list[tuple[str, dict]]:
    with connection():
        query = Event.select().where(Event.workspace == workspace_id).order_by(Event.created_at, Event.id)
        return [(e.type, e.data) for e in query if e.type.startswith("post.") and (kind is None or e.type == kind)]


def _in(seconds: int) -> str:
    return (clock.now() + dt.timedelta(seconds=seconds)).strftime("%Y-%m-%dT%H:%M:%SZ")


def test_a_scheduled_post_starts_on_time_and_a_cancelled_one_never(live):
    tenant = live.tenant()
    bot = connect_account(live.client, tenant, "telegram")
    headers = bearer(tenant["apiKey"])
    target = [{"accountId": bot["id"], "options": {"chatId": "@news"}}]
    due = live.client.post("/v1/posts", headers=headers, json={"content": "At nine", "targets": target,
                                                               "scheduledFor": _in(3600)})
    cancelled = live.client.post("/v1/posts", headers=headers, json={"content": "Never", "targets": target,
                                                                     "scheduledFor": _in(3600)})
    assert due.status_code == cancelled.status_code == 201
    assert due.json()["status"] == "scheduled"
    assert [t for t, _ in _events(tenant["workspaceId"])] == ["post.scheduled", "post.scheduled"]

    gone = live.client.delete(f"/v1/posts/{cancelled.json()['id']}", headers=headers)
    assert gone.status_code == 200 and gone.json()["deleted"] is True
    assert live.client.get(f"/v1/posts/{cancelled.json()['id']}", headers=headers).status_code == 404
    (_, data), = _events(tenant["workspaceId"], "post.cancelled")
    assert data["id"] == cancelled.json()["id"] and data["status"] == "cancelled"

    time.sleep(0.5)  # a few ticks: nothing is due yet
    assert sent_posts(live.client, "telegram", bot["id"]) == []
    clock.advance(3600)  # now it is due
    moved = time.time()
    post = wait_settled(live.client, tenant, due.json()["id"], timeout=5)
    assert post["status"] == "published"
    (reached,) = sent_posts(live.client, "telegram", bot["id"])
    assert reached["text"] == "At nine"
    # The platform had it within a tick and a second of the moment it fell due.
    arrived = dt.datetime.fromisoformat(reached["at"].replace("Z", "+00:00")).timestamp()
    assert arrived - moved < live.settings.scheduler_tick_seconds + 1
    (_, published), = _events(tenant["workspaceId"], "post.published")
    assert published == get_post(live.client, tenant, post["id"])  # the event carries GET's shape


def test_partial_and_failed_posts_say_so_in_their_events(live):
    tenant = live.tenant()
    bot = connect_account(live.client, tenant, "telegram")
    page = connect_account(live.client, tenant, "facebook")
    headers = bearer(tenant["apiKey"])
    live.client.post("/sandbox/telegram/faults", json={"accountId": bot["id"], "failNext": 2, "status": 400})
    partial = live.client.post("/v1/posts", headers=headers, json={"content": "Both", "publishNow": True, "targets": [
        {"accountId": bot["id"], "options": {"chatId": "@news"}}, {"accountId": page["id"]}]}).json()
    assert wait_settled(live.client, tenant, partial["id"])["status"] == "partial"
    failed = live.client.post("/v1/posts", headers=headers, json={"content": "One", "publishNow": True, "targets": [
        {"accountId": bot["id"], "options": {"chatId": "@news"}}]}).json()
    assert wait_settled(live.client, tenant, failed["id"])["status"] == "failed"
    kinds = {data["id"]: kind for kind, data in _events(tenant["workspaceId"])}
    assert kinds == {partial["id"]: "post.partial", failed["id"]: "post.failed"}


def test_delete_from_platforms_deletes_where_the_platform_allows(live):
    tenant = live.tenant()
    headers = bearer(tenant["apiKey"])
    accounts = {p: connect_account(live.client, tenant, p) for p in ("facebook", "x", "instagram")}
    image = upload(live.client, tenant, JPEG, "image/jpeg")
    post = live.client.post("/v1/posts", headers=headers, json={
        "content": "Gone soon", "mediaIds": [image["id"]], "publishNow": True,
        "targets": [{"accountId": a["id"]} for a in accounts.values()]}).json()
    assert wait_settled(live.client, tenant, post["id"])["status"] == "published"
    assert live.client.delete(f"/v1/posts/{post['id']}", headers=headers).status_code == 409

    answer = live.client.delete(f"/v1/posts/{post['id']}", headers=headers, params={"fromPlatforms": "true"})
    assert answer.status_code == 200, answer.text
    outcome = {row["platform"]: row for row in answer.json()["platforms"]}
    assert outcome["facebook"]["deleted"] and outcome["x"]["deleted"]
    assert not outcome["instagram"]["deleted"]
    assert "Instagram" in outcome["instagram"]["error"]
    for platform in ("facebook", "x"):
        rows = live.client.get(f"/sandbox/{platform}/sent", params={"accountId": accounts[platform]["id"]}).json()
        assert [row["kind"] for row in rows["data"]] == ["post", "delete_post"]
    assert live.client.get(f"/v1/posts/{post['id']}", headers=headers).status_code == 404


def test_an_instagram_video_that_takes_minutes_publishes_without_starting_again(live):
    tenant = live.tenant()
    ig = connect_account(live.client, tenant, "instagram")
    headers = bearer(tenant["apiKey"])
    video = upload(live.client, tenant, MP4, "video/mp4")
    live.client.post("/sandbox/instagram/processing", json={"seconds": 90})
    try:
        post = live.client.post("/v1/posts", headers=headers, json={
            "content": "Reel", "mediaIds": [video["id"]], "publishNow": True,
            "targets": [{"accountId": ig["id"]}]}).json()

        def target() -> PostTarget:
            with connection():
                return PostTarget.get(PostTarget.post == post["id"])

        first = wait_for(lambda: (t := target()).progress and t.status == "queued" and t, timeout=5)
        container = first.progress["container"]
        assert get_post(live.client, tenant, post["id"])["targets"][0]["status"] == "publishing"
        for _ in range(3):  # polls, a platform minute apart, while the container processes
            attempts = target().attempts
            clock.advance(20)
            wait_for(lambda a=attempts: target().attempts > a and target().status == "queued", timeout=5)
        assert target().progress["container"] == container
        live.client.post("/sandbox/instagram/processing", json={"advanceSeconds": 90})
        clock.advance(20)
        done = wait_settled(live.client, tenant, post["id"], timeout=5)
    finally:
        live.client.post("/sandbox/instagram/processing", json={"seconds": 0})
    assert done["status"] == "published"
    (published,) = sent_posts(live.client, "instagram", ig["id"])
    assert published["payload"]["media_publish"] == {"creation_id": container}  # the first container, never rebuilt
    assert target().attempts >= 5


def test_posts_made_on_the_platform_itself_are_kept_as_external(live):
    tenant = live.tenant()
    headers = bearer(tenant["apiKey"])
    bot = connect_account(live.client, tenant, "telegram")
    page = connect_account(live.client, tenant, "facebook")
    ours = live.client.post("/v1/posts", headers=headers, json={
        "content": "Through the service", "publishNow": True, "targets": [{"accountId": page["id"]}]}).json()
    wait_settled(live.client, tenant, ours["id"])
    native = {}
    for platform, account in (("telegram", bot), ("facebook", page)):
        made = live.client.post(f"/sandbox/{platform}/native-post",
                                json={"accountId": account["id"], "text": f"Typed in the {platform} app"})
        assert made.status_code == 200, made.text
        native[platform] = made.json()["platformPostId"]

    external = live.client.get("/v1/posts", headers=headers, params={"source": "external"}).json()["data"]
    assert {p["targets"][0]["platform"]: p["targets"][0]["platformPostId"] for p in external} == native
    assert {p["content"] for p in external} == {"Typed in the telegram app", "Typed in the facebook app"}
    assert all(p["status"] == "published" and p["source"] == "external" for p in external)
    service = live.client.get("/v1/posts", headers=headers, params={"source": "service"}).json()["data"]
    assert [p["id"] for p in service] == [ours["id"]]
    assert live.client.get("/v1/posts", headers=headers).json()["pagination"]["total"] == 3


def test_an_instagram_carousel_waits_for_its_items_then_publishes_once(live):
    tenant = live.tenant()
    ig = connect_account(live.client, tenant, "instagram")
    headers = bearer(tenant["apiKey"])
    items = [upload(live.client, tenant, JPEG, "image/jpeg")["id"] for _ in range(2)]
    items.append(upload(live.client, tenant, MP4, "video/mp4")["id"])
    post = live.client.post("/v1/posts", headers=headers, json={
        "content": "Three", "mediaIds": items, "publishNow": True, "targets": [{"accountId": ig["id"]}]}).json()
    done = wait_settled(live.client, tenant, post["id"])
    assert done["status"] == "published"
    (published,) = sent_posts(live.client, "instagram", ig["id"])
    assert published["payload"]["container"]["media_type"] == "CAROUSEL"
    assert len(published["payload"]["container"]["children"].split(",")) == 3


def test_follower_analytics_count_the_accounts_posts_of_the_window_by_source(live):
    from storage.models import PostTarget as Target

    tenant = live.tenant()
    headers = bearer(tenant["apiKey"])
    page = connect_account(live.client, tenant, "facebook")
    ours = live.client.post("/v1/posts", headers=headers, json={
        "content": "Counted", "publishNow": True, "targets": [{"accountId": page["id"]}]}).json()
    wait_settled(live.client, tenant, ours["id"])
    live.client.post("/sandbox/facebook/native-post", json={"accountId": page["id"], "text": "Native"})
    with connection():  # engagement figures come from the platform; set here as if read back
        Target.update(likes=5, comments=2, shares=1).where(Target.post == ours["id"]).execute()

    def summary(**query):
        answer = live.client.get("/v1/analytics/followers", headers=headers,
                                 params={"accountId": page["id"], **query})
        assert answer.status_code == 200, answer.text
        [account] = answer.json()["accounts"]
        return account["posts"]

    assert summary() == {"count": 2, "likes": 5, "comments": 2, "shares": 1}
    assert summary(source="service") == {"count": 1, "likes": 5, "comments": 2, "shares": 1}
    assert summary(source="external") == {"count": 1, "likes": 0, "comments": 0, "shares": 0}
    yesterday = (clock.now() - dt.timedelta(days=1)).date().isoformat()
    assert summary(toDate=yesterday)["count"] == 0
