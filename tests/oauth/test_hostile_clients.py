"""What an anonymous caller can do through the OAuth endpoints with a client id of its choosing:
slow or silent metadata documents, client ids that are not URLs, documents that break the
registration rules. Never a stall of the service's writes, never a 500, never an open redirect."""

from __future__ import annotations

import contextlib
import secrets
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from typing import Any

import httpx2
import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from kit import clock
from switchboard.app import create_app
from tests.conftest import bearer
from tests.support.live_server import live_server
from tests.support.oauth_flow import (
    REDIRECT_URI,
    authorize_params,
    browser_sign_in,
    consent_code,
    email_of,
    hidden,
    pkce_pair,
    register_client,
)
from tests.support.slow_peers import silent_peer
from tests.support.webhook_receiver import make_tls, wait_for

BAD_CLIENT_IDS = ["https://%ED%A0%80/x", "https://a%00b/x", "https://[::1/x", "https://[::1]:99999/x",
                  "https://exa mple.com/x", "https://\u0430pple.com/x", "http://[", "https:///x"]


def test_silent_metadata_documents_do_not_stall_a_concurrent_write(client, tenant, server_url):
    # Six anonymous requests naming documents on a peer that never answers: each waits for the
    # fetch's timeout. None of them may hold storage meanwhile, so a key's write goes through.
    with silent_peer() as (port, accepted):
        ids = [f"https://127.0.0.1:{port}/c{i}-{secrets.token_hex(3)}" for i in range(6)]

        def anonymous(index: int) -> int:
            with httpx2.Client(base_url=server_url, timeout=60) as http:
                _, challenge = pkce_pair()
                if index % 2:
                    return http.post("/oauth/token", data={
                        "grant_type": "authorization_code", "code": "x", "client_id": ids[index],
                        "redirect_uri": REDIRECT_URI, "code_verifier": "v" * 43}).status_code
                return http.get("/oauth/authorize", params=authorize_params(ids[index], challenge)).status_code

        with ThreadPoolExecutor(6) as pool:
            slow = [pool.submit(anonymous, i) for i in range(6)]
            wait_for(lambda: len(accepted) >= 6, timeout=20)  # every request now waits on the peer
            write = client.patch(f"/v1/profiles/{tenant['profileId']}", headers=bearer(tenant["apiKey"]),
                                 json={"name": "Renamed while others wait"}, timeout=4)
            assert write.status_code == 200, write.text
            made = client.post("/v1/profiles", headers=bearer(tenant["apiKey"]), json={"name": "New"}, timeout=4)
            assert made.status_code == 201, made.text
            assert not any(future.done() for future in slow)  # the writes did not wait for the slow peer
            statuses = [future.result() for future in slow]
    assert all(400 <= status < 500 for status in statuses), statuses


@pytest.mark.parametrize("client_id", BAD_CLIENT_IDS)
def test_a_client_id_that_is_no_url_is_a_4xx_everywhere(client, client_id):
    _, challenge = pkce_pair()
    page = client.get("/oauth/authorize", params=authorize_params(client_id, challenge))
    assert page.status_code == 400, page.text
    assert "location" not in page.headers
    token = client.post("/oauth/token", data={"grant_type": "authorization_code", "code": "x",
                                              "client_id": client_id, "code_verifier": "v" * 43})
    assert token.status_code in (400, 401), token.text
    assert token.json()["error"] == "invalid_client"
    revoke = client.post("/oauth/revoke", data={"token": "x", "client_id": client_id})
    assert revoke.status_code in (400, 401), revoke.text
    basic = client.post("/oauth/token", data={"grant_type": "authorization_code", "code": "x"},
                        auth=(client_id, "secret"))
    assert basic.status_code in (400, 401), basic.text


# -- metadata documents that break the registration rules --------------------------------------------

BROKEN_DOCUMENTS: list[tuple[dict[str, Any], str]] = [
    ({"grant_types": 5}, "grant_types must be an array of strings"),
    ({"response_types": 7}, "response_types must be an array of strings"),
    ({"redirect_uris": ["http://evil.example/cb"]}, "https URL, or http on a loopback host"),
    ({"redirect_uris": ["javascript:alert(1)"]}, "https URL, or http on a loopback host"),
    ({"redirect_uris": "https://one.example/cb"}, "redirect_uris must be an array of strings"),
    ({"client_name": ["a"]}, "client_name must be a string"),
    ({"scope": {"read": True}}, "scope must be a string"),
]


@contextlib.contextmanager
def documents_host(tls: Any, documents: dict[str, dict[str, Any]]) -> Iterator[str]:
    """An https host serving `documents` by path (each names its own URL as client_id); its base URL."""
    base_box: list[str] = []

    async def document(request: Request) -> JSONResponse:
        return JSONResponse({"client_id": base_box[0] + request.url.path, "client_name": "Doc",
                             "redirect_uris": [REDIRECT_URI], "token_endpoint_auth_method": "none",
                             **documents[request.url.path]})

    app = Starlette(routes=[Route("/{name}", document)])
    with live_server(app, ssl_certfile=tls.cert_path) as base:
        base_box.append(base.replace("http://127.0.0.1", "https://localhost"))
        yield base_box[0]


@pytest.fixture
def hostile_documents(service, tenant, tmp_path) -> Iterator[tuple[httpx2.Client, str, list[str]]]:
    tls = make_tls(tmp_path)
    settings = replace(service, webhook_ca_bundle=tls.ca_path, webhook_allow_private=True)
    port = int(settings.base_url.rsplit(":", 1)[1])
    paths = {f"/doc-{index}-{secrets.token_hex(3)}": change for index, (change, _) in enumerate(BROKEN_DOCUMENTS)}
    with documents_host(tls, paths) as host, live_server(create_app(settings, worker=False), port=port) as url, \
         httpx2.Client(base_url=url, timeout=30) as browser:
        browser_sign_in(browser, email_of(tenant["userId"]), "correct horse")
        yield browser, host, list(paths)


def test_a_metadata_document_obeys_the_registration_rules(hostile_documents):
    browser, host, paths = hostile_documents
    for path, (_, why) in zip(paths, BROKEN_DOCUMENTS, strict=True):
        _, challenge = pkce_pair()
        params = authorize_params(host + path, challenge, redirect_uri="http://evil.example/cb", scope="bogus")
        page = browser.get("/oauth/authorize", params=params)
        assert page.status_code == 400, (path, page.text)
        assert "location" not in page.headers
        assert why in page.text, (why, page.text)
        token = browser.post("/oauth/token", data={"grant_type": "authorization_code", "code": "x",
                                                   "client_id": host + path, "code_verifier": "v" * 43})
        assert token.status_code in (400, 401)
        assert token.json()["error"] == "invalid_client"


# -- dashboard sign-in ---------------------------------------------------------------------------


def _sign_in(http: httpx2.Client, email: str, password: str) -> httpx2.Response:
    page = http.get("/dashboard/login")
    return http.post("/dashboard/login", data={"csrf_token": hidden(page.text, "csrf_token"), "email": email,
                                               "password": password, "next": "/dashboard"})


def test_failed_sign_ins_are_limited_per_email_and_address_for_15_minutes(server_url, tenant):
    email = email_of(tenant["userId"])
    with httpx2.Client(base_url=server_url, timeout=30) as http:
        for _ in range(10):
            assert _sign_in(http, email, "not the password").status_code == 401
        blocked = _sign_in(http, email, "correct horse")  # the right one too: guessing must stop
        assert blocked.status_code == 429
        assert 1 <= int(blocked.headers["retry-after"]) <= 15 * 60
        assert "Too many failed sign-ins" in blocked.text
        other = _sign_in(http, "someone-else@example.com", "whatever password")  # the same address
        assert other.status_code == 429
        clock.advance(int(blocked.headers["retry-after"]) + 1)
        signed_in = _sign_in(http, email, "correct horse")  # the window is over: the person is back
        assert signed_in.status_code == 303, signed_in.text
        assert signed_in.headers["location"] == "/dashboard"


@pytest.mark.parametrize("resource", ["https://[::1/mcp", "https://%ED%A0%80/mcp", "http://[", "\x7f"])
def test_a_resource_that_is_no_url_is_invalid_target_not_a_500(browser, tenant, client, resource):
    registered = register_client(browser)
    _, challenge = pkce_pair()
    consent_code(browser, authorize_params(registered["client_id"], challenge), workspace_id=tenant["workspaceId"])
    answer = browser.get("/oauth/authorize", params=authorize_params(registered["client_id"], challenge,
                                                                      resource=resource))
    assert answer.status_code in (302, 400), answer.text
    token = client.post("/oauth/token", data={"grant_type": "refresh_token", "refresh_token": "x",
                                              "client_id": registered["client_id"], "resource": resource})
    assert token.status_code == 400, token.text
