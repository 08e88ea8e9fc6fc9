"""The Members and Audit log pages, and an invitation's link, as a person uses them (plain HTML
forms): an owner invites, the invitee opens the link, chooses a password and lands in the
workspace seeing only their profiles; a member has no Members or Audit log link, and a direct
request for either is a 403 page naming the role it needs."""

from __future__ import annotations

import re

import httpx2
import pytest

from tests.support.factories import add_profile
from tests.support.oauth_flow import hidden

pytestmark = pytest.mark.shared_service


def _invite(browser, tenant, **fields) -> str:
    page = browser.get("/dashboard/members", params={"workspace": tenant["workspaceId"]})
    assert page.status_code == 200
    answer = browser.post("/dashboard/members", data={
        "csrf_token": hidden(page.text, "csrf_token"), "workspaceId": tenant["workspaceId"], **fields})
    assert answer.status_code == 200, answer.text
    return re.search(r'id="invitation-link">([^<]+)<', answer.text).group(1)  # type: ignore[union-attr]


def test_an_invitee_joins_through_the_link_and_sees_only_their_profile(browser, live, tenant):
    second = add_profile(tenant["workspaceId"], name="Client B")
    link = _invite(browser, tenant, email="sam@example.com", role="member", profileIds=second)
    with httpx2.Client(timeout=30) as invitee:  # a second browser
        page = invitee.get(link)
        assert page.status_code == 200 and "You are invited as member" in page.text
        joined = invitee.post(link, data={"csrf_token": hidden(page.text, "csrf_token"), "password": "sams password"})
        assert joined.status_code == 303
        home = invitee.get(live.url + joined.headers["location"])
        assert '<li class="badge">Client B</li>' in home.text and '<li class="badge">Main</li>' not in home.text
        assert ">Members<" not in home.text and ">Audit log<" not in home.text
        members = invitee.get(f"{live.url}/dashboard/members", params={"workspace": tenant["workspaceId"]})
        assert members.status_code == 403 and "admin role" in members.text
        audit = invitee.get(f"{live.url}/dashboard/audit-log", params={"workspace": tenant["workspaceId"]})
        assert audit.status_code == 403
        again = invitee.get(link)
        assert again.status_code == 409 and "used already" in again.text
    listing = browser.get("/dashboard/members", params={"workspace": tenant["workspaceId"]}).text
    assert "sam@example.com" in listing and "Client B" in listing


def test_the_audit_log_page_shows_the_invitation(browser, tenant):
    _invite(browser, tenant, email="kim@example.com", role="viewer")
    page = browser.get("/dashboard/audit-log", params={"workspace": tenant["workspaceId"], "action": "member.invited"})
    assert page.status_code == 200
    assert "member.invited" in page.text and "invitation" in page.text
