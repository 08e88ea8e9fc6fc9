"""Refused forms in headless Chromium, on a desktop (1280 px) and a phone (390 px): a refused post
comes back with its text, its accounts and its uploaded image, the problem named in words at the
top and beside its field; a YouTube broadcast is refused by its preview, before Send now is pressed.
What each step did is checked through /v1, never through the page alone."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import bearer
from tests.dashboard import test_console_browser as console
from tests.support.sandbox import connect_account
from tests.support.webhook_receiver import wait_for

CHROMIUM = console.CHROMIUM
chromium = console.chromium
sync_api = pytest.importorskip("playwright.sync_api")
expect = sync_api.expect
pytestmark = [pytest.mark.shared_service,
              pytest.mark.skipif(not Path(CHROMIUM).exists(), reason="Chromium is not installed")]

PNG = bytes.fromhex("89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c4890000000d49444154789c6360000002"
                    "00010005fe02fea70000000049454e44ae426082")
SIZES = {"desktop": {"width": 1280, "height": 900}, "phone": {"width": 390, "height": 844}}


@pytest.fixture(scope="module")
def live_overrides() -> dict[str, Any]:
    return {"inbox_poll_seconds": 1.0}  # a YouTube comment thread arrives by polling


@pytest.fixture(params=sorted(SIZES))
def page(request: pytest.FixtureRequest, chromium: Any, server_url: str, tenant: dict[str, str]) -> Any:
    """A signed-in tab at the size the test is run at."""
    context = chromium.new_context(viewport=SIZES[request.param])
    tab = context.new_page()
    expect.set_options(timeout=10_000)
    console.sign_in(tab, server_url, tenant)
    try:
        yield tab
    finally:
        context.close()


def _no_sideways_scroll(page: Any) -> None:
    assert page.evaluate("document.documentElement.scrollWidth - document.documentElement.clientWidth") == 0


def test_a_refused_post_keeps_its_text_accounts_and_image_and_names_the_field_in_words(
        page, client, server_url, tenant):
    x = connect_account(client, tenant, "x")
    connect_account(client, tenant, "linkedin")
    page.goto(server_url + "/dashboard/posts/new")
    text = "Our spring collection is here, and it is the biggest we ever made. " * 5  # 335: over X's 280
    page.get_by_label("Text", exact=True).fill(text)
    page.get_by_role("checkbox", name=re.compile(r"^X · ")).check()
    page.get_by_role("checkbox", name=re.compile(r"^LinkedIn · ")).check()
    page.get_by_label("Upload a file").set_input_files(files=[{"name": "spring.png", "mimeType": "image/png",
                                                                "buffer": PNG}])
    expect(page.get_by_role("checkbox", name="spring.png")).to_be_checked()
    page.get_by_role("button", name="Publish now").click()

    summary = page.get_by_role("alert")
    expect(summary.get_by_role("heading", name="There is a problem")).to_be_visible()
    problem = summary.get_by_role("link", name=re.compile(r"^Text for X · .* weighs 335 of X's 280"))
    expect(problem).to_be_visible()
    expect(page.get_by_label("Text", exact=True)).to_have_value(text)
    expect(page.get_by_role("checkbox", name=re.compile(r"^X · "))).to_be_checked()
    expect(page.get_by_role("checkbox", name=re.compile(r"^LinkedIn · "))).to_be_checked()
    expect(page.get_by_role("checkbox", name="spring.png")).to_be_checked()
    expect(page.get_by_text("validation_failed")).to_have_count(0)
    expect(page.get_by_text("targets[")).to_have_count(0)
    _no_sideways_scroll(page)

    # The summary leads to the field, whose own message says the same; X's own text fixes it.
    problem.click()
    own_text = page.get_by_label(re.compile(r"^Text for X · "))
    expect(own_text).to_be_focused()
    expect(own_text).to_have_attribute("aria-invalid", "true")
    own_text.fill("Spring is here.")
    page.get_by_role("button", name="Publish now").click()
    expect(page.get_by_role("status").filter(has_text="Publishing now.")).to_be_visible()
    (post,) = client.get("/v1/posts", headers=bearer(tenant["apiKey"])).json()["data"]
    assert post["content"] == text and len(post["mediaIds"]) == 1
    assert {t["accountId"]: t["content"] for t in post["targets"]}[x["id"]] == "Spring is here."


def test_a_youtube_broadcast_is_refused_in_the_preview_not_after_send(page, client, server_url, tenant):
    youtube = connect_account(client, tenant, "youtube")
    client.post("/sandbox/youtube/comment", json={
        "accountId": youtube["id"], "mediaId": "vid1", "from": {"id": "UCv1", "handle": "@dana"},
        "text": "Great video!"}).raise_for_status()
    wait_for(lambda: client.get("/v1/conversations", headers=bearer(tenant["apiKey"])).json()["data"])
    page.goto(server_url + "/dashboard/broadcasts/new")
    page.get_by_label("Name").fill("Sale")
    page.get_by_label("Text", exact=True).fill("Our sale starts now")
    account = page.get_by_label("Account")
    account.select_option(label=account.locator("option", has_text=re.compile(r"^YouTube · ")).inner_text())

    preview = page.get_by_role("region", name="Audience preview")
    expect(preview).to_contain_text("Send now and Schedule would refuse this broadcast")
    expect(preview).to_contain_text("YouTube conversations are public comment threads, not direct messages.")
    expect(preview).not_to_contain_text("Reaches")
    _no_sideways_scroll(page)

    # Pressed anyway: the same words beside the account, the form as it was, nothing sent.
    page.get_by_role("button", name="Send now").click()
    expect(page.get_by_role("alert")).to_contain_text("public comment threads")
    expect(page.get_by_label("Name")).to_have_value("Sale")
    expect(page.get_by_label("Text", exact=True)).to_have_value("Our sale starts now")
    assert client.get("/v1/broadcasts", headers=bearer(tenant["apiKey"])).json()["data"] == []
