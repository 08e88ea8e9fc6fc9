"""The dashboard and the consent page in headless Chromium (Debian's package, driven by Playwright).

The consent page's screenshot is kept as a test artifact in `test-artifacts/`.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import httpx2
import pytest

from storage.db import connection
from storage.models import User
from tests.support.oauth_flow import REDIRECT_URI, authorize_params, pkce_pair, query_of, register_client

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
ARTIFACTS = Path(os.environ.get("SWITCHBOARD_TEST_ARTIFACTS", Path(__file__).resolve().parents[2] / "test-artifacts"))
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--no-first-run"]

playwright = pytest.importorskip("playwright.sync_api")
pytestmark = pytest.mark.skipif(not Path(CHROMIUM).exists(), reason="Chromium is not installed")


@pytest.fixture
def page():
    with playwright.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        try:
            yield browser.new_page()
        finally:
            browser.close()


def test_a_person_signs_in_consents_and_revokes_in_a_real_browser(page, server_url, tenant):
    with connection():
        email = User.get_by_id(tenant["userId"]).email
    with httpx2.Client(base_url=server_url) as http:
        client = register_client(http, name='Claude <img src=x onerror="document.title=1">')
    verifier, challenge = pkce_pair()
    authorize = httpx2.URL(server_url + "/oauth/authorize", params=authorize_params(client["client_id"], challenge))

    # The assistant's redirect URI: answered here, so the browser lands somewhere.
    page.route(REDIRECT_URI + "**", lambda route: route.fulfill(status=200, body="done"))
    page.goto(str(authorize))
    assert page.url.startswith(server_url + "/dashboard/login")
    page.fill("#email", email)
    page.fill("#password", "correct horse")
    page.click("button[type=submit]")
    page.wait_for_url("**/oauth/authorize?**")
    assert page.locator("h1").inner_text() == 'Allow Claude <img src=x onerror="document.title=1"> to use Switchboard?'
    assert page.locator("img").count() == 0
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "consent.png"), full_page=True)

    page.click("button[value=allow]")
    page.wait_for_url(REDIRECT_URI + "?**")
    sent = query_of(page.url)
    assert sent["iss"] == server_url
    with httpx2.Client(base_url=server_url) as http:  # the assistant exchanges the code
        assert http.post("/oauth/token", data={
            "grant_type": "authorization_code", "code": sent["code"], "redirect_uri": REDIRECT_URI,
            "client_id": client["client_id"], "code_verifier": verifier}).status_code == 200

    page.goto(server_url + "/dashboard/settings/connected-apps")
    assert "Claude <img" in page.locator("table").inner_text()
    page.click("button:has-text('Revoke')")  # asks first
    page.click("button:has-text('Revoke')")
    page.wait_for_url(lambda url: "revoked=1" in url)
    assert "No connected apps." in page.locator("table").inner_text()

    page.goto(server_url + "/dashboard/api-keys")
    page.fill("#name", "From the browser")
    page.click("button:has-text('Create key')")
    assert page.locator("#new-key").inner_text().startswith("sk_")
    page.goto(server_url + "/dashboard/api-keys")
    assert page.locator("#new-key").count() == 0

    page.click("button:has-text('Sign out')")
    page.wait_for_url(lambda url: url.endswith("/dashboard/login"))
