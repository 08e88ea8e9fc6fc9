"""Section 1 of the contract: the rate limit per key. Each test runs a service of its own with a
small limit, on its own storage."""

from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace

import httpx2

from switchboard.app import create_app
from tests.conftest import bearer
from tests.support.live_server import clock_to_fresh_minute, live_server


def _error(answer):
    body = answer.json()
    assert set(body) == {"error"}
    assert isinstance(body["error"]["message"], str) and body["error"]["message"]
    return body["error"]["code"]


def test_rate_limit_headers_and_429_with_retry_after(service, tenant):
    limited = replace(service, rate_limit_per_minute=5)
    with live_server(create_app(limited, worker=False)) as url, httpx2.Client(base_url=url) as http:
        h = bearer(tenant["apiKey"])
        clock_to_fresh_minute()
        answers = [http.get("/v1/workspaces", headers=h) for _ in range(6)]
    assert [a.status_code for a in answers] == [200] * 5 + [429]
    assert answers[0].headers["x-ratelimit-limit"] == "5"
    assert [a.headers["x-ratelimit-remaining"] for a in answers[:5]] == ["4", "3", "2", "1", "0"]
    assert int(answers[0].headers["x-ratelimit-reset"]) > 0
    assert 1 <= int(answers[5].headers["retry-after"]) <= 60
    assert _error(answers[5]) == "rate_limited"


def test_concurrent_requests_on_a_fresh_key_admit_exactly_the_limit(service, tenant):
    limited = replace(service, rate_limit_per_minute=300)
    with live_server(create_app(limited, worker=False)) as url:
        h = bearer(tenant["apiKey"])
        clock_to_fresh_minute()

        def burst(_: int) -> list[int]:
            with httpx2.Client(base_url=url, timeout=30) as http:
                return [http.get("/v1/workspaces", headers=h).status_code for _ in range(20)]

        with ThreadPoolExecutor(16) as pool:
            codes = [code for codes in pool.map(burst, range(16)) for code in codes]
    assert len(codes) == 320
    assert codes.count(200) == 300
    assert codes.count(429) == 20
