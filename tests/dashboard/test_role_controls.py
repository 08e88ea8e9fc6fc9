"""What a role sees in the dashboard (plain HTML): the controls it may not use are not shown (the
service refuses them anyway, see tests/teams/test_role_matrix.py), and owners and admins review
members' posts in the queue on the Posts page."""

from __future__ import annotations

import re

import httpx2
import pytest

from tests.conftest import bearer
from tests.support.factories import add_account
from tests.support.oauth_flow import browser_sign_in, call_tool_raw, hidden
from tests.teams.people import join, mcp_token

pytestmark = pytest.mark.shared_service


def _page(live, person, path: str, workspace_id: str) -> str:
    with httpx2.Client(base_url=live.url, timeout=30) as browser:
        browser_sign_in(browser, person["email"], person["password"])
        answer = browser.get(path, params={"workspace": workspace_id})
        assert answer.status_code == 200, answer.text
        return answer.text


@pytest.mark.parametrize(("role", "connects", "writes"), [("admin", True, True), ("member", False, True),
                                                          ("viewer", False, False)])
def test_each_role_sees_only_the_controls_it_may_use(client, live, tenant, role, connects, writes):
    add_account(tenant["workspaceId"], tenant["profileId"], platform="telegram")
    person = join(client, tenant, role)
    accounts = _page(live, person, "/dashboard/accounts", tenant["workspaceId"])
    assert ('aria-label="Connect Telegram"' in accounts) is connects
    assert ('>Disconnect</a>' in accounts) is connects
    assert ("Create profile" in accounts) is connects
    assert ("Owners and admins connect and disconnect accounts" in accounts) is not connects
    posts = _page(live, person, "/dashboard/posts", tenant["workspaceId"])
    assert (">New post</a>" in posts) is writes
    broadcasts = _page(live, person, "/dashboard/broadcasts", tenant["workspaceId"])
    assert (">New broadcast</a>" in broadcasts) is writes
    media = _page(live, person, "/dashboard/media", tenant["workspaceId"])
    assert ("Upload a file" in media) is writes


def test_owners_review_members_posts_on_the_posts_page(client, live, tenant):
    key = bearer(tenant["apiKey"])
    assert client.patch(f"/v1/workspaces/{tenant['workspaceId']}/settings", json={"postApproval": True},
                        headers=key).status_code == 200
    account = add_account(tenant["workspaceId"], tenant["profileId"], platform="telegram")
    member = join(client, tenant, "member")
    token = mcp_token(live.url, member, tenant["workspaceId"])
    made = []
    for text in ("Spring sale starts Monday", "Everything must go"):
        answer = call_tool_raw(client, token, "create_post", {"content": text, "targets": [
            {"accountId": account, "options": {"chatId": "@brand"}}], "scheduledFor": "2999-01-01T09:00:00Z"})
        made.append(answer.json()["result"]["structuredContent"]["id"])

    assert "Posts to review" not in _page(live, member, "/dashboard/posts", tenant["workspaceId"])
    admin = join(client, tenant, "admin")
    with httpx2.Client(base_url=live.url, timeout=30) as browser:
        browser_sign_in(browser, admin["email"], admin["password"])
        page = browser.get("/dashboard/posts", params={"workspace": tenant["workspaceId"]})
        assert "Posts to review (2)" in page.text and "Spring sale starts Monday" in page.text
        approved = browser.post(f"/dashboard/review/{made[0]}/approve", data={
            "csrf_token": hidden(page.text, "csrf_token"), "workspaceId": tenant["workspaceId"],
            "next": "/dashboard/posts"})
        assert approved.status_code == 303 and approved.headers["location"].startswith("/dashboard/posts?")
        rejected = browser.post(f"/dashboard/review/{made[1]}/reject", data={
            "csrf_token": hidden(page.text, "csrf_token"), "workspaceId": tenant["workspaceId"],
            "next": "/dashboard/posts", "reason": "Too pushy for our tone"})
        assert rejected.status_code == 303
        after = browser.get(rejected.headers["location"]).text
        assert "Rejected." in after and "Posts to review (0)" in after and "Nothing waits for review." in after
    statuses = [client.get(f"/v1/posts/{post_id}", headers=key).json() for post_id in made]
    assert [post["status"] for post in statuses] == ["scheduled", "rejected"]
    assert re.search(r"Too pushy", str(statuses[1]))
