"""Client ID Metadata Documents: a client id that is an https URL is fetched, through the SSRF guard."""

from __future__ import annotations

import contextlib
import secrets
from collections.abc import Iterator
from dataclasses import replace
from urllib.parse import urlsplit

import httpx2
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from storage.db import connection
from storage.models import User
from switchboard.app import create_app
from tests.support.live_server import live_server
from tests.support.oauth_flow import REDIRECT_URI, authorize_params, browser_sign_in, pkce_pair, register_client
from tests.support.webhook_receiver import make_tls


@contextlib.contextmanager
def metadata_host(tls) -> Iterator[str]:
    """An https host serving one client's metadata document; yields the document's URL."""
    url_box: list[str] = []

    async def document(request: Request) -> JSONResponse:
        return JSONResponse({"client_id": url_box[0], "client_name": "Doc <Client>",
                             "redirect_uris": [REDIRECT_URI], "token_endpoint_auth_method": "none"})

    # A path of its own: the service caches documents by URL, and a later test's host may be given
    # the same port as an earlier one's.
    path = f"/client-{secrets.token_hex(4)}.json"
    app = Starlette(routes=[Route(path, document)])
    with live_server(app, ssl_certfile=tls.cert_path) as base:
        url_box.append(base.replace("http://127.0.0.1", "https://localhost") + path)
        yield url_box[0]


@contextlib.contextmanager
def _signed_in(url: str, tenant) -> Iterator[httpx2.Client]:
    with connection():
        email = User.get_by_id(tenant["userId"]).email
    with httpx2.Client(base_url=url, timeout=30) as http:
        browser_sign_in(http, email, "correct horse")
        yield http


def test_a_metadata_document_client_gets_the_consent_page(service, tenant, tmp_path):
    tls = make_tls(tmp_path)
    settings = replace(service, webhook_ca_bundle=tls.ca_path, webhook_allow_private=True)
    port = int(settings.base_url.rsplit(":", 1)[1])
    with metadata_host(tls) as client_id, live_server(create_app(settings, worker=False), port=port) as url, \
         _signed_in(url, tenant) as browser:
        _, challenge = pkce_pair()
        page = browser.get("/oauth/authorize", params=authorize_params(client_id, challenge))
        assert page.status_code == 200, page.text
        assert "Doc &lt;Client&gt;" in page.text  # the document's name, escaped
        assert "Doc <Client>" not in page.text
        # Treated as a self-registered client is: the name is the client's own word, and the page
        # says so, with the host that publishes the document (the client id's).
        assert f'<strong class="client-host">{urlsplit(client_id).netloc}</strong>' in page.text
        assert "Switchboard has not verified this application" in page.text
        assert "<strong>127.0.0.1:9</strong>" in page.text  # where it is sent back to


def test_a_self_registered_client_is_marked_unverified_too(browser, tenant):
    client = register_client(browser, name="Some Assistant")
    _, challenge = pkce_pair()
    page = browser.get("/oauth/authorize", params=authorize_params(client["client_id"], challenge))
    assert page.status_code == 200, page.text
    assert "Switchboard has not verified this application" in page.text
    assert 'class="client-host"' not in page.text


def test_a_metadata_document_on_a_private_address_is_refused_without_a_redirect(service, tenant, tmp_path):
    tls = make_tls(tmp_path)
    settings = replace(service, webhook_ca_bundle=tls.ca_path, webhook_allow_private=False)
    port = int(settings.base_url.rsplit(":", 1)[1])
    with metadata_host(tls) as client_id, live_server(create_app(settings, worker=False), port=port) as url, \
         _signed_in(url, tenant) as browser:
        _, challenge = pkce_pair()
        answer = browser.get("/oauth/authorize", params=authorize_params(client_id, challenge))
    assert answer.status_code == 400
    assert "location" not in answer.headers
