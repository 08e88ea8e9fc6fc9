"""A worker killed (SIGKILL) while its platform calls are in flight: after a restart no post is
published twice; what went out is found on the platform (reconciled) or left `unknown`."""

from __future__ import annotations

import signal
import time
from collections.abc import Iterator

import httpx2
import pytest

from kit.settings import Settings
from storage.db import connection
from storage.models import PostTarget
from switchboard.app import create_app
from tests.conftest import bearer
from tests.support.live_server import live_server
from tests.support.posts import get_post, sent_posts
from tests.support.processes import worker_processes
from tests.support.sandbox import connect_account
from tests.support.webhook_receiver import wait_for

LEASE = "3"


@pytest.fixture
def api_only(service: Settings) -> Iterator[httpx2.Client]:
    """The API and the emulator with no worker: publishing is left to the test's processes."""
    port = int(service.base_url.rsplit(":", 1)[1])
    with live_server(create_app(service, worker=False), port=port) as url, \
            httpx2.Client(base_url=url, timeout=30) as http:
        yield http


def _statuses(post_id: str) -> dict[str, str]:
    with connection():
        return {t.platform: t.status for t in PostTarget.select().where(PostTarget.post == post_id)}


def test_a_worker_killed_mid_publish_never_publishes_twice(api_only, tenant, settings, tmp_path):
    accounts = {p: connect_account(api_only, tenant, p) for p in ("x", "telegram", "facebook")}
    for platform in accounts:
        api_only.post(f"/sandbox/{platform}/latency", json={"milliseconds": 2000})
    options = {"telegram": {"chatId": "@news"}}
    post = api_only.post("/v1/posts", headers=bearer(tenant["apiKey"]), json={
        "content": "Launch day", "publishNow": True,
        "targets": [{"accountId": a["id"], "options": options.get(p, {})} for p, a in accounts.items()]})
    assert post.status_code == 201, post.text
    post_id = post.json()["id"]

    with worker_processes(settings, 1, tmp_path, SWITCHBOARD_PUBLISH_LEASE_SECONDS=LEASE) as (worker,):
        wait_for(lambda: set(_statuses(post_id).values()) == {"publishing"}, timeout=20)
        time.sleep(1.0)  # claimed; the requests leave at once and the platforms take 2 s to answer
        worker.send_signal(signal.SIGKILL)
        worker.wait(timeout=10)
    assert set(_statuses(post_id).values()) == {"publishing"}
    for platform in accounts:
        api_only.post(f"/sandbox/{platform}/latency", json={"milliseconds": 0})

    with worker_processes(settings, 1, tmp_path, SWITCHBOARD_PUBLISH_LEASE_SECONDS=LEASE):
        # Lost (lease), then looked for on the platforms that list recent posts (after their settle time).
        settled = wait_for(lambda: (p := get_post(api_only, tenant, post_id))["status"] in ("published", "partial",
                                                                                             "failed") and p,
                           timeout=30)
    targets = {t["platform"]: t for t in settled["targets"]}
    for platform, account in accounts.items():
        on_platform = sent_posts(api_only, platform, account["id"])
        assert len(on_platform) <= 1, (platform, on_platform)  # never twice
        target = targets[platform]
        if target["status"] == "published":
            assert [row["platformId"] for row in on_platform] == [target["platformPostId"]]
    reached = {p: len(sent_posts(api_only, p, a["id"])) == 1 for p, a in accounts.items()}
    assert sum(reached.values()) >= 2  # the platforms keep what they received before the worker died
    # X and Facebook list recent posts: reconciled; found → published with the id the platform gave,
    # not found → failed (retryable).
    for platform in ("x", "facebook"):
        assert targets[platform]["status"] == ("published" if reached[platform] else "failed")
    # Telegram cannot be asked: it waits for a person, never republished.
    assert targets["telegram"]["status"] == "unknown"
    assert "retry" in targets["telegram"]["error"]
    assert settled["status"] == "partial"


def test_a_restarted_worker_resumes_an_instagram_container_instead_of_making_another(api_only, tenant, settings,
                                                                                      tmp_path):
    from tests.support.posts import MP4, upload

    ig = connect_account(api_only, tenant, "instagram")
    video = upload(api_only, tenant, MP4, "video/mp4")
    api_only.post("/sandbox/instagram/processing", json={"seconds": 4})
    try:
        post = api_only.post("/v1/posts", headers=bearer(tenant["apiKey"]), json={
            "content": "Resumed reel", "mediaIds": [video["id"]], "publishNow": True,
            "targets": [{"accountId": ig["id"]}]}).json()

        def target() -> PostTarget:
            with connection():
                return PostTarget.get(PostTarget.post == post["id"])

        with worker_processes(settings, 1, tmp_path, SWITCHBOARD_PUBLISH_LEASE_SECONDS=LEASE) as (worker,):
            first = wait_for(lambda: (t := target()).progress and t, timeout=20)
            # Between two polls of the processing container, or during one (a poll may run again).
            worker.send_signal(signal.SIGKILL)
            worker.wait(timeout=10)
        container = first.progress["container"]
        with worker_processes(settings, 1, tmp_path, SWITCHBOARD_PUBLISH_LEASE_SECONDS=LEASE):
            settled = wait_for(lambda: (p := get_post(api_only, tenant, post["id"]))["status"] == "published" and p,
                               timeout=30)
    finally:
        api_only.post("/sandbox/instagram/processing", json={"seconds": 0})
    (published,) = sent_posts(api_only, "instagram", ig["id"])
    assert published["payload"]["media_publish"] == {"creation_id": container}
    assert settled["targets"][0]["platformPostId"] == published["platformId"]
