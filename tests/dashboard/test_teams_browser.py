"""A team's two journeys in headless Chromium (Debian's package, driven by Playwright), by roles and
labels as a person finds things: an owner invites someone on Members and the invitee joins from a
second browser as a new user, sees only their profile and cannot open Members; and the shared inbox:
assign to me, a note that is visibly not sent, resolve, a new message from the contact opens it
again, search finds it."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.dashboard import test_console_browser as console
from tests.support.factories import add_profile
from tests.support.oauth_flow import email_of
from tests.support.sandbox import connect_account

CHROMIUM = console.CHROMIUM
chromium = console.chromium  # Chromium for the module: each test's people in browser contexts of their own

playwright = pytest.importorskip("playwright.sync_api")
pytestmark = [pytest.mark.shared_service,
              pytest.mark.skipif(not Path(CHROMIUM).exists(), reason="Chromium is not installed")]


def _sign_in(page, url: str, email: str, password: str) -> None:
    page.goto(url + "/dashboard/login")
    page.get_by_label("E-mail", exact=True).fill(email)
    page.get_by_label("Password", exact=True).fill(password)
    page.get_by_role("button", name="Sign in", exact=True).click()
    page.wait_for_url(re.compile(r".*/dashboard(\?.*)?$"))


def test_an_invitee_joins_in_a_second_browser_and_sees_only_their_profile(chromium, live, tenant):
    add_profile(tenant["workspaceId"], name="Client B")
    owner = chromium.new_context().new_page()
    _sign_in(owner, live.url, email_of(tenant["userId"]), "correct horse")
    owner.get_by_role("link", name="Members").click()
    owner.get_by_label("E-mail", exact=True).fill("sam@example.com")
    owner.get_by_label("Role", exact=True).select_option("member")
    owner.get_by_label("Client B").check()
    owner.get_by_role("button", name="Invite").click()
    heading = owner.get_by_role("heading", name="sam@example.com is invited as member")
    heading.wait_for()
    link = owner.locator("#invitation-link").inner_text()

    invitee = chromium.new_context().new_page()  # another person's browser: no cookie of the owner's
    invitee.goto(link)
    invitee.get_by_role("heading", name="You are invited as member").wait_for()
    invitee.get_by_label("Choose a password").fill("sams own password")
    invitee.get_by_role("button", name="Create my sign-in and join").click()
    invitee.wait_for_url(re.compile(r".*/dashboard(\?.*)?$"))
    invitee.context.clear_cookies()  # signs in again, as on another day
    _sign_in(invitee, live.url, "sam@example.com", "sams own password")
    profiles = invitee.get_by_role("list", name="Profiles").get_by_role("listitem").all_inner_texts()
    assert profiles == ["Client B"]
    navigation = invitee.get_by_role("navigation", name="Main")
    assert navigation.get_by_role("link", name="Members").count() == 0
    answer = invitee.goto(f"{live.url}/dashboard/members?workspace={tenant['workspaceId']}")
    assert answer is not None and answer.status == 403
    refusal = invitee.get_by_role("main").inner_text()
    assert "You need another role" in refusal and "admin role" in refusal and "your role in this workspace is member" in refusal
    invitee.goto(f"{live.url}/dashboard/accounts?workspace={tenant['workspaceId']}")
    assert invitee.get_by_role("button", name=re.compile("^Connect")).count() == 0

    owner.get_by_role("link", name="Members").click()
    people = owner.locator("main table").first.inner_text()
    assert "sam@example.com" in people and "Client B" in people


def test_the_shared_inbox_journey(chromium, client, live, tenant):
    bot = connect_account(client, tenant, "telegram")
    sent = client.post("/sandbox/telegram/inbound-message", json={
        "accountId": bot["id"], "from": {"id": "8101", "handle": "lea_m", "name": "Léa Martin"},
        "text": "My order 5521 never arrived"})
    assert sent.status_code == 200, sent.text
    page = chromium.new_context().new_page()
    _sign_in(page, live.url, email_of(tenant["userId"]), "correct horse")
    page.get_by_role("link", name="Inbox").click()
    page.get_by_role("link", name=re.compile("Léa Martin")).first.click()
    page.get_by_role("heading", name="Léa Martin").wait_for()

    page.get_by_role("button", name="Assign to me").click()
    team = page.get_by_role("region", name="For the team")
    team.get_by_text(re.compile(r"Status: open\s*·\s*Assigned to you")).wait_for()

    page.get_by_label("Internal note").fill("Checked the courier: lost in transit")
    page.get_by_role("button", name="Add note").click()
    notes = page.get_by_role("list", name="Internal notes")
    notes.get_by_text("Checked the courier: lost in transit").wait_for()
    assert "not sent to the contact" in page.get_by_role("heading", name=re.compile("Internal notes")).inner_text()
    assert "Checked the courier" not in page.get_by_role("list", name="Thread").inner_text()

    page.get_by_role("button", name="Resolve").click()
    team.get_by_text(re.compile("Status: resolved")).wait_for()

    again = client.post("/sandbox/telegram/inbound-message", json={
        "accountId": bot["id"], "from": {"id": "8101", "handle": "lea_m", "name": "Léa Martin"},
        "text": "Any news about the parcel?"})
    assert again.status_code == 200, again.text
    page.get_by_role("list", name="Thread").get_by_text("Any news about the parcel?").wait_for()
    page.reload()
    team.get_by_text(re.compile("Status: open")).wait_for()

    page.get_by_label("Search").fill("parcel")
    page.get_by_role("button", name="Filter").click()
    listed = page.locator("#conversation-list")
    listed.get_by_role("link", name=re.compile("Léa Martin")).wait_for()
    page.get_by_label("Search").fill("refund")
    page.get_by_role("button", name="Filter").click()
    listed.get_by_role("link", name=re.compile("Léa Martin")).wait_for(state="detached")
