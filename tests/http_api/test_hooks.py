"""/hooks/{platform}: verified, stored once, or refused with nothing stored."""

import json

import pytest

from platforms.graph.inbound import meta_signature
from service.accounts import adapters
from storage.db import connection
from storage.models import Account, InboundRecord
from tests.support.sandbox import connect_account

pytestmark = pytest.mark.shared_service


def _records(tenant):
    """What was stored for the workspace's accounts (other tests' workspaces share the storage)."""
    with connection():
        return list(InboundRecord.select().join(Account).where(Account.workspace == tenant["workspaceId"])
                    .order_by(InboundRecord.received_at))


def test_a_contacts_dm_arrives_signed_and_is_stored_once_even_when_delivered_twice(client, tenant):
    ig = connect_account(client, tenant, "instagram")
    sent = client.post("/sandbox/instagram/inbound-message", json={
        "accountId": ig["id"], "from": {"id": "igsid-9", "handle": "bea", "name": "Bea"}, "text": "Olá 👋",
        "deliveries": 2})
    assert sent.status_code in (200, 201, 202)
    records = _records(tenant)
    assert len(records) == 1
    assert records[0].account_id == ig["id"]
    assert records[0].kind == "message"
    assert records[0].event["text"] == "Olá 👋"
    assert records[0].event["contact_id"] == "igsid-9"


def test_telegram_update_with_the_bots_secret_is_stored(client, tenant):
    bot = connect_account(client, tenant, "telegram")
    client.post("/sandbox/telegram/inbound-message", json={
        "accountId": bot["id"], "from": {"id": "5001", "handle": "carl", "name": "Carl"}, "text": "/start"})
    assert [r.event["text"] for r in _records(tenant)] == ["/start"]


def test_bad_or_missing_meta_signature_is_403_and_nothing_is_stored(client, tenant):
    ig = connect_account(client, tenant, "instagram")
    body = json.dumps({"object": "instagram", "entry": [{"id": ig["platformAccountId"], "time": 1, "messaging": [{
        "sender": {"id": "x"}, "recipient": {"id": ig["platformAccountId"]}, "timestamp": 1,
        "message": {"mid": "m-1", "text": "forged"}}]}]}).encode()
    headers = {"Content-Type": "application/json"}
    missing = client.post("/hooks/instagram", content=body, headers=headers)
    wrong = client.post("/hooks/instagram", content=body,
                        headers={**headers, "X-Hub-Signature-256": meta_signature("not-the-secret", body)})
    assert missing.status_code == wrong.status_code == 403
    assert missing.json()["error"]["code"] == "forbidden"
    assert _records(tenant) == []
    good = client.post("/hooks/instagram", content=body,
                       headers={**headers, "X-Hub-Signature-256": meta_signature(adapters.config().meta_app_secret, body)})
    assert good.status_code == 200
    assert [r.event["text"] for r in _records(tenant)] == ["forged"]


def test_instagram_webhooks_may_be_signed_with_the_instagram_app_secret_and_only_instagram_ones(client, tenant):
    ig = connect_account(client, tenant, "instagram")
    fb = connect_account(client, tenant, "facebook")
    instagram_secret = adapters.config().instagram_app_secret
    assert instagram_secret and instagram_secret != adapters.config().meta_app_secret

    def hook(platform, account, mid):
        body = json.dumps({"object": "instagram" if platform == "instagram" else "page", "entry": [{
            "id": account["platformAccountId"], "time": 1, "messaging": [{
                "sender": {"id": "x"}, "recipient": {"id": account["platformAccountId"]}, "timestamp": 1,
                "message": {"mid": mid, "text": mid}}]}]}).encode()
        return client.post(f"/hooks/{platform}", content=body, headers={
            "Content-Type": "application/json", "X-Hub-Signature-256": meta_signature(instagram_secret, body)})

    assert hook("instagram", ig, "ig-signed").status_code == 200
    assert hook("facebook", fb, "fb-signed").status_code == 403
    assert [r.event["text"] for r in _records(tenant)] == ["ig-signed"]


def test_a_whatsapp_number_of_another_meta_app_has_its_webhooks_verified_with_that_apps_secret(
        client, tenant, monkeypatch):
    """`POST /{waba}/subscribed_apps` subscribes the token's own app, which signs with its own secret:
    a configured app's secret (`SWITCHBOARD_META_APP_SECRETS`) verifies them; others stay 403."""
    wa = connect_account(client, tenant, "whatsapp")
    monkeypatch.setitem(adapters.config().meta_app_secrets, "200000000000002", "other-app-secret")
    body = json.dumps({"object": "whatsapp_business_account", "entry": [{"id": "1", "changes": [{
        "field": "messages", "value": {"messaging_product": "whatsapp", "metadata": {
            "phone_number_id": wa["platformAccountId"]}, "messages": [{
                "from": "15550001111", "id": "wamid.other-app", "timestamp": "1", "type": "text",
                "text": {"body": "from the other app"}}]}}]}]}).encode()
    headers = {"Content-Type": "application/json"}
    assert client.post("/hooks/whatsapp", content=body, headers={
        **headers, "X-Hub-Signature-256": meta_signature("an-unknown-app-secret", body)}).status_code == 403
    assert client.post("/hooks/whatsapp", content=body, headers={
        **headers, "X-Hub-Signature-256": meta_signature("other-app-secret", body)}).status_code == 200
    assert [r.event["text"] for r in _records(tenant)] == ["from the other app"]


def test_bad_telegram_secret_is_403(client, tenant):
    bot = connect_account(client, tenant, "telegram")
    bot_id = bot["platformAccountId"]
    update = json.dumps({"update_id": 1, "message": {"message_id": 1, "date": 1, "chat": {"id": 7, "type": "private"},
                                                     "from": {"id": 7, "is_bot": False, "first_name": "M"}, "text": "hi"}})
    for headers in ({}, {"X-Telegram-Bot-Api-Secret-Token": "wrong"}):
        answer = client.post(f"/hooks/telegram?bot={bot_id}", content=update,
                             headers={"Content-Type": "application/json", **headers})
        assert answer.status_code == 403
    assert _records(tenant) == []


def test_meta_subscription_challenge(client):
    token = adapters.config().meta_verify_token
    ok = client.get("/hooks/facebook", params={"hub.mode": "subscribe", "hub.verify_token": token,
                                               "hub.challenge": "1158201444"})
    assert ok.status_code == 200 and ok.text == "1158201444"
    wrong = client.get("/hooks/facebook", params={"hub.mode": "subscribe", "hub.verify_token": "nope",
                                                  "hub.challenge": "1"})
    assert wrong.status_code == 403


def test_unknown_platform_and_unreadable_bodies(client):
    assert client.post("/hooks/myspace", content=b"{}").status_code == 404
    body = b"not json"
    answer = client.post("/hooks/instagram", content=body,
                         headers={"X-Hub-Signature-256": meta_signature(adapters.config().meta_app_secret, body)})
    assert answer.status_code == 400
