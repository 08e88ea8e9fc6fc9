"""A worker killed (SIGKILL) while it posts a post's first comment: the post is published, the comment
is never posted a second time, and the target says its outcome is unknown."""

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


def _progress(post_id: str) -> dict | None:
    with connection():
        return PostTarget.get(PostTarget.post == post_id).progress


def test_a_worker_killed_while_commenting_never_comments_twice(api_only, tenant, settings, tmp_path):
    page = connect_account(api_only, tenant, "facebook")
    api_only.post("/sandbox/facebook/latency", json={"milliseconds": 1500})
    answer = api_only.post("/v1/posts", headers=bearer(tenant["apiKey"]), json={
        "content": "Doors open at nine", "publishNow": True,
        "targets": [{"accountId": page["id"], "options": {"firstComment": "Tickets: example.com"}}]})
    assert answer.status_code == 201, answer.text
    post_id = answer.json()["id"]

    with worker_processes(settings, 1, tmp_path, SWITCHBOARD_PUBLISH_LEASE_SECONDS=LEASE) as (worker,):
        # The post is live (its id kept) and the comment request is on its way (the Page answers in 1.5 s).
        wait_for(lambda: (_progress(post_id) or {}).get("phase") == "first_comment", timeout=20)
        time.sleep(0.5)
        worker.send_signal(signal.SIGKILL)
        worker.wait(timeout=10)
    api_only.post("/sandbox/facebook/latency", json={"milliseconds": 0})
    with worker_processes(settings, 1, tmp_path, SWITCHBOARD_PUBLISH_LEASE_SECONDS=LEASE):
        post = wait_for(lambda: (p := get_post(api_only, tenant, post_id))["status"] == "published" and p, timeout=30)
    (target,) = post["targets"]
    (published,) = sent_posts(api_only, "facebook", page["id"])
    assert target["platformPostId"] == published["platformId"]
    assert target["firstComment"]["status"] == "unknown"
    assert "not posted again" in target["firstComment"]["error"]
    rows = api_only.get("/sandbox/facebook/sent", params={"accountId": page["id"]}).json()["data"]
    assert len([row for row in rows if row["kind"] == "comment"]) <= 1
