"""Roles hold in the service for every front door: what each role may do through its MCP token (a
token never acts above its person's role, also after the role is lowered), what a member limited
to some profiles sees, and who may manage members through /v1."""

from __future__ import annotations

import pytest

from tests.conftest import bearer
from tests.support.factories import add_account, add_key, add_profile
from tests.support.oauth_flow import call_tool_raw
from tests.teams.people import invite, join, mcp_token, set_role

pytestmark = pytest.mark.shared_service


def _tool(http, token, name, arguments=None) -> dict:
    """The tool's structured answer, or its `/v1` error envelope. A token without the scope a tool
    needs (a viewer's token is `read` only) is answered before the tool, with HTTP 403
    `insufficient_scope`, as MCP's authorization has it: read here as the envelope `scope_missing`."""
    answer = call_tool_raw(http, token, name, arguments)
    if answer.status_code == 403 and answer.json().get("error") == "insufficient_scope":
        assert 'error="insufficient_scope"' in answer.headers["www-authenticate"]
        return {"error": {"code": "scope_missing"}}
    assert answer.status_code == 200, answer.text
    result = answer.json()["result"]
    return result["structuredContent"]


# The write tools, which a viewer's read-only token cannot reach at all.
WRITE_TOOLS = {"create_post", "start_conversation", "create_webhook"}


def _code(result: dict) -> str:
    return result.get("error", {}).get("code", "ok")


# (tool, arguments made from the workspace, the least role that may call it, its answer then)
MATRIX = [
    ("list_accounts", lambda ws: {}, "viewer", "ok"),
    ("list_conversations", lambda ws: {}, "viewer", "ok"),
    ("list_posts", lambda ws: {}, "viewer", "ok"),
    ("create_post", lambda ws: {"content": "Hello",
                                "targets": [{"accountId": ws["accountId"], "options": {"chatId": "@brand"}}]},
     "member", "ok"),
    ("start_conversation", lambda ws: {"accountId": ws["accountId"], "contactHandle": "@ann"}, "member", "ok"),
    ("list_webhooks", lambda ws: {}, "admin", "ok"),
    # The role is checked first; an admin's call then meets the URL's own check (no such host).
    ("create_webhook", lambda ws: {"url": "https://hooks.invalid/in"}, "admin", "validation_failed"),
]
RANK = ["viewer", "member", "admin", "owner"]


@pytest.fixture
def workspace(client, tenant):
    return {**tenant, "accountId": add_account(tenant["workspaceId"], tenant["profileId"], platform="telegram")}


@pytest.mark.parametrize("role", ["viewer", "member", "admin"])
def test_each_role_calls_exactly_the_tools_its_role_allows(client, live, workspace, role):
    person = join(client, workspace, role)
    token = mcp_token(live.url, person, workspace["workspaceId"])
    for tool, arguments, least, answer in MATRIX:
        result = _tool(client, token, tool, arguments(workspace))
        allowed = RANK.index(role) >= RANK.index(least)
        refused = "scope_missing" if role == "viewer" and tool in WRITE_TOOLS else "forbidden"
        assert _code(result) == (answer if allowed else refused), (tool, role, result)


def test_a_forbidden_tool_names_the_role_it_needs(client, live, workspace):
    person = join(client, workspace, "member")
    token = mcp_token(live.url, person, workspace["workspaceId"])
    result = _tool(client, token, "create_webhook", {"url": "https://hooks.invalid/in"})
    assert result["error"]["code"] == "forbidden"
    assert "admin role" in result["error"]["message"] and "your role in this workspace is member" in \
        result["error"]["message"]


def test_a_token_loses_what_a_lowered_role_no_longer_allows_at_its_next_call(client, live, workspace):
    person = join(client, workspace, "admin")
    token = mcp_token(live.url, person, workspace["workspaceId"])
    assert _code(_tool(client, token, "list_webhooks")) == "ok"
    set_role(workspace["workspaceId"], person["userId"], "viewer")
    assert _code(_tool(client, token, "list_webhooks")) == "forbidden"
    made = _tool(client, token, "start_conversation", {"accountId": workspace["accountId"], "contactHandle": "@bo"})
    assert _code(made) == "forbidden"
    assert _code(_tool(client, token, "list_accounts")) == "ok"


def test_a_viewer_can_grant_read_only(client, live, workspace):
    person = join(client, workspace, "viewer")
    token = mcp_token(live.url, person, workspace["workspaceId"], scope="read write")
    set_role(workspace["workspaceId"], person["userId"], "member")  # the token itself was issued read-only
    result = _tool(client, token, "start_conversation", {"accountId": workspace["accountId"], "contactHandle": "@c"})
    assert result["error"]["code"] == "scope_missing"


def test_a_member_limited_to_a_profile_sees_only_its_accounts(client, live, workspace):
    second = add_profile(workspace["workspaceId"])
    theirs = add_account(workspace["workspaceId"], second, platform="telegram")
    person = join(client, workspace, "member", profileIds=[second])
    token = mcp_token(live.url, person, workspace["workspaceId"])
    listed = _tool(client, token, "list_accounts")
    assert [account["id"] for account in listed["data"]] == [theirs]
    outside = _tool(client, token, "start_conversation", {"accountId": workspace["accountId"], "contactHandle": "@d"})
    assert outside["error"]["code"] in ("forbidden", "not_found")
    inside = _tool(client, token, "start_conversation", {"accountId": theirs, "contactHandle": "@d"})
    assert _code(inside) == "ok"


def test_members_lists_everyone_with_their_role(client, workspace):
    person = join(client, workspace, "member")
    listed = client.get("/v1/members", headers=bearer(workspace["apiKey"]))
    assert listed.status_code == 200
    roles = {member["userId"]: member["role"] for member in listed.json()["data"]}
    assert roles == {workspace["userId"]: "owner", person["userId"]: "member"}


def test_a_profiles_key_sees_only_members_within_its_profiles(client, workspace):
    second = add_profile(workspace["workspaceId"])
    limited = join(client, workspace, "viewer", profileIds=[second])
    join(client, workspace, "member")
    key = add_key(workspace["workspaceId"], scope="profiles", profile_ids=[second])
    listed = client.get("/v1/members", headers=bearer(key))
    assert [member["userId"] for member in listed.json()["data"]] == [limited["userId"]]


@pytest.mark.parametrize("options", [{"permission": "read"}, {"scope": "profiles"}])
def test_only_a_full_read_write_key_invites(client, workspace, options):
    if options.get("scope") == "profiles":
        options = {**options, "profile_ids": [workspace["profileId"]]}
    key = add_key(workspace["workspaceId"], **options)
    answer = client.post("/v1/invitations", json={"email": "x@example.com", "role": "member"}, headers=bearer(key))
    assert answer.status_code == 403
    assert answer.json()["error"]["code"] == "forbidden"


def test_a_key_cannot_make_an_owner_and_the_last_owner_stays(client, workspace):
    refused = client.post("/v1/invitations", json={"email": "boss@example.com", "role": "owner"},
                          headers=bearer(workspace["apiKey"]))
    assert refused.status_code == 403
    demote = client.patch(f"/v1/members/{workspace['userId']}", json={"role": "admin"},
                          headers=bearer(workspace["apiKey"]))
    assert demote.status_code in (403, 409)
    remove = client.delete(f"/v1/members/{workspace['userId']}", headers=bearer(workspace["apiKey"]))
    assert remove.status_code in (403, 409)
    assert client.get("/v1/members", headers=bearer(workspace["apiKey"])).json()["data"][0]["role"] == "owner"


def test_changing_a_role_and_removing_a_member(client, live, workspace):
    person = join(client, workspace, "member")
    token = mcp_token(live.url, person, workspace["workspaceId"])
    changed = client.patch(f"/v1/members/{person['userId']}", json={"role": "viewer"},
                           headers=bearer(workspace["apiKey"]))
    assert changed.status_code == 200 and changed.json()["role"] == "viewer"
    removed = client.delete(f"/v1/members/{person['userId']}", headers=bearer(workspace["apiKey"]))
    assert removed.json() == {"userId": person["userId"], "removed": True}
    assert call_tool_raw(client, token, "list_accounts").status_code == 401
    listed = client.get("/v1/members", headers=bearer(workspace["apiKey"])).json()["data"]
    assert person["userId"] not in [member["userId"] for member in listed]


def test_an_invitation_names_its_role_only_once(client, workspace):
    made = invite(client, workspace, "viewer")
    assert made["status"] == "pending" and made["url"].startswith(client.base_url.__str__().rstrip("/"))
    listed = client.get("/v1/invitations", headers=bearer(workspace["apiKey"])).json()["data"]
    assert [(row["id"], "url" in row) for row in listed] == [(made["id"], False)]


def test_a_dashboard_page_above_the_role_is_a_403_page_naming_the_role(client, live, workspace):
    import httpx2

    from tests.support.oauth_flow import browser_sign_in

    person = join(client, workspace, "member")
    with httpx2.Client(base_url=live.url, timeout=30) as http:
        browser_sign_in(http, person["email"], person["password"])
        page = http.get("/dashboard/webhooks", params={"workspace": workspace["workspaceId"]})
    assert page.status_code == 403
    assert "text/html" in page.headers["content-type"]
    assert "admin role" in page.text and "your role in this workspace is member" in page.text
