"""A redirect URI on a loopback host matches on any port (RFC 8252 §7.3): a native client (an MCP
bridge on a laptop) listens on whatever port is free, not the one it registered. Everything else
still matches exactly."""

from __future__ import annotations

import pytest

from tests.support.oauth_flow import authorize_params, consent_code, pkce_pair, query_of

pytestmark = pytest.mark.shared_service


def _register(browser, redirect_uri: str) -> str:
    answer = browser.post("/oauth/register", json={
        "client_name": "Bridge", "redirect_uris": [redirect_uri], "token_endpoint_auth_method": "none"})
    assert answer.status_code == 201, answer.text
    return answer.json()["client_id"]


@pytest.mark.parametrize(("registered", "used"), [
    ("http://127.0.0.1:18392/callback", "http://127.0.0.1:18399/callback"),
    ("http://localhost:3334/oauth/callback", "http://localhost:51234/oauth/callback"),
    ("http://[::1]/cb", "http://[::1]:8080/cb"),
])
def test_a_loopback_redirect_on_another_port_gets_a_code_and_a_token(browser, tenant, registered, used):
    client_id = _register(browser, registered)
    verifier, challenge = pkce_pair()
    resource = str(browser.base_url).rstrip("/") + "/mcp"
    location = consent_code(browser, {**authorize_params(client_id, challenge, resource=resource),
                                      "redirect_uri": used}, workspace_id=tenant["workspaceId"])
    assert location.startswith(used + "?code=")
    token = browser.post("/oauth/token", data={
        "grant_type": "authorization_code", "code": query_of(location)["code"], "redirect_uri": used,
        "client_id": client_id, "code_verifier": verifier, "resource": resource})
    assert token.status_code == 200, token.text
    assert token.json()["access_token"]


@pytest.mark.parametrize(("registered", "used"), [
    ("http://127.0.0.1:18392/callback", "http://127.0.0.1:18399/other"),  # another path
    ("http://127.0.0.1:18392/callback", "http://localhost:18392/callback"),  # another host
    ("http://127.0.0.1:18392/callback", "http://evil@127.0.0.1:18399/callback"),  # user info
    ("https://app.example/callback", "https://app.example:8443/callback"),  # not loopback: exact
])
def test_anything_but_the_port_of_a_loopback_redirect_must_match_exactly(browser, tenant, registered, used):
    client_id = _register(browser, registered)
    _, challenge = pkce_pair()
    page = browser.get("/oauth/authorize", params={**authorize_params(client_id, challenge), "redirect_uri": used})
    assert page.status_code == 400
    assert "location" not in page.headers


def test_the_token_request_must_name_the_port_the_code_was_sent_to(browser, tenant):
    client_id = _register(browser, "http://127.0.0.1:18392/callback")
    verifier, challenge = pkce_pair()
    used = "http://127.0.0.1:18399/callback"
    location = consent_code(browser, {**authorize_params(client_id, challenge), "redirect_uri": used},
                            workspace_id=tenant["workspaceId"])
    token = browser.post("/oauth/token", data={
        "grant_type": "authorization_code", "code": query_of(location)["code"],
        "redirect_uri": "http://127.0.0.1:18392/callback", "client_id": client_id, "code_verifier": verifier})
    assert token.status_code == 400
    assert token.json()["error"] == "invalid_grant"
