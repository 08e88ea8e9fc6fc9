"""`GET /metrics`: off without a token; with one, the Prometheus text of every process sharing the
data dir: HTTP by route template, the engine's claims and outcomes, platform calls, queue depth."""

from __future__ import annotations

import re
import subprocess
from dataclasses import replace

import httpx2

from switchboard.app import create_app
from tests.conftest import bearer
from tests.support.live_server import free_port, live_server
from tests.support.processes import service_env, switchboard, wait_healthy
from tests.support.sandbox import connect_account
from tests.support.webhook_receiver import wait_for

TOKEN = "metrics-token-for-tests"


def _value(text: str, name: str, **labels: str) -> float:
    """The sample `name{labels...}` (those labels among its own), summed over the rest; 0 when absent."""
    total = 0.0
    for line in text.splitlines():
        match = re.fullmatch(r"([a-z_]+)(?:\{(.*)\})? (\S+)", line)
        if not match or match.group(1) != name:
            continue
        found = dict(re.findall(r'([a-z_]+)="([^"]*)"', match.group(2) or ""))
        if all(found.get(k) == v for k, v in labels.items()):
            total += float(match.group(3))
    return total


def test_metrics_are_off_without_a_token(service):
    with live_server(create_app(service, worker=False)) as url:
        answer = httpx2.get(url + "/metrics", headers=bearer(TOKEN))
    assert answer.status_code == 404


def test_metrics_need_the_token_and_count_every_process(service, tenant, tmp_path):
    metered = replace(service, metrics_token=TOKEN)
    port = int(metered.base_url.rsplit(":", 1)[1])
    with live_server(create_app(metered, worker=True), port=port) as url, \
            httpx2.Client(base_url=url, timeout=30) as client:
        assert client.get("/metrics").status_code == 401
        assert client.get("/metrics", headers=bearer("wrong")).status_code == 401

        # An API process of its own on the same data dir: what it serves counts here too.
        other_port = free_port()
        env = service_env(metered, SWITCHBOARD_METRICS_TOKEN=TOKEN,
                          SWITCHBOARD_BASE_URL=f"http://127.0.0.1:{other_port}")
        process = subprocess.Popen(switchboard("serve", "--no-worker", "--port", str(other_port)), env=env,
                                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            wait_healthy(f"http://127.0.0.1:{other_port}", process)
            for _ in range(3):
                assert httpx2.get(f"http://127.0.0.1:{other_port}/v1/workspaces",
                                  headers=bearer(tenant["apiKey"])).status_code == 200
        finally:
            process.terminate()
            process.wait(timeout=15)

        missing = client.get("/v1/posts/post_does_not_exist", headers=bearer(tenant["apiKey"]))
        assert missing.status_code == 404
        # A DM through the engine to the sandbox's Telegram.
        bot = connect_account(client, tenant, "telegram")
        client.post("/sandbox/telegram/inbound-message",
                    json={"accountId": bot["id"], "from": {"id": "5001", "name": "Ada"}, "text": "hello"})
        (conversation,) = client.get("/v1/conversations", headers=bearer(tenant["apiKey"]),
                                     params={"accountId": bot["id"]}).json()["data"]
        sent = client.post(f"/v1/conversations/{conversation['id']}/messages", json={"text": "hi"},
                           headers=bearer(tenant["apiKey"]))
        assert sent.status_code in (200, 201, 202), sent.text

        def scraped_after_the_send() -> str | None:
            text = client.get("/metrics", headers=bearer(TOKEN)).text
            return text if _value(text, "switchboard_platform_request_duration_seconds_count",
                                  platform="telegram", outcome="ok") > 0 else None

        text = str(wait_for(scraped_after_the_send))

    # The other process stopped, and its requests still count (by route template, never the raw path).
    assert _value(text, "switchboard_http_request_duration_seconds_count", route="/v1/workspaces",
                  status="200") == 3
    assert _value(text, "switchboard_http_request_duration_seconds_count", route="/v1/posts/{id}",
                  status="404") == 1
    assert "post_does_not_exist" not in text
    assert _value(text, "switchboard_engine_claims_total") >= 1
    assert _value(text, "switchboard_engine_outcomes_total") >= 1
    assert 'operation="POST /sandbox/telegram/{id}/sendMessage"' in text
    assert "switchboard_queue_depth" in text
    assert "switchboard_engine_rows" in text
    assert tenant["apiKey"] not in text
