"""Sign-in through the real `oidc-provider` (the OpenID-certified Node implementation) with its
default settings: it gives `email` and `email_verified` from its userinfo endpoint, not in the
id_token, as OpenID Connect Core §5.4 has it. An invitation is accepted through it; refusals are
logged with their reason; a provider that is down is a page that says so."""

from __future__ import annotations

import logging
from dataclasses import replace

import httpx2
import pytest

from service.identity import invitations
from storage.db import connection
from storage.models import Membership, User
from switchboard.app import create_app
from tests.conftest import bearer
from tests.support.live_server import live_server
from tests.support.oauth_flow import email_of
from tests.support.oidc_node import node_provider, sign_in_at_provider


@pytest.fixture
def provider(service):
    with node_provider(service.base_url + "/dashboard/login/oidc/callback") as running:
        yield running


@pytest.fixture
def oidc_server(service, provider):
    settings = replace(service, oidc_issuer=provider.issuer, oidc_client_id=provider.client_id,
                       oidc_client_secret=provider.client_secret, oidc_name="Acme ID")
    port = int(settings.base_url.rsplit(":", 1)[1])
    with live_server(create_app(settings, worker=False), port=port) as url:
        yield url


def _sign_in(url: str, login: str, path: str = "/dashboard/login/oidc") -> httpx2.Response:
    """The service's last answer (its page read before the browser closes)."""
    with httpx2.Client(base_url=url, timeout=30, follow_redirects=True) as http:
        assert "Sign in with Acme ID" in http.get("/dashboard/login").text
        answer = sign_in_at_provider(http, http.get(path), login)
        answer.read()
        return answer


def test_an_owner_signs_in_with_claims_from_the_userinfo_endpoint(oidc_server, tenant):
    answer = _sign_in(oidc_server, email_of(tenant["userId"]))
    assert answer.status_code == 200 and answer.url.path == "/dashboard"
    assert tenant["workspaceId"] in answer.text
    with connection():
        assert User.get_by_id(tenant["userId"]).oidc_subject is not None
        assert User.select().count() == 1


def test_refusals_are_logged_with_their_reason_and_nothing_secret(oidc_server, tenant, caplog):
    caplog.set_level(logging.INFO, logger="switchboard.oidc")
    unverified = _sign_in(oidc_server, "unverified." + email_of(tenant["userId"]))
    stranger = _sign_in(oidc_server, "stranger@example.com")
    assert (unverified.status_code, stranger.status_code) == (403, 403)
    reasons = [record.getMessage() for record in caplog.records if record.name == "switchboard.oidc"]
    assert reasons == ["OIDC sign-in refused: the identity provider has not verified the e-mail address",
                       "OIDC sign-in refused: no user has that e-mail address and no invitation for it was presented"]
    assert not any("@" in reason for reason in reasons)


def test_an_invitation_is_accepted_through_the_provider(oidc_server, tenant):
    made = httpx2.post(f"{oidc_server}/v1/invitations", json={"email": "newcomer@example.com", "role": "viewer"},
                       headers=bearer(tenant["apiKey"]), timeout=30)
    assert made.status_code == 201
    token = made.json()["url"].rsplit("/", 1)[1]
    answer = _sign_in(oidc_server, "newcomer@example.com", f"/dashboard/login/oidc?invitation={token}")
    assert answer.status_code == 200
    assert tenant["workspaceId"] in str(answer.url)
    with connection():
        user = User.get(User.email == "newcomer@example.com")
        assert Membership.get(Membership.user == user.id, Membership.workspace == tenant["workspaceId"]).role == \
            "viewer"
        assert invitations.invited_email(token) is None  # spent


def test_a_provider_that_is_down_is_a_page_that_says_so_at_the_start_and_at_the_callback(service, tenant):
    from urllib.parse import parse_qs, urlsplit

    port = int(service.base_url.rsplit(":", 1)[1])
    with node_provider(service.base_url + "/dashboard/login/oidc/callback") as running:
        settings = replace(service, oidc_issuer=running.issuer, oidc_client_id=running.client_id,
                           oidc_client_secret=running.client_secret, oidc_name="Acme ID")
        app = create_app(settings, worker=False)
        with live_server(app, port=port) as url, httpx2.Client(base_url=url, timeout=30) as http:
            went = http.get("/dashboard/login/oidc")  # the provider answers: off to its login page
            assert went.status_code == 302
            state = parse_qs(urlsplit(went.headers["location"]).query)["state"][0]
            running.stop()  # the provider goes down while the person is signing in there
            callback = http.get("/dashboard/login/oidc/callback", params={"code": "a-code", "state": state})
            assert callback.status_code == 502 and "text/html" in callback.headers["content-type"]
            assert "Acme ID cannot be reached" in callback.text
    with live_server(create_app(settings, worker=False), port=port) as url, \
            httpx2.Client(base_url=url, timeout=30) as http:
        start = http.get("/dashboard/login/oidc")  # a fresh process: not even its discovery answers
        assert start.status_code == 502 and "Acme ID cannot be reached" in start.text
