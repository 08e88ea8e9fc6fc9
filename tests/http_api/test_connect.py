"""Connecting accounts through the sandbox, end to end over HTTP."""

import json
import subprocess

import pytest

from platforms.base import PLATFORMS
from storage.db import connection
from storage.models import Account, Event
from tests.conftest import bearer
from tests.support.processes import service_env, switchboard
from tests.support.sandbox import connect_account

pytestmark = pytest.mark.shared_service


OAUTH = ["instagram", "facebook", "meta_ads", "tiktok", "youtube", "x", "linkedin"]


@pytest.mark.parametrize("platform", PLATFORMS)
def test_every_platform_connects_and_shows_in_accounts(client, tenant, platform):
    account = connect_account(client, tenant, platform)
    assert account["platform"] == platform
    assert account["status"] == "connected"
    assert account["profileId"] == tenant["profileId"]
    listed = client.get("/v1/accounts", headers=bearer(tenant["apiKey"]), params={"platform": platform}).json()
    assert [a["id"] for a in listed["data"]] == [account["id"]]
    assert listed["data"][0]["capabilities"]  # capabilities come from the adapter, as data
    with connection():
        types = [e.type for e in Event.select().where(Event.workspace == tenant["workspaceId"])]
        stored = bytes(Account.get_by_id(account["id"]).credentials)
    assert types == ["account.connected"]
    assert b"accessToken" not in stored and b"botToken" not in stored  # encrypted at rest


def test_oauth_state_is_single_use_and_signed(client, tenant):
    h = bearer(tenant["apiKey"])
    start = client.get("/v1/connect/instagram", headers=h, params={"profileId": tenant["profileId"]}).json()
    consent = client.get(start["authUrl"])
    callback_url = consent.headers["location"]
    first = client.get(callback_url)
    assert first.status_code == 200
    again = client.get(callback_url)
    assert again.status_code == 400
    assert again.json()["error"]["code"] == "bad_request"
    forged = client.get("/v1/connect/instagram/callback", params={"code": "x", "state": start["state"] + "x"})
    assert forged.status_code == 400
    other_platform = client.get("/v1/connect/tiktok/callback", params={"code": "x", "state": start["state"]})
    assert other_platform.status_code == 400
    assert client.get("/v1/accounts", headers=h).json()["pagination"]["total"] == 1


def test_callback_redirects_to_the_callers_url_with_the_account_id(client, tenant):
    start = client.get("/v1/connect/youtube", headers=bearer(tenant["apiKey"]),
                       params={"profileId": tenant["profileId"], "redirectUrl": "https://app.example.com/done?x=1"}).json()
    callback = client.get(client.get(start["authUrl"]).headers["location"])
    assert callback.status_code == 303
    assert callback.headers["location"].startswith("https://app.example.com/done?x=1&accountId=acc_")


def test_connect_validation(client, tenant, other_tenant):
    h = bearer(tenant["apiKey"])
    assert client.get("/v1/connect/telegram", headers=h, params={"profileId": tenant["profileId"]}).status_code == 422
    assert client.get("/v1/connect/instagram", headers=h).status_code == 422
    assert client.get("/v1/connect/instagram", headers=h,
                      params={"profileId": other_tenant["profileId"]}).status_code == 404
    assert client.get("/v1/connect/instagram", headers=h, params={"profileId": tenant["profileId"],
                                                                  "redirectUrl": "javascript:alert(1)"}).status_code == 422
    bad_token = client.post("/v1/connect/telegram", headers=h,
                            json={"profileId": tenant["profileId"], "botToken": "123456:not-a-real-token-at-all-xx"})
    assert bad_token.status_code == 422
    assert bad_token.json()["error"]["details"][0]["field"] == "botToken"
    assert "not-a-real-token" not in bad_token.text
    assert client.get("/v1/accounts", headers=h).json()["pagination"]["total"] == 0


def test_read_key_cannot_connect(client, tenant):
    from tests.support.factories import add_key

    read = add_key(tenant["workspaceId"], permission="read")
    answer = client.get("/v1/connect/instagram", headers=bearer(read), params={"profileId": tenant["profileId"]})
    assert answer.status_code == 403


def test_subscribe_webhooks_reapplies_the_field_list(client, tenant):
    h = bearer(tenant["apiKey"])
    page = connect_account(client, tenant, "facebook")
    answer = client.post(f"/v1/connect/facebook/{page['id']}/subscribe-webhooks", headers=h)
    assert answer.status_code == 200
    body = answer.json()
    assert body["accountId"] == page["id"] and body["subscribed"] is True
    assert {"messages", "messaging_postbacks", "message_echoes", "feed"} <= set(body["fields"])
    wrong = client.post(f"/v1/connect/instagram/{page['id']}/subscribe-webhooks", headers=h)
    assert wrong.status_code == 422
    wa = connect_account(client, tenant, "whatsapp")
    assert client.post(f"/v1/connect/whatsapp/{wa['id']}/subscribe-webhooks", headers=h).status_code == 200


def test_publish_options_are_live_for_tiktok_and_static_elsewhere(client, tenant):
    h = bearer(tenant["apiKey"])
    tiktok = connect_account(client, tenant, "tiktok")
    options = client.get(f"/v1/accounts/{tiktok['id']}/publish-options", headers=h).json()
    assert options["platform"] == "tiktok"
    assert {"nickname", "username", "avatarUrl", "privacyLevels", "commentDisabled", "duetDisabled",
            "stitchDisabled", "maxVideoDurationSec"} <= set(options)
    assert options["privacyLevels"]
    x = connect_account(client, tenant, "x")
    assert client.get(f"/v1/accounts/{x['id']}/publish-options", headers=h).json()["platform"] == "x"


def test_ig_conversations_are_fetched_live_and_only_for_instagram(client, tenant):
    h = bearer(tenant["apiKey"])
    ig = connect_account(client, tenant, "instagram")
    client.post("/sandbox/instagram/inbound-message", json={
        "accountId": ig["id"], "from": {"id": "igsid-1", "handle": "ana", "name": "Ana"}, "text": "hi"})
    answer = client.get(f"/v1/accounts/{ig['id']}/ig-conversations", headers=h)
    assert answer.status_code == 200
    participants = {p["id"] for c in answer.json()["data"] for p in c["participants"]}
    assert "igsid-1" in participants
    tg = connect_account(client, tenant, "telegram")
    assert client.get(f"/v1/accounts/{tg['id']}/ig-conversations", headers=h).status_code == 422


def test_refused_credentials_flag_the_account_for_reauthorisation(client, tenant):
    h = bearer(tenant["apiKey"])
    tiktok = connect_account(client, tenant, "tiktok")
    expired = client.post("/sandbox/tiktok/expire-token", json={"accountId": tiktok["id"], "includeRefresh": True})
    assert expired.status_code == 200
    answer = client.get(f"/v1/accounts/{tiktok['id']}/publish-options", headers=h)
    assert answer.status_code == 502
    assert answer.json()["error"]["code"] == "platform_error"
    assert client.get(f"/v1/accounts/{tiktok['id']}", headers=h).json()["needsReauth"] is True


def test_an_expired_access_token_is_refreshed_without_the_caller_noticing(client, tenant):
    h = bearer(tenant["apiKey"])
    tiktok = connect_account(client, tenant, "tiktok")
    client.post("/sandbox/tiktok/expire-token", json={"accountId": tiktok["id"]})
    answer = client.get(f"/v1/accounts/{tiktok['id']}/publish-options", headers=h)
    assert answer.status_code == 200
    assert client.get(f"/v1/accounts/{tiktok['id']}", headers=h).json()["needsReauth"] is False


def test_disconnected_account_refuses_platform_calls(client, tenant):
    h = bearer(tenant["apiKey"])
    tiktok = connect_account(client, tenant, "tiktok")
    client.post(f"/v1/accounts/{tiktok['id']}/disconnect", headers=h)
    assert client.get(f"/v1/accounts/{tiktok['id']}/publish-options", headers=h).status_code == 409


def test_sandbox_seed_connects_one_account_per_platform(client, live, tenant):
    out = subprocess.run(switchboard("sandbox", "seed", "--profile", tenant["profileId"], "--json"),
                         env=service_env(live.settings), capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    accounts = json.loads(out.stdout)["accounts"]
    assert set(accounts) == set(PLATFORMS)
    listed = client.get("/v1/accounts", headers=bearer(tenant["apiKey"]), params={"limit": 100}).json()["data"]
    assert {a["id"] for a in listed} == set(accounts.values())


def test_a_whatsapp_token_of_a_meta_app_not_configured_is_refused_naming_the_setting(client, tenant):
    """Graph would refuse every call of that token with our app's `appsecret_proof` (code 100):
    connect asks `debug_token` which app it is of and says what to configure."""
    made = client.post("/sandbox/whatsapp/accounts", json={"appId": "300000000000003"})
    assert made.status_code == 201, made.text
    answer = client.post("/v1/connect/whatsapp", headers=bearer(tenant["apiKey"]), json={
        "profileId": tenant["profileId"], **made.json()["credentials"]})
    assert answer.status_code == 422, answer.text
    (detail,) = answer.json()["error"]["details"]
    assert detail["field"] == "accessToken"
    assert "300000000000003" in detail["message"] and "SWITCHBOARD_META_APP_SECRETS" in detail["message"]
    assert client.get("/v1/accounts", headers=bearer(tenant["apiKey"]), params={"platform": "whatsapp"}).json()[
        "data"] == []
