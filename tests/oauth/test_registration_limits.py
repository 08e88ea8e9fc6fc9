"""Open dynamic client registration (RFC 7591): what a stranger may register, and how much."""

import pytest

from storage.db import connection
from storage.models import OAuthClient

pytestmark = pytest.mark.shared_service


GOOD = "https://app.example/cb"


@pytest.fixture
def registered(live):
    """How many clients this test has registered so far."""
    before = _clients()
    return lambda: _clients() - before


def _clients() -> int:
    with connection():
        return OAuthClient.select().count()


def _refused(client, body=None, *, content=None):
    answer = (client.post("/oauth/register", json=body) if content is None
              else client.post("/oauth/register", content=content, headers={"Content-Type": "application/json"}))
    assert answer.status_code == 400, (str(body)[:120], answer.status_code, answer.text[:300])
    assert answer.json()["error"] == "invalid_client_metadata"
    return answer


def test_fields_of_the_wrong_type_are_400_invalid_client_metadata(client, registered):
    for body in (
        {"redirect_uris": [123]},
        {"redirect_uris": [None]},
        {"redirect_uris": [{}]},
        {"redirect_uris": [[GOOD]]},
        {"redirect_uris": GOOD},
        {"redirect_uris": [GOOD], "scope": ["read", "write"]},
        {"redirect_uris": [GOOD], "client_name": 7},
        {"redirect_uris": [GOOD], "grant_types": "authorization_code"},
        {"redirect_uris": [GOOD], "response_types": [1]},
        {"redirect_uris": [GOOD], "token_endpoint_auth_method": ["none"]},
        {"redirect_uris": [GOOD], "contacts": [{"a": 1}]},
    ):
        _refused(client, body)
    assert registered() == 0


def test_only_https_or_http_on_a_loopback_host_may_be_a_redirect_uri(client, registered):
    for uri in ("http://evil.example/cb", "", "javascript:alert(1)", "ftp://app.example/cb", "https:///cb",
                "//app.example/cb", "/cb", "https://app.example/cb#frag", "https://app.example/c b",
                "https://app.example/cb\t", "http://127.0.0.2.evil.example/cb", "http://localhost.evil.example/cb"):
        _refused(client, {"redirect_uris": [uri]})
    assert registered() == 0
    for uri in ("https://app.example/cb", "http://127.0.0.1:33418/callback", "http://[::1]:8080/cb",
                "http://localhost/cb"):
        answer = client.post("/oauth/register", json={"redirect_uris": [uri], "token_endpoint_auth_method": "none"})
        assert answer.status_code == 201, (uri, answer.text)
        assert answer.json()["redirect_uris"] == [uri]
    assert registered() == 4


def test_the_body_and_each_field_are_capped(client, registered):
    _refused(client, {"redirect_uris": [GOOD], "client_name": "n" * 201})
    _refused(client, {"redirect_uris": [f"{GOOD}/{i}" for i in range(11)]})
    _refused(client, {"redirect_uris": [f"{GOOD}/{i}" for i in range(50_000)]})
    _refused(client, content=b'{"redirect_uris": ["' + GOOD.encode() + b'"], "client_name": "' + b"n" * 2_000_000 + b'"}')
    _refused(client, content=b'{"redirect_uris": ["' + GOOD.encode() + b'"], "x": "' + b"y" * (64 * 1024) + b'"}')
    assert registered() == 0
    ok = client.post("/oauth/register", json={"redirect_uris": [f"{GOOD}/{i}" for i in range(10)],
                                              "client_name": "n" * 200})
    assert ok.status_code == 201
    assert ok.json()["client_name"] == "n" * 200
