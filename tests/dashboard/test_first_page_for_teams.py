"""The first page tells owners and admins what needs them: accounts to reconnect, and members'
posts to review (approved or rejected there with a reason)."""

from __future__ import annotations

import pytest

from storage.db import connection, db
from storage.models import Account
from tests.conftest import bearer
from tests.support.oauth_flow import call_tool_raw, hidden
from tests.support.sandbox import connect_account
from tests.teams.people import join, mcp_token

pytestmark = pytest.mark.shared_service


def test_accounts_to_reconnect_and_posts_to_review_are_on_the_first_page(browser, client, live, tenant):
    account = connect_account(client, tenant, "linkedin")
    with connection(), db.atomic():
        Account.update(needs_reauth=True).where(Account.id == account["id"]).execute()
    client.patch(f"/v1/workspaces/{tenant['workspaceId']}/settings", json={"postApproval": True}, headers=bearer(tenant["apiKey"])).raise_for_status()
    healthy = connect_account(client, tenant, "telegram")
    member = join(client, tenant, "member")
    token = mcp_token(live.url, member, tenant["workspaceId"])
    made = call_tool_raw(client, token, "create_post", {"content": "Weekend opening hours", "publishNow": True,
                                                         "targets": [{"accountId": healthy["id"], "options": {"chatId": "@shopnews"}}]})
    post = made.json()["result"]["structuredContent"]
    assert post["status"] == "pending_approval"
    home = browser.get("/dashboard")
    assert "account to reconnect" in home.text and "no longer accepts its sign-in" in home.text
    assert "Posts to review" in home.text and "Weekend opening hours" in home.text
    rejected = browser.post(f"/dashboard/review/{post['id']}/reject", data={
        "csrf_token": hidden(home.text, "csrf_token"), "workspaceId": tenant["workspaceId"], "reason": "Wrong hours"})
    assert rejected.status_code == 303
    after = client.get(f"/v1/posts/{post['id']}", headers=bearer(tenant["apiKey"])).json()
    assert (after["status"], after["rejectionReason"]) == ("rejected", "Wrong hours")
    assert "Weekend opening hours" not in browser.get("/dashboard").text
