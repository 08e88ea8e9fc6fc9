"""Dashboard sign-in through an external OpenID Connect provider that the test runs."""

from __future__ import annotations

from dataclasses import replace

import httpx2
import pytest

from storage.db import connection
from storage.models import User
from switchboard.app import create_app
from tests.support.live_server import free_port, live_server
from tests.support.oauth_flow import email_of
from tests.support.oidc_provider import Provider


@pytest.fixture
def idp():
    provider = Provider()
    port = free_port()
    provider.issuer = f"http://127.0.0.1:{port}"
    with live_server(provider.app(), port=port):
        yield provider


@pytest.fixture
def oidc_server(service, idp):
    settings = replace(service, oidc_issuer=idp.issuer, oidc_client_id=idp.client_id,
                       oidc_client_secret=idp.client_secret)
    port = int(settings.base_url.rsplit(":", 1)[1])
    with live_server(create_app(settings, worker=False), port=port) as url:
        yield url


def sign_in_via_idp(url: str) -> httpx2.Response:
    with httpx2.Client(base_url=url, timeout=30, follow_redirects=True) as http:
        assert "identity provider" in http.get("/dashboard/login").text
        answer = http.get("/dashboard/login/oidc")
        answer.home = http.get("/dashboard")  # type: ignore[attr-defined]
        return answer


def test_a_verified_email_of_an_existing_user_signs_in_and_links(oidc_server, idp, tenant):
    idp.person = {"sub": "alice-1", "email": email_of(tenant["userId"]).upper(), "email_verified": True}
    answer = sign_in_via_idp(oidc_server)
    assert answer.status_code == 200
    assert answer.url.path == "/dashboard"
    assert tenant["workspaceId"] in answer.text
    assert idp.token_requests[0]["code_verifier"]  # PKCE was used
    with connection():
        users = list(User.select())
        assert [u.oidc_subject for u in users if u.id == tenant["userId"]] == [f"{idp.issuer}#alice-1"]
        assert len(users) == 1  # linked, never a second user

    idp.person = {"sub": "alice-1", "email": "changed@example.com", "email_verified": False}
    again = sign_in_via_idp(oidc_server)
    assert again.url.path == "/dashboard"  # the subject, once linked, is what counts


def test_an_unverified_or_unknown_email_is_refused(oidc_server, idp, tenant):
    idp.person = {"sub": "mallory", "email": email_of(tenant["userId"]), "email_verified": False}
    assert sign_in_via_idp(oidc_server).status_code == 403
    idp.person = {"sub": "stranger", "email": "stranger@example.com", "email_verified": True}
    assert sign_in_via_idp(oidc_server).status_code == 403
    with connection():
        assert User.select().count() == 1
