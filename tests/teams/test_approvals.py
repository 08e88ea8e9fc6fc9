"""Approvals: with `postApproval` on, a member's post waits as `pending_approval` until an owner or
admin approves it (it then publishes, once) or rejects it with a reason; posts made with an API key
are not held. Events and audit rows follow each step."""

from __future__ import annotations

import pytest

from storage.db import connection
from storage.models import Event
from tests.conftest import bearer
from tests.support.oauth_flow import call_tool_raw
from tests.support.posts import sent_posts, wait_settled
from tests.support.sandbox import connect_account
from tests.teams.people import join, mcp_token

pytestmark = pytest.mark.shared_service


def _post_as(client, token, account_id, text):
    answer = call_tool_raw(client, token, "create_post", {
        "content": text, "targets": [{"accountId": account_id}], "publishNow": True})
    assert answer.status_code == 200, answer.text
    return answer.json()["result"]["structuredContent"]


def _events(tenant, post_id):
    with connection():
        return [e.type for e in Event.select().where(Event.workspace == tenant["workspaceId"]).order_by(Event.id)
                if (e.data or {}).get("id") == post_id]


@pytest.fixture
def reviewed(client, live, tenant):
    on = client.patch(f"/v1/workspaces/{tenant['workspaceId']}/settings", json={"postApproval": True}, headers=bearer(tenant["apiKey"]))
    assert on.json()["postApproval"] is True
    account = connect_account(client, tenant, "linkedin")
    member = join(client, tenant, "member")
    return {"account": account, "token": mcp_token(live.url, member, tenant["workspaceId"])}


def test_a_members_post_waits_and_publishes_once_approved(client, tenant, reviewed):
    post = _post_as(client, reviewed["token"], reviewed["account"]["id"], "Our spring sale starts today")
    assert post["status"] == "pending_approval"
    assert client.get("/sandbox/linkedin/sent", params={"accountId": reviewed["account"]["id"]}).json()["data"] == []
    approved = client.post(f"/v1/posts/{post['id']}/approve", headers=bearer(tenant["apiKey"]))
    assert approved.status_code == 200 and approved.json()["status"] in ("publishing", "published")
    assert wait_settled(client, tenant, post["id"])["status"] == "published"
    assert [item["text"] for item in sent_posts(client, "linkedin", reviewed["account"]["id"])] == [
        "Our spring sale starts today"]
    again = client.post(f"/v1/posts/{post['id']}/approve", headers=bearer(tenant["apiKey"]))
    assert again.status_code == 409
    assert _events(tenant, post["id"])[:2] == ["post.approval_requested", "post.approved"]


def test_a_rejected_post_says_why_and_never_publishes(client, tenant, reviewed):
    post = _post_as(client, reviewed["token"], reviewed["account"]["id"], "Typo-ridden annoucement")
    rejected = client.post(f"/v1/posts/{post['id']}/reject", json={"reason": "Spelling: announcement"},
                           headers=bearer(tenant["apiKey"]))
    assert (rejected.json()["status"], rejected.json()["rejectionReason"]) == ("rejected", "Spelling: announcement")
    assert client.get("/sandbox/linkedin/sent", params={"accountId": reviewed["account"]["id"]}).json()["data"] == []
    assert _events(tenant, post["id"]) == ["post.approval_requested", "post.rejected"]
    log = client.get("/v1/audit-log", params={"action": "post.rejected"}, headers=bearer(tenant["apiKey"])).json()
    assert [row["details"]["reason"] for row in log["data"]] == ["Spelling: announcement"]


def test_a_member_cannot_approve_and_a_keys_post_is_not_held(client, tenant, reviewed):
    post = _post_as(client, reviewed["token"], reviewed["account"]["id"], "Mine")
    refused = call_tool_raw(client, reviewed["token"], "get_post", {"postId": post["id"]})
    assert refused.json()["result"]["structuredContent"]["status"] == "pending_approval"
    by_key = client.post("/v1/posts", headers=bearer(tenant["apiKey"]), json={
        "content": "From the CMS", "targets": [{"accountId": reviewed["account"]["id"]}], "publishNow": True})
    assert by_key.status_code == 201 and by_key.json()["status"] != "pending_approval"
