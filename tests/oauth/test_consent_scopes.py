"""The consent page lists each requested scope with a checkbox, all checked; the token carries only
what the person left checked."""

from __future__ import annotations

import html
import re

import httpx2
import pytest

from storage.db import connection
from storage.models import OAuthCode
from tests.support.oauth_flow import (
    REDIRECT_URI,
    authorize_params,
    call_tool_raw,
    hidden,
    pkce_pair,
    query_of,
    register_client,
)

pytestmark = pytest.mark.shared_service


def _checkboxes(page: str) -> dict[str, bool]:
    boxes = re.findall(r'<input type="checkbox" name="grant_scope" value="([^"]*)"\s*(checked)?', page)
    return {html.unescape(value): bool(checked) for value, checked in boxes}


def _consent(browser, tenant, *, checked: list[str], scope: str = "read write"):
    """Open the consent page as a browser, leave `checked` ticked, allow; (page, answer, verifier, client)."""
    client = register_client(browser)
    verifier, challenge = pkce_pair()
    resource = str(browser.base_url).rstrip("/") + "/mcp"
    page = browser.get("/oauth/authorize", params=authorize_params(client["client_id"], challenge, scope=scope,
                                                                   resource=resource))
    assert page.status_code == 200, page.text
    action = html.unescape(re.search(r'<form method="post" action="(/oauth/authorize[^"]*)"', page.text).group(1))
    form = [("csrf_token", hidden(page.text, "csrf_token")), ("scope_choice", hidden(page.text, "scope_choice")),
            ("decision", "allow"), ("workspaceId", tenant["workspaceId"]), *[("grant_scope", s) for s in checked]]
    answer = browser.post(action, content=str(httpx2.QueryParams(form)).encode(),
                          headers={"Content-Type": "application/x-www-form-urlencoded"})
    return page, answer, verifier, client, resource


def _token(browser, answer, verifier, client, resource):
    assert answer.status_code in (302, 303), answer.text
    token = browser.post("/oauth/token", data={
        "grant_type": "authorization_code", "code": query_of(answer.headers["location"])["code"],
        "redirect_uri": REDIRECT_URI, "client_id": client["client_id"], "code_verifier": verifier,
        "resource": resource})
    assert token.status_code == 200, token.text
    return token.json()


def test_every_requested_scope_has_a_checked_box(browser, tenant):
    page, *_ = _consent(browser, tenant, checked=["read", "write"])
    assert _checkboxes(page.text) == {"read": True, "write": True}


def test_unchecking_write_gives_a_read_only_token(browser, tenant):
    _, answer, verifier, client, resource = _consent(browser, tenant, checked=["read"])
    token = _token(browser, answer, verifier, client, resource)
    assert token["scope"] == "read"
    refused = call_tool_raw(browser, token["access_token"], "start_conversation",
                            {"accountId": "acc_x", "contactHandle": "x"})
    assert refused.status_code == 403
    assert 'error="insufficient_scope"' in refused.headers["www-authenticate"]
    listed = call_tool_raw(browser, token["access_token"], "list_accounts").json()["result"]
    assert listed.get("isError") is not True
    refreshed = browser.post("/oauth/token", data={"grant_type": "refresh_token", "client_id": client["client_id"],
                                                   "refresh_token": token["refresh_token"], "resource": resource})
    assert refreshed.json()["scope"] == "read"


def test_a_scope_that_was_not_requested_cannot_be_ticked_in(browser, tenant):
    _, answer, verifier, client, resource = _consent(browser, tenant, checked=["read", "write"], scope="read")
    assert _token(browser, answer, verifier, client, resource)["scope"] == "read"


def test_nothing_checked_is_refused_and_issues_no_code(browser, tenant):
    _, answer, _, client, _ = _consent(browser, tenant, checked=[])
    assert answer.status_code == 400
    assert "at least one permission" in answer.text
    assert _checkboxes(answer.text) == {"read": False, "write": False}
    with connection():
        assert OAuthCode.select().where(OAuthCode.client_id == client["client_id"]).count() == 0
