"""Tools act in the token's workspace and fail with /v1 error codes (scopes: test_tool_scopes.py, which
runs a service of its own with a write tool added)."""

from __future__ import annotations

import json
import re

import httpx2
import pytest

from kit import clock
from service.identity import bootstrap as bootstrap_module
from service.identity.oauth_tokens import ACCESS_LIFETIME, LAST_USED_RESOLUTION_SECONDS
from storage.db import connection
from storage.models import Membership, OAuthGrant
from tests.support.factories import add_account
from tests.support.oauth_flow import call_tool_raw, email_of, hand_made_tokens, hidden

pytestmark = pytest.mark.shared_service


def rpc(answer: httpx2.Response) -> dict:
    assert answer.status_code == 200, answer.text
    return answer.json()["result"]


def test_a_token_sees_only_the_workspace_chosen_at_consent(browser, tenant, other_tenant):
    mine = add_account(tenant["workspaceId"], tenant["profileId"])
    theirs = add_account(other_tenant["workspaceId"], other_tenant["profileId"])
    _, tokens = hand_made_tokens(browser, workspace_id=tenant["workspaceId"])
    listed = rpc(call_tool_raw(browser, tokens["access_token"], "list_accounts"))["structuredContent"]
    assert [a["id"] for a in listed["data"]] == [mine]
    other_profile = rpc(call_tool_raw(browser, tokens["access_token"], "list_accounts",
                                      {"profileId": other_tenant["profileId"]}))["structuredContent"]
    assert other_profile["data"] == []
    assert theirs not in json.dumps(listed)


def test_a_person_with_two_workspaces_chooses_one_and_the_token_stays_there(browser, tenant):
    with connection():
        second = bootstrap_module.bootstrap(email=email_of(tenant["userId"]), password="correct horse",
                                            workspace_name="Second")
    there = add_account(second["workspaceId"], second["profileId"])
    add_account(tenant["workspaceId"], tenant["profileId"])
    _, tokens = hand_made_tokens(browser, workspace_id=second["workspaceId"])
    listed = rpc(call_tool_raw(browser, tokens["access_token"], "list_accounts"))["structuredContent"]
    assert [a["id"] for a in listed["data"]] == [there]
    spaces = rpc(call_tool_raw(browser, tokens["access_token"], "list_workspaces"))["structuredContent"]
    assert [ws["name"] for ws in spaces["data"]] == ["Second"]


def test_consent_for_a_workspace_the_person_is_not_in_is_refused(browser, tenant, other_tenant):
    from tests.support.oauth_flow import authorize_params, pkce_pair, register_client

    client = register_client(browser)
    _, challenge = pkce_pair()
    page = browser.get("/oauth/authorize", params=authorize_params(client["client_id"], challenge))
    action = re.search(r'action="(/oauth/authorize[^"]*)"', page.text).group(1).replace("&amp;", "&")
    answer = browser.post(action, data={"csrf_token": hidden(page.text, "csrf_token"), "decision": "allow",
                                        "workspaceId": other_tenant["workspaceId"]})
    assert answer.status_code == 400
    assert "location" not in answer.headers


def test_tool_arguments_are_checked_with_the_v1_rules_and_errors_carry_the_v1_code(browser, tenant):
    _, tokens = hand_made_tokens(browser, workspace_id=tenant["workspaceId"])
    result = rpc(call_tool_raw(browser, tokens["access_token"], "list_accounts", {"limit": 500}))
    assert result["isError"] is True
    assert "limit" in result["content"][0]["text"]


def test_arguments_of_the_wrong_type_or_unknown_give_validation_failed_with_details(browser, tenant):
    _, tokens = hand_made_tokens(browser, workspace_id=tenant["workspaceId"])
    for arguments, field in (({"limit": "lots"}, "limit"), ({"page": [1]}, "page"), ({"platform": 5}, "platform"),
                             ({"limmit": 5}, "limmit"), ({"limit": 5, "workspaceId": "ws_other"}, "workspaceId")):
        result = rpc(call_tool_raw(browser, tokens["access_token"], "list_accounts", arguments))
        assert result["isError"] is True, arguments
        error = result["structuredContent"]["error"]
        assert error["code"] == "validation_failed", arguments
        assert [d["field"] for d in error["details"]] == [field], arguments
        text = result["content"][0]["text"]
        assert "pydantic" not in text and "Error executing tool" not in text, text
        assert json.loads(text) == result["structuredContent"]
    missing = rpc(call_tool_raw(browser, tokens["access_token"], "get_messages", {}))
    assert missing["structuredContent"]["error"]["details"] == [{"field": "conversationId", "message": "is required"}]


def test_a_revoked_connected_app_is_refused_at_once(browser, tenant):
    client, tokens = hand_made_tokens(browser, workspace_id=tenant["workspaceId"], name="Assistant to revoke")
    assert call_tool_raw(browser, tokens["access_token"], "list_workspaces").status_code == 200
    page = browser.get("/dashboard/settings/connected-apps")
    assert "Assistant to revoke" in page.text
    # The form as the page renders it: the test posts what a browser would.
    answer = browser.post("/dashboard/settings/connected-apps/revoke", data={
        "csrf_token": hidden(page.text, "csrf_token"), "clientId": hidden(page.text, "clientId"),
        "workspaceId": hidden(page.text, "workspaceId")})
    assert answer.status_code == 303
    assert call_tool_raw(browser, tokens["access_token"], "list_workspaces").status_code == 401
    refresh = browser.post("/oauth/token", data={"grant_type": "refresh_token", "client_id": client["client_id"],
                                                 "refresh_token": tokens["refresh_token"]})
    assert refresh.json()["error"] == "invalid_grant"
    assert "Assistant to revoke" not in browser.get("/dashboard/settings/connected-apps").text


def test_an_access_token_is_refused_once_it_expires(browser, tenant):
    _, tokens = hand_made_tokens(browser, workspace_id=tenant["workspaceId"])
    clock.advance(ACCESS_LIFETIME.total_seconds() - 5)
    assert call_tool_raw(browser, tokens["access_token"], "list_workspaces").status_code == 200
    clock.advance(10)
    assert call_tool_raw(browser, tokens["access_token"], "list_workspaces").status_code == 401


def test_a_token_is_refused_once_its_person_leaves_the_workspace(browser, tenant):
    _, tokens = hand_made_tokens(browser, workspace_id=tenant["workspaceId"])
    assert call_tool_raw(browser, tokens["access_token"], "list_workspaces").status_code == 200
    with connection():  # as a statement typed at a SQL prompt would: no service code involved
        Membership.delete().where(Membership.user == tenant["userId"],
                                  Membership.workspace == tenant["workspaceId"]).execute()
    assert call_tool_raw(browser, tokens["access_token"], "list_workspaces").status_code == 401


def test_a_connected_app_shows_when_it_was_last_used_to_the_minute(browser, tenant):
    client, tokens = hand_made_tokens(browser, workspace_id=tenant["workspaceId"])

    def last_used() -> object:
        with connection():
            return OAuthGrant.get(OAuthGrant.client_id == client["client_id"]).last_used_at

    assert call_tool_raw(browser, tokens["access_token"], "list_workspaces").status_code == 200
    first = last_used()
    assert first is not None
    clock.advance(LAST_USED_RESOLUTION_SECONDS - 5)
    assert call_tool_raw(browser, tokens["access_token"], "list_workspaces").status_code == 200
    assert last_used() == first  # a read stays a read within the minute
    clock.advance(10)
    assert call_tool_raw(browser, tokens["access_token"], "list_workspaces").status_code == 200
    assert last_used() > first
