"""The authorisation server's rules, driven by hand where a well-behaved client never goes."""

from __future__ import annotations

import httpx2
import pytest

from storage.db import connection
from storage.models import OAuthCode, OAuthToken, User
from tests.support.oauth_flow import (
    REDIRECT_URI,
    authorize_params,
    call_tool_raw,
    consent_code,
    hand_made_tokens,
    pkce_pair,
    query_of,
    register_client,
)

pytestmark = pytest.mark.shared_service


def test_metadata_advertises_what_mcp_clients_look_for(client, server_url):
    meta = client.get("/.well-known/oauth-authorization-server").json()
    assert meta["issuer"] == server_url
    assert meta["code_challenge_methods_supported"] == ["S256"]
    assert meta["authorization_response_iss_parameter_supported"] is True
    assert meta["client_id_metadata_document_supported"] is True
    assert meta["registration_endpoint"] == server_url + "/oauth/register"
    resource = client.get("/.well-known/oauth-protected-resource/mcp").json()
    assert resource["resource"] == server_url + "/mcp"
    assert resource["authorization_servers"] == [server_url]


def test_mcp_without_a_token_is_401_pointing_at_the_resource_metadata(client, server_url):
    answer = client.post("/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
                         headers={"Accept": "application/json, text/event-stream"})
    assert answer.status_code == 401
    assert f'resource_metadata="{server_url}/.well-known/oauth-protected-resource/mcp"' in answer.headers["www-authenticate"]


def test_an_unknown_client_gets_a_400_page_and_no_redirect(browser):
    _, challenge = pkce_pair()
    answer = browser.get("/oauth/authorize", params=authorize_params("cl_nobody", challenge))
    assert answer.status_code == 400
    assert "location" not in answer.headers
    assert "invalid_client" in answer.text


def test_a_redirect_uri_that_does_not_match_exactly_gets_a_400_page(browser):
    client = register_client(browser)
    _, challenge = pkce_pair()
    params = authorize_params(client["client_id"], challenge, redirect_uri=REDIRECT_URI + "/extra")
    answer = browser.get("/oauth/authorize", params=params)
    assert answer.status_code == 400
    assert "location" not in answer.headers


@pytest.mark.parametrize("change", [{"code_challenge": ""}, {"code_challenge_method": "plain"}])
def test_pkce_other_than_s256_is_sent_back_as_invalid_request_with_iss(browser, tenant, server_url, change):
    client = register_client(browser)
    _, challenge = pkce_pair()
    consent_code(browser, authorize_params(client["client_id"], challenge), workspace_id=tenant["workspaceId"])
    params = {k: v for k, v in {**authorize_params(client["client_id"], challenge), **change}.items() if v}
    answer = browser.get("/oauth/authorize", params=params)
    assert answer.status_code == 302
    sent = query_of(answer.headers["location"])
    assert answer.headers["location"].startswith(REDIRECT_URI + "?")
    assert sent["error"] == "invalid_request"
    assert sent["state"] == "st-1"
    assert sent["iss"] == server_url


def test_a_resource_other_than_our_mcp_endpoint_is_invalid_target(browser, tenant):
    client = register_client(browser)
    _, challenge = pkce_pair()
    consent_code(browser, authorize_params(client["client_id"], challenge), workspace_id=tenant["workspaceId"])
    answer = browser.get("/oauth/authorize", params=authorize_params(client["client_id"], challenge,
                                                                      resource="https://elsewhere.example/mcp"))
    assert query_of(answer.headers["location"])["error"] == "invalid_target"


@pytest.mark.parametrize("change", [{"scope": "bogus"}, {"code_challenge_method": "plain"},
                                    {"resource": "https://elsewhere.example/mcp"}])
@pytest.mark.parametrize("signed_in", [True, False])
def test_errors_for_a_client_never_approved_are_a_page_not_a_redirect(browser, client, change, signed_in):
    # Anyone may register a client naming any https page as its redirect URI: a redirect there on an
    # error would make this server an open redirector for phishing links.
    phish = register_client(browser, redirect_uri="https://phish.example/login")
    _, challenge = pkce_pair()
    params = {**authorize_params(phish["client_id"], challenge, redirect_uri="https://phish.example/login"), **change}
    answer = (browser if signed_in else client).get("/oauth/authorize", params=params)
    assert answer.status_code == 400
    assert "location" not in answer.headers
    assert "cannot be used" in answer.text


def test_deny_sends_access_denied_back_with_state_and_iss(browser, tenant, server_url):
    client = register_client(browser)
    _, challenge = pkce_pair()
    location = consent_code(browser, authorize_params(client["client_id"], challenge),
                            workspace_id=tenant["workspaceId"], decision="deny")
    sent = query_of(location)
    assert (sent["error"], sent["state"], sent["iss"]) == ("access_denied", "st-1", server_url)


def test_a_code_works_once_and_its_replay_revokes_what_it_gave(browser, tenant):
    client = register_client(browser)
    verifier, challenge = pkce_pair()
    code = query_of(consent_code(browser, authorize_params(client["client_id"], challenge),
                                 workspace_id=tenant["workspaceId"]))["code"]
    exchange = {"grant_type": "authorization_code", "code": code, "redirect_uri": REDIRECT_URI,
                "client_id": client["client_id"], "code_verifier": verifier}
    first = browser.post("/oauth/token", data=exchange)
    assert first.status_code == 200
    assert call_tool_raw(browser, first.json()["access_token"], "list_workspaces").status_code == 200
    replay = browser.post("/oauth/token", data=exchange)
    assert replay.status_code == 400
    assert replay.json()["error"] == "invalid_grant"
    assert call_tool_raw(browser, first.json()["access_token"], "list_workspaces").status_code == 401


def test_a_wrong_code_verifier_is_refused(browser, tenant):
    client = register_client(browser)
    _, challenge = pkce_pair()
    code = query_of(consent_code(browser, authorize_params(client["client_id"], challenge),
                                 workspace_id=tenant["workspaceId"]))["code"]
    other_verifier, _ = pkce_pair()
    answer = browser.post("/oauth/token", data={"grant_type": "authorization_code", "code": code,
                                                "redirect_uri": REDIRECT_URI, "client_id": client["client_id"],
                                                "code_verifier": other_verifier})
    assert answer.status_code == 400
    assert answer.json()["error"] == "invalid_grant"


def test_refresh_rotates_and_a_reused_refresh_token_revokes_the_grant(browser, tenant):
    client, tokens = hand_made_tokens(browser, workspace_id=tenant["workspaceId"])
    refresh = {"grant_type": "refresh_token", "refresh_token": tokens["refresh_token"], "client_id": client["client_id"]}
    rotated = browser.post("/oauth/token", data=refresh)
    assert rotated.status_code == 200
    new = rotated.json()
    assert new["refresh_token"] != tokens["refresh_token"]
    assert call_tool_raw(browser, new["access_token"], "list_workspaces").status_code == 200

    reused = browser.post("/oauth/token", data=refresh)  # the old one again: a stolen copy
    assert reused.status_code == 400
    assert reused.json()["error"] == "invalid_grant"
    assert call_tool_raw(browser, new["access_token"], "list_workspaces").status_code == 401
    after = browser.post("/oauth/token", data={**refresh, "refresh_token": new["refresh_token"]})
    assert after.json()["error"] == "invalid_grant"


def test_codes_and_tokens_are_stored_only_as_hashes(browser, tenant):
    _, tokens = hand_made_tokens(browser, workspace_id=tenant["workspaceId"])
    with connection():
        stored = [(t.access_hash, t.refresh_hash) for t in OAuthToken.select()]
        codes = [c.code_hash for c in OAuthCode.select()]
    flat = {value for pair in stored for value in pair} | set(codes)
    assert tokens["access_token"] not in flat and tokens["refresh_token"] not in flat
    assert all(len(value) == 64 for value in flat if value)


def test_registration_without_an_auth_method_stores_and_echoes_the_default(client):
    answer = client.post("/oauth/register", json={"client_name": "x", "redirect_uris": [REDIRECT_URI]})
    assert answer.status_code == 201
    body = answer.json()
    assert body["token_endpoint_auth_method"] == "client_secret_basic"
    assert body["client_secret"]


def test_registration_without_redirect_uris_is_refused(client):
    answer = client.post("/oauth/register", json={"client_name": "x"})
    assert answer.status_code == 400
    assert answer.json()["error"] == "invalid_client_metadata"


def test_the_consent_page_escapes_a_hostile_client_name(browser):
    hostile = '<script>alert("owned")</script><img src=x onerror=alert(1)>'
    client = register_client(browser, name=hostile)
    _, challenge = pkce_pair()
    page = browser.get("/oauth/authorize", params=authorize_params(client["client_id"], challenge))
    assert page.status_code == 200
    assert "<script>alert" not in page.text
    assert "<img src=x" not in page.text
    assert "&lt;script&gt;alert(&#34;owned&#34;)&lt;/script&gt;" in page.text
    assert page.headers["x-frame-options"] == "DENY"


def test_signing_in_first_then_coming_back_to_the_consent_page(server_url, tenant):
    with connection():
        email = User.get_by_id(tenant["userId"]).email
    with httpx2.Client(base_url=server_url, timeout=30) as http:
        client = register_client(http)
        _, challenge = pkce_pair()
        first = http.get("/oauth/authorize", params=authorize_params(client["client_id"], challenge))
        assert first.status_code == 303
        assert first.headers["location"].startswith("/dashboard/login?next=%2Foauth%2Fauthorize")
        login = http.get(first.headers["location"])
        from tests.support.oauth_flow import hidden

        back = http.post("/dashboard/login", data={"email": email, "password": "correct horse",
                                                   "csrf_token": hidden(login.text, "csrf_token"),
                                                   "next": hidden(login.text, "next")})
        assert back.status_code == 303
        assert back.headers["location"].startswith("/oauth/authorize?")
        assert "Allow" in http.get(back.headers["location"]).text


@pytest.mark.parametrize("path", ["/oauth/token", "/oauth/revoke", "/oauth/authorize", "/dashboard/login"])
def test_a_form_over_64_kib_is_refused_as_too_large(client, path):
    answer = client.post(path, data={"grant_type": "authorization_code", "padding": "x" * 70_000})
    assert answer.status_code == 413
    assert answer.json() == {"error": "invalid_request", "error_description": "The form is larger than 64 KiB."}


def test_a_form_within_the_limit_still_reaches_the_token_endpoint(client):
    answer = client.post("/oauth/token", data={"grant_type": "authorization_code", "padding": "x" * 60_000})
    assert answer.status_code == 401  # read, and refused for what it says: no client authentication
    assert answer.json()["error"] == "invalid_client"


def test_a_form_sent_in_chunks_is_refused_once_it_passes_64_kib(client):
    chunks = iter([b"grant_type=authorization_code&padding=", *[b"x" * 8192] * 9])  # no Content-Length
    answer = client.post("/oauth/token", content=chunks,
                         headers={"content-type": "application/x-www-form-urlencoded"})
    assert answer.status_code == 413
    assert answer.json()["error"] == "invalid_request"
