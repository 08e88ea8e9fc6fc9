"""Every answer of the dashboard carries the same security headers: full pages, the live partials
that replace parts of them, redirects, error pages and the static files."""

from __future__ import annotations

import httpx2
import pytest

from kit.page_headers import PAGE_HEADERS
from tests.conftest import bearer
from tests.support.sandbox import connect_account

pytestmark = pytest.mark.shared_service


def _has_headers(answer: httpx2.Response) -> bool:
    return all(answer.headers.get(name) == value for name, value in PAGE_HEADERS.items())


def test_pages_partials_redirects_and_static_files_all_carry_the_security_headers(browser, client, tenant):
    headers = bearer(tenant["apiKey"])
    bot = connect_account(client, tenant, "telegram")
    webhook = client.post("/v1/webhooks", headers=headers, json={"url": "https://127.0.0.1:9/hook"}).json()
    broadcast = client.post("/v1/broadcasts", headers=headers, json={
        "accountId": bot["id"], "name": "b", "text": "hi"}).json()
    conversation = "conv_00000000000000000000000000"
    paths = ["/dashboard", "/dashboard/inbox", "/dashboard/inbox/live", f"/dashboard/inbox/{conversation}/live",
             f"/dashboard/webhooks/{webhook['id']}/live", f"/dashboard/broadcasts/{broadcast['id']}/live",
             "/dashboard/no-such-page", "/dashboard/static/dashboard.css"]
    for path in paths:
        answer = browser.get(path)
        assert answer.status_code in (200, 404), (path, answer.status_code)
        assert _has_headers(answer), (path, dict(answer.headers))
    with httpx2.Client(base_url=str(browser.base_url)) as stranger:  # signed out: a redirect to sign in
        redirect = stranger.get("/dashboard/inbox/live")
        assert redirect.status_code == 303 and _has_headers(redirect)
        assert _has_headers(stranger.get("/dashboard/login"))
