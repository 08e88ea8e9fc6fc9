"""At least once: a worker process killed (SIGKILL) in the middle of a delivery does not lose the event."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import httpx2
import pytest

from kit.settings import Settings
from switchboard.app import create_app
from tests.conftest import bearer
from tests.support.live_server import live_server
from tests.support.webhook_receiver import Answer, running_receiver, wait_for

REPO = Path(__file__).resolve().parents[2]


def start_worker(settings: Settings, log_path: Path) -> subprocess.Popen:
    """`switchboard worker` as its own process, on the test's database and queue."""
    env = {
        **os.environ,
        "PYTHONPATH": str(REPO),
        "SWITCHBOARD_DATABASE_URL": settings.database_url,
        "SWITCHBOARD_QUEUE_URL": settings.queue_url,
        "SWITCHBOARD_DATA_DIR": str(settings.data_dir),
        "SWITCHBOARD_SECRET_KEY": settings.secret_key,
        "SWITCHBOARD_SCHEDULER_TICK_SECONDS": str(settings.scheduler_tick_seconds),
        "SWITCHBOARD_WEBHOOK_ALLOW_PRIVATE": "1",
        "SWITCHBOARD_WEBHOOK_CA_BUNDLE": settings.webhook_ca_bundle or "",
        "SWITCHBOARD_WEBHOOK_RETRY_DELAYS": ",".join(str(d) for d in settings.webhook_retry_delays),
        "SWITCHBOARD_WEBHOOK_TIMEOUT_SECONDS": str(settings.webhook_timeout_seconds),
    }
    with log_path.open("ab") as log:
        return subprocess.Popen([sys.executable, "-m", "switchboard", "worker", "--workers", "2"], cwd=REPO, env=env,
                                stdout=log, stderr=subprocess.STDOUT)


@pytest.fixture
def api_only(service: Settings) -> Iterator[httpx2.Client]:
    """The API without an embedded worker: deliveries are left to the worker processes of the test."""
    port = int(service.base_url.rsplit(":", 1)[1])
    with live_server(create_app(service, worker=False), port=port) as url, \
            httpx2.Client(base_url=url, timeout=30) as http:
        yield http


def test_a_worker_killed_mid_delivery_leaves_the_event_to_be_sent_again(api_only, tenant, settings, tls, tmp_path):
    killed = threading.Event()

    def behaviour(n: int, path: str) -> Answer:
        return Answer(200, until=killed) if n == 1 else Answer(200)

    workers: list[subprocess.Popen] = []
    try:
        with running_receiver(tls, behaviour) as receiver:
            made = api_only.post("/v1/webhooks", json={"url": receiver.url},
                                 headers=bearer(tenant["apiKey"])).json()
            queued = api_only.post(f"/v1/webhooks/{made['id']}/test", headers=bearer(tenant["apiKey"])).json()
            workers.append(start_worker(settings, tmp_path / "worker-1.log"))
            wait_for(lambda: receiver.snapshot(), timeout=60)  # the first attempt is in the receiver's hands
            workers[0].send_signal(signal.SIGKILL)
            workers[0].wait(timeout=10)
            killed.set()

            workers.append(start_worker(settings, tmp_path / "worker-2.log"))
            # The killed worker's lease runs out (3 x timeout + 5 s), then the new worker sends it again.
            hits = wait_for(lambda: len(receiver.snapshot()) >= 2 and receiver.snapshot(), timeout=60)
            row = wait_for(lambda: (rows := api_only.get(
                f"/v1/webhooks/{made['id']}/deliveries", params={"status": "DELIVERED"},
                headers=bearer(tenant["apiKey"])).json()["data"]) and rows[0], timeout=30)
    finally:
        for worker in workers:
            if worker.poll() is None:
                worker.send_signal(signal.SIGTERM)
                worker.wait(timeout=20)

    assert [json.loads(hit.body)["id"] for hit in hits] == [queued["eventId"], queued["eventId"]]
    assert [hit.headers["x-service-delivery"] for hit in hits] == [queued["id"], queued["id"]]
    assert row["id"] == queued["id"]
    assert row["attempts"] == 2
