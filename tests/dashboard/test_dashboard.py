"""Dashboard pages over HTTP: sign-in, CSRF on every form, API keys shown once, sign-out."""

from __future__ import annotations

import re

import httpx2
import pytest

from tests.conftest import bearer
from tests.support.oauth_flow import email_of, hidden

pytestmark = pytest.mark.shared_service


def test_a_wrong_password_does_not_sign_in(server_url, tenant):
    with httpx2.Client(base_url=server_url, timeout=30) as http:
        page = http.get("/dashboard/login")
        answer = http.post("/dashboard/login", data={"email": email_of(tenant["userId"]), "password": "wrong one",
                                                     "csrf_token": hidden(page.text, "csrf_token")})
        assert answer.status_code == 401
        assert "not right" in answer.text
        assert http.get("/dashboard").status_code == 303


def test_a_form_without_its_csrf_token_is_refused(server_url, tenant):
    with httpx2.Client(base_url=server_url, timeout=30) as http:
        http.get("/dashboard/login")
        answer = http.post("/dashboard/login", data={"email": email_of(tenant["userId"]), "password": "correct horse"})
        assert answer.status_code == 400
        assert http.get("/dashboard").status_code == 303


def test_the_session_cookie_is_httponly_and_samesite_lax(server_url):
    with httpx2.Client(base_url=server_url, timeout=30) as http:
        cookie = http.get("/dashboard/login").headers["set-cookie"].lower()
    assert "httponly" in cookie
    assert "samesite=lax" in cookie


def test_a_login_next_that_leaves_the_site_goes_to_the_dashboard(server_url, tenant):
    with httpx2.Client(base_url=server_url, timeout=30) as http:
        page = http.get("/dashboard/login", params={"next": "//evil.example/x"})
        answer = http.post("/dashboard/login", data={"email": email_of(tenant["userId"]), "password": "correct horse",
                                                     "csrf_token": hidden(page.text, "csrf_token"),
                                                     "next": hidden(page.text, "next")})
        assert answer.headers["location"] == "/dashboard"


def test_workspaces_page_lists_profiles_by_name(browser, client, tenant):
    page = browser.get("/dashboard")
    assert page.status_code == 200
    (profile,) = client.get("/v1/profiles", headers=bearer(tenant["apiKey"])).json()["data"]
    assert f'<li class="badge">{profile["name"]}</li>' in page.text
    assert tenant["profileId"] not in page.text  # named, never by its id


def test_an_api_key_is_shown_once_and_revoking_it_ends_it(browser, client, tenant):
    page = browser.get("/dashboard/api-keys")
    created = browser.post("/dashboard/api-keys", data={"csrf_token": hidden(page.text, "csrf_token"),
                                                        "workspaceId": tenant["workspaceId"], "name": "<b>CI</b>",
                                                        "permission": "read"})
    assert created.status_code == 200
    key = re.search(r'id="new-key">(sk_[0-9a-f]{64})<', created.text).group(1)
    assert "&lt;b&gt;CI&lt;/b&gt;" in created.text
    assert client.get("/v1/workspaces", headers=bearer(key)).status_code == 200
    listing = browser.get("/dashboard/api-keys")
    assert key not in listing.text
    assert key[:11] in listing.text
    key_id = re.findall(r'href="/dashboard/api-keys/(key_[^/]+)/revoke', listing.text)[0]
    confirmation = browser.get(f"/dashboard/api-keys/{key_id}/revoke")
    assert "Revoke the key &lt;b&gt;CI&lt;/b&gt;?" in confirmation.text
    assert client.get("/v1/workspaces", headers=bearer(key)).status_code == 200  # asking is not revoking
    revoked = browser.post(f"/dashboard/api-keys/{key_id}/revoke", data={
        "csrf_token": hidden(confirmation.text, "csrf_token"), "workspaceId": tenant["workspaceId"]})
    assert revoked.status_code == 303
    assert client.get("/v1/workspaces", headers=bearer(key)).status_code == 401


def test_keys_of_another_workspace_cannot_be_created_or_revoked(browser, other_tenant):
    page = browser.get("/dashboard/api-keys")
    answer = browser.post("/dashboard/api-keys", data={"csrf_token": hidden(page.text, "csrf_token"),
                                                       "workspaceId": other_tenant["workspaceId"], "name": "x"})
    assert answer.status_code == 404


def test_the_webhooks_page_lists_endpoints_and_their_delivery_log(browser, client, tenant):
    made = client.post("/v1/webhooks", headers=bearer(tenant["apiKey"]),
                       json={"url": "https://localhost:9/in", "description": "<b>crm</b>"}).json()
    client.post(f"/v1/webhooks/{made['id']}/test", headers=bearer(tenant["apiKey"]))
    page = browser.get("/dashboard/webhooks")
    assert page.status_code == 200
    assert "https://localhost:9/in" in page.text
    assert "&lt;b&gt;crm&lt;/b&gt;" in page.text  # escaped
    log = browser.get(f"/dashboard/webhooks/{made['id']}")
    assert log.status_code == 200
    assert "webhook.test" in log.text
    assert made["secret"] not in log.text


def test_sign_out_ends_the_session(browser):
    page = browser.get("/dashboard")
    answer = browser.post("/dashboard/logout", data={"csrf_token": hidden(page.text, "csrf_token")})
    assert answer.status_code == 303
    assert browser.get("/dashboard").status_code == 303


def test_a_reply_form_sent_twice_sends_one_message(browser, client, tenant):
    from tests.support.sandbox import connect_account

    bot = connect_account(client, tenant, "telegram")
    client.post("/sandbox/telegram/inbound-message",
                json={"accountId": bot["id"], "from": {"id": "77", "name": "Bo"}, "text": "hi"})
    (conversation,) = client.get("/v1/conversations", headers=bearer(tenant["apiKey"])).json()["data"]
    page = browser.get(f"/dashboard/inbox/{conversation['id']}")
    form = {"csrf_token": hidden(page.text, "csrf_token"), "workspaceId": tenant["workspaceId"],
            "idempotencyKey": hidden(page.text, "idempotencyKey"), "text": "only once"}
    first = browser.post(f"/dashboard/inbox/{conversation['id']}/reply", data=form)
    again = browser.post(f"/dashboard/inbox/{conversation['id']}/reply", data=form)  # a double click
    assert (first.status_code, again.status_code) == (303, 303)
    assert "sent already" in browser.get(again.headers["location"]).text
    sent = client.get("/sandbox/telegram/sent", params={"accountId": bot["id"]}).json()["data"]
    assert [row.get("text") for row in sent if row["kind"] == "dm"] == ["only once"]
    messages = client.get(f"/v1/conversations/{conversation['id']}/messages",
                          headers=bearer(tenant["apiKey"])).json()["data"]
    assert [m["text"] for m in messages if m["direction"] == "outbound"] == ["only once"]


@pytest.mark.parametrize(("method", "path", "fields", "status"), [
    ("GET", "/dashboard/inbox?page=abc", {}, 422),
    ("GET", "/dashboard/inbox?page=0", {}, 422),
    ("GET", "/dashboard/inbox?platform=myspace", {}, 422),
    ("GET", "/dashboard/inbox?account=%00", {}, 422),
    ("GET", "/dashboard/inbox/conv_nope", {}, 404),
    ("POST", "/dashboard/webhooks", {"url": "not a url"}, 422),
    ("POST", "/dashboard/webhooks", {"url": "https://localhost:9/x", "events": "no.such.event"}, 422),
    ("POST", "/dashboard/api-keys", {"name": "k", "expiresInDays": "ninety"}, 422),
    ("POST", "/dashboard/api-keys", {"name": "k", "expiresInDays": "99999999999"}, 422),
    ("POST", "/dashboard/api-keys", {"name": "k", "scope": "profiles"}, 422),
    ("POST", "/dashboard/api-keys", {"name": "k\x00"}, 422),
    ("POST", "/dashboard/profiles", {"name": "x" * 500}, 422),
    ("POST", "/dashboard/accounts/connect/telegram", {"botToken": "nope"}, 422),
    ("POST", "/dashboard/accounts/connect/whatsapp", {"phoneNumberId": "1", "wabaId": "2"}, 422),
    ("POST", "/dashboard/accounts/connect/myspace", {}, 404),
    ("POST", "/dashboard/webhooks/deliveries/whd_nope/redeliver", {}, 404),
])
def test_bad_input_is_a_clear_page_never_a_500(browser, tenant, method, path, fields, status):
    page = browser.get("/dashboard/accounts")
    data = {"csrf_token": hidden(page.text, "csrf_token"), "workspaceId": tenant["workspaceId"],
            "profileId": tenant["profileId"], **fields}
    answer = browser.get(path) if method == "GET" else browser.post(path, data=data)
    assert answer.status_code == status, answer.text
    assert answer.headers["content-type"].startswith("text/html")
    assert "Traceback" not in answer.text and "Error(" not in answer.text
