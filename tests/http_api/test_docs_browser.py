"""The front door in headless Chromium with the network cut off: `/` leads to the dashboard, and
`/docs` renders every operation of `/v1/openapi.json` from files the service serves itself, and
runs a call. The reference's screenshot is kept in `test-artifacts/docs.png`."""

from __future__ import annotations

import os
from pathlib import Path

import httpx2
import pytest

from tests.dashboard.test_dashboard_browser import ARGS, ARTIFACTS, CHROMIUM

playwright = pytest.importorskip("playwright.sync_api")
pytestmark = [pytest.mark.skipif(not Path(CHROMIUM).exists(), reason="Chromium is not installed"),
              pytest.mark.skipif(bool(os.environ.get("SWITCHBOARD_TEST_DATABASE_URL")),
                                 reason="the reference's pages in a browser; run once, not per storage")]
# Chromium's start and the reference's some hundred operations, rendered by its script: seconds when
# the machine is idle, more than the tests' usual 15 s wait when it is busy. Each wait is bounded.
WAIT_MS = 60_000


@pytest.mark.timeout(300)
def test_root_redirects_and_docs_work_offline_in_a_real_browser(server_url):
    document = httpx2.get(server_url + "/v1/openapi.json").json()
    operations = [op for path in document["paths"].values() for op in path.values() if "operationId" in op]
    assert httpx2.get(server_url + "/").headers["location"] == "/dashboard"

    elsewhere: list[str] = []

    def only_this_service(route):
        if route.request.url.startswith(server_url):
            return route.continue_()
        elsewhere.append(route.request.url)
        return route.abort()

    with playwright.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 1400})
            page.set_default_timeout(WAIT_MS)
            page.route("**/*", only_this_service)
            page.goto(server_url + "/")
            assert page.url.startswith(server_url + "/dashboard")
            page.click("a[href='/docs']")  # the dashboard's door to the reference
            page.wait_for_url(server_url + "/docs")

            page.goto(server_url + "/docs")
            page.wait_for_selector(".opblock", timeout=WAIT_MS)
            playwright.expect(page.locator(".opblock")).to_have_count(len(operations), timeout=WAIT_MS)
            assert "Switchboard" in page.locator(".info .title").inner_text()
            ARTIFACTS.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(ARTIFACTS / "docs.png"))

            health = page.locator(".opblock", has=page.locator("[data-path='/v1/health']"))
            health.locator(".opblock-summary").first.click()
            page.locator(".try-out__btn").first.click()
            page.locator(".execute").first.click()
            page.wait_for_selector(".live-responses-table tbody .response-col_status", timeout=WAIT_MS)
            assert page.locator(".live-responses-table tbody .response-col_status").first.inner_text().strip() == "200"
        finally:
            browser.close()
    assert elsewhere == []
