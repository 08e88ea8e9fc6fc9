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


def _messages(client, tenant, conversation_id: str) -> list[dict[str, Any]]:
    answer = client.get(f"/v1/conversations/{conversation_id}/messages", headers=bearer(tenant["apiKey"]))
    assert answer.status_code == 200
    return answer.json()["data"]


def test_messaging_needs_its_own_grant_and_works_once_it_is_connected(client, tenant):
    h = bearer(tenant["apiKey"])
    account = _login_kit_only(client, tenant, "shop.grant")
    assert account["capabilities"]["grants"] == {"messaging": "missing"}
    assert account["capabilities"]["dm"] is False
    options = client.get(f"/v1/accounts/{account['id']}/publish-options", headers=h)
    assert options.status_code == 200 and options.json()["privacyLevels"]  # publishing needs no second grant
    # Business Messaging's webhook names the account by the business grant's id: unknown until it is connected.
    client.post("/sandbox/tiktok/inbound-message", json={
        "accountId": account["id"], "from": {"id": "tt-early"}, "text": "anyone?"}).raise_for_status()
    assert client.get("/v1/conversations", headers=h, params={"platform": "TIKTOK"}).json()["data"] == []

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
    logged = client.get("/v1/audit-log", headers=h, params={"action": "account.grant_connected"}).json()["data"]
    assert [(row["target"], row["actor"]["type"]) for row in logged] == [
        ({"type": "account", "id": account["id"]}, "system")]

    opened = client.post("/sandbox/tiktok/inbound-message", json={
        "accountId": account["id"], "from": {"id": "tt-fan", "handle": "fan"}, "text": "hi?"})
    assert opened.status_code == 200 and opened.json()["delivered"] is True, opened.text
    [conversation] = client.get("/v1/conversations", headers=h, params={"platform": "TIKTOK"}).json()["data"]
    assert conversation["contactHandle"] == "fan"
    sent = client.post(f"/v1/conversations/{conversation['id']}/messages", headers=h, json={"text": "hello"})
    assert sent.status_code == 201, sent.text
    rows = client.get("/sandbox/tiktok/sent", params={"accountId": account["id"]}).json()["data"]
    assert [(row["kind"], row["text"]) for row in rows] == [("dm", "hello")]

    # The messaging token lapses: the grant refreshes itself (tt_user/oauth2/refresh_token/) and the
    # message goes.
    client.post("/sandbox/tiktok/expire-token", json={"accountId": account["id"]}).raise_for_status()
    again = client.post(f"/v1/conversations/{conversation['id']}/messages", headers=h, json={"text": "still here"})
    assert again.status_code == 201 and again.json()["status"] == "sent", again.text

    # Refused for good (its refresh token too): the grant lapses, the account stays connected and
    # publishing, and messaging asks for the grant again.
    client.post("/sandbox/tiktok/expire-token", json={"accountId": account["id"], "includeRefresh": True}
                ).raise_for_status()
    failed = client.post(f"/v1/conversations/{conversation['id']}/messages", headers=h, json={"text": "lost?"})
    assert failed.status_code == 409, failed.text
    assert failed.json()["error"]["code"] == "messaging_grant_required"
    record = _record(client, tenant, account["id"])
    assert (record["needsReauth"], record["status"]) == (False, "connected")
    assert record["capabilities"]["grants"] == {"messaging": "lapsed"}
    refused = client.post(f"/v1/conversations/{conversation['id']}/messages", headers=h, json={"text": "hello?"})
    assert refused.status_code == 409
    assert refused.json()["error"]["code"] == "messaging_grant_required"
    assert [m["text"] for m in _messages(client, tenant, conversation["id"]) if m["direction"] == "outbound"] == [
        "hello", "still here", "lost?"]


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
