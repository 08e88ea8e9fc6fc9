"""Calls to other hosts on a caller's behalf (media imports here, the slowest of them) have an
overall deadline and their own pool with a share per workspace: however slow the host and however
many the calls, sign-in and other workspaces' imports go on."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import httpx2
import pytest

from kit import bulkhead
from service.media import library
from tests.conftest import bearer
from tests.support.oauth_flow import email_of, hidden
from tests.support.slow_peers import silent_peer, trickling_server
from tests.support.webhook_receiver import wait_for

pytestmark = pytest.mark.shared_service


def test_an_import_from_a_host_that_sends_a_byte_at_a_time_ends_at_its_deadline(client, tenant, tls, monkeypatch):
    # Each byte comes well within the per-read timeout; the whole file would take ten minutes.
    monkeypatch.setattr(library, "IMPORT_TIMEOUT_SECONDS", 2.0)
    with trickling_server(tls, seconds_per_byte=0.3) as base:
        answer = client.post("/v1/media/import", headers=bearer(tenant["apiKey"]), json={"url": f"{base}/photo.jpg"})
    assert answer.status_code == 422, answer.text
    assert answer.json()["error"]["details"] == [{"field": "url", "message": "no complete answer within 2 s"}]
    assert client.get("/v1/media", headers=bearer(tenant["apiKey"])).json()["data"] == []


def _sign_in(server_url: str, email: str) -> httpx2.Response:
    with httpx2.Client(base_url=server_url, timeout=20) as http:
        page = http.get("/dashboard/login")
        return http.post("/dashboard/login", data={"csrf_token": hidden(page.text, "csrf_token"), "email": email,
                                                   "password": "correct horse", "next": "/dashboard"})


def test_imports_held_by_a_silent_host_take_neither_sign_in_nor_another_workspace(
        live, client, tenant, other_tenant, files, monkeypatch):
    """45 imports from one key to a host that never answers: the workspace gets its share of the
    outbound pool and the rest is refused (429) instead of waiting on threads; another person signs
    in and another workspace imports as usual meanwhile."""
    monkeypatch.setattr(bulkhead, "QUEUE_SECONDS", 3.0)
    headers = bearer(tenant["apiKey"])
    assert client.get("/v1/media", headers=headers).status_code == 200  # the key is known to the process
    with silent_peer() as (port, accepted), ThreadPoolExecutor(45) as pool, \
            httpx2.Client(base_url=live.url, timeout=60) as http:
        held = [pool.submit(http.post, "/v1/media/import", headers=headers,
                            json={"url": f"https://127.0.0.1:{port}/slow.jpg"}) for _ in range(45)]
        # Those past the workspace's share are answered 429 (after waiting their turn a while), holding
        # no thread; the share itself waits on the host.
        done = wait_for(lambda: [f.result() for f in held if f.done()] if sum(f.done() for f in held) >= 45 - 8
                        else None)
        assert isinstance(done, list)
        assert [a.status_code for a in done] == [429] * (45 - bulkhead.PER_WORKSPACE)
        assert all(a.json()["error"]["code"] == "rate_limited" and a.headers["retry-after"] for a in done)
        assert len(accepted) == bulkhead.PER_WORKSPACE  # only the workspace's share reached the host

        # Meanwhile: another person signs in, and another workspace imports.
        assert _sign_in(live.url, email_of(other_tenant["userId"])).status_code == 303
        other = client.post("/v1/media/import", headers=bearer(other_tenant["apiKey"]),
                            json={"url": f"{files}/photo.jpg"})
        assert other.status_code == 201, other.text
        for connection in list(accepted):  # the silent host goes away: the held imports end
            connection.close()
        finished = [future.result(timeout=60) for future in held]
    assert sorted({a.status_code for a in finished}) == [422, 429]
