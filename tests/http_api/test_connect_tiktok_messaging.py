"""TikTok messaging's own grant over /v1: a TikTok account connects by Login Kit and publishes at
once; messaging waits for the second consent (TikTok API for Business), says so without flagging
the account for reconnection, and works once the grant is connected."""

from __future__ import annotations

from typing import Any

import pytest

from tests.conftest import bearer

pytestmark = pytest.mark.shared_service


def _login_kit_only(client, tenant, username: str) -> dict[str, Any]:
    h = bearer(tenant["apiKey"])
    start = client.get("/v1/connect/tiktok", headers=h, params={"profileId": tenant["profileId"]}).json()
    consent = client.get(start["authUrl"] + f"&login_hint={username}")
    callback = client.get(consent.headers["location"])
    assert callback.status_code == 200, callback.text
    return callback.json()


def _record(client, tenant, account_id: str) -> dict[str, Any]:
    answer = client.get(f"/v1/accounts/{account_id}", headers=bearer(tenant["apiKey"]))
    assert answer.status_code == 200
    return answer.json()


def test_messaging_needs_its_own_grant_and_works_once_it_is_connected(client, tenant):
    h = bearer(tenant["apiKey"])
    account = _login_kit_only(client, tenant, "shop.grant")
    assert account["capabilities"]["grants"] == {"messaging": "missing"}
    assert account["capabilities"]["dm"] is False
    options = client.get(f"/v1/accounts/{account['id']}/publish-options", headers=h)
    assert options.status_code == 200 and options.json()["privacyLevels"]  # publishing needs no second grant

    opened = client.post("/sandbox/tiktok/inbound-message", json={
        "accountId": account["id"], "from": {"id": "tt-fan", "handle": "fan"}, "text": "hi?"})
    assert opened.status_code == 200, opened.text
    conversation = client.get("/v1/conversations", headers=h, params={"platform": "TIKTOK"}).json()["data"][0]
    refused = client.post(f"/v1/conversations/{conversation['id']}/messages", headers=h, json={"text": "hello"})
    assert refused.status_code == 409
    assert refused.json()["error"]["code"] == "messaging_grant_required"
    assert _record(client, tenant, account["id"])["needsReauth"] is False
    assert client.get("/sandbox/tiktok/sent", params={"accountId": account["id"]}).json()["data"] == []

    start = client.get(f"/v1/connect/tiktok/{account['id']}/grants/messaging", headers=h,
                       params={"redirectUrl": "https://app.example.com/done"})
    assert start.status_code == 200, start.text
    assert "/portal/auth?" in start.json()["authUrl"]
    consent = client.get(start.json()["authUrl"])  # signed in to TikTok since the first consent
    back = client.get(consent.headers["location"])
    assert back.status_code == 303
    assert back.headers["location"] == f"https://app.example.com/done?accountId={account['id']}&grant=messaging"
    assert client.get(consent.headers["location"]).status_code == 400  # the state is spent
    record = _record(client, tenant, account["id"])
    assert record["capabilities"]["grants"] == {"messaging": "connected"}
    assert record["capabilities"]["dm"] is True

    sent = client.post(f"/v1/conversations/{conversation['id']}/messages", headers=h, json={"text": "hello"})
    assert sent.status_code == 201, sent.text
    rows = client.get("/sandbox/tiktok/sent", params={"accountId": account["id"]}).json()["data"]
    assert [(row["kind"], row["text"]) for row in rows] == [("dm", "hello")]


def test_a_grant_of_another_tiktok_account_or_platform_is_refused(client, tenant):
    h = bearer(tenant["apiKey"])
    account = _login_kit_only(client, tenant, "shop.one")
    start = client.get(f"/v1/connect/tiktok/{account['id']}/grants/messaging", headers=h).json()
    consent = client.get(start["authUrl"] + "&login_hint=shop.two")
    refused = client.get(consent.headers["location"])
    assert refused.status_code == 422
    assert refused.json()["error"]["code"] == "messaging_grant_refused"
    assert _record(client, tenant, account["id"])["capabilities"]["grants"] == {"messaging": "missing"}
    assert client.get(f"/v1/connect/tiktok/{account['id']}/grants/comments", headers=h).status_code == 422
    assert client.get(f"/v1/connect/youtube/{account['id']}/grants/messaging", headers=h).status_code == 422
