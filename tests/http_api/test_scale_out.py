"""Several API processes on one database agree: what one revokes, the other refuses at once."""

from dataclasses import replace

import httpx2

from tests.conftest import bearer
from tests.support.live_server import free_port, start_of_fresh_minute
from tests.support.processes import serve_process


def test_key_revoked_through_one_process_is_refused_by_another(service, tenant):
    with serve_process(service, free_port(), "--no-worker") as first, \
         serve_process(service, free_port(), "--no-worker") as second:
        owner = bearer(tenant["apiKey"])
        created = httpx2.post(first + "/v1/api-keys", headers=owner, json={"name": "shared"}).json()
        assert httpx2.get(second + "/v1/workspaces", headers=bearer(created["key"])).status_code == 200
        assert httpx2.delete(f"{first}/v1/api-keys/{created['id']}", headers=owner).status_code == 200
        assert httpx2.get(second + "/v1/workspaces", headers=bearer(created["key"])).status_code == 401


def test_rate_limit_is_shared_between_processes(service, tenant):
    limited = replace(service, rate_limit_per_minute=4)
    with serve_process(limited, free_port(), "--no-worker") as first, \
         serve_process(limited, free_port(), "--no-worker") as second:
        h = bearer(tenant["apiKey"])
        start_of_fresh_minute()
        codes = [httpx2.get(url + "/v1/workspaces", headers=h).status_code for url in (first, second) * 3]
    assert codes.count(200) == 4
    assert codes[4:] == [429, 429]
