import pytest

from storage.db import connection
from storage.models import Account, Event
from tests.conftest import bearer
from tests.support.factories import add_account

pytestmark = pytest.mark.shared_service


def test_account_record_has_the_contract_fields_and_no_credentials(client, tenant):
    account_id = add_account(tenant["workspaceId"], tenant["profileId"], platform="instagram",
                             credentials={"access_token": "EAAG-super-secret"})
    answer = client.get(f"/v1/accounts/{account_id}", headers=bearer(tenant["apiKey"]))
    assert answer.status_code == 200
    record = answer.json()
    assert {"id", "profileId", "platform", "platformAccountId", "username", "displayName", "status", "needsReauth",
            "connectedAt", "disconnectedAt", "capabilities", "createdAt", "updatedAt"} <= set(record)
    assert (record["platform"], record["status"], record["needsReauth"]) == ("instagram", "connected", False)
    assert "EAAG-super-secret" not in answer.text
    with connection():
        stored = bytes(Account.get_by_id(account_id).credentials)
    assert b"EAAG-super-secret" not in stored  # encrypted at rest


def test_list_filters(client, tenant):
    h = bearer(tenant["apiKey"])
    ig = add_account(tenant["workspaceId"], tenant["profileId"], platform="instagram")
    tg = add_account(tenant["workspaceId"], tenant["profileId"], platform="telegram")
    client.post(f"/v1/accounts/{tg}/disconnect", headers=h)
    assert [a["id"] for a in client.get("/v1/accounts", headers=h, params={"platform": "instagram"}).json()["data"]] == [ig]
    assert [a["id"] for a in client.get("/v1/accounts", headers=h, params={"status": "disconnected"}).json()["data"]] == [tg]
    assert client.get("/v1/accounts", headers=h, params={"platform": "INSTAGRAM"}).status_code == 422
    assert client.get("/v1/accounts", headers=h, params={"status": "gone"}).status_code == 422
    by_profile = client.get("/v1/accounts", headers=h, params={"profileId": tenant["profileId"]}).json()
    assert by_profile["pagination"]["total"] == 2


def test_disconnect_erases_credentials_is_idempotent_and_emits_one_event(client, tenant):
    h = bearer(tenant["apiKey"])
    account_id = add_account(tenant["workspaceId"], tenant["profileId"])
    first = client.post(f"/v1/accounts/{account_id}/disconnect", headers=h)
    second = client.post(f"/v1/accounts/{account_id}/disconnect", headers=h)
    assert first.status_code == second.status_code == 200
    assert first.json()["status"] == "disconnected"
    assert first.json()["disconnectedAt"] == second.json()["disconnectedAt"]
    with connection():
        assert Account.get_by_id(account_id).credentials is None
        types = [e.type for e in Event.select().where(Event.workspace == tenant["workspaceId"])]
    assert types.count("account.disconnected") == 1
    assert types.count("account.connected") == 1


def test_permanent_delete_needs_a_disconnected_account(client, tenant):
    h = bearer(tenant["apiKey"])
    account_id = add_account(tenant["workspaceId"], tenant["profileId"])
    refused = client.delete(f"/v1/accounts/{account_id}/permanent", headers=h)
    assert refused.status_code == 409
    assert refused.json()["error"]["code"] == "conflict"
    client.post(f"/v1/accounts/{account_id}/disconnect", headers=h)
    deleted = client.delete(f"/v1/accounts/{account_id}/permanent", headers=h)
    assert deleted.status_code == 200
    assert deleted.json() == {"id": account_id, "deleted": True, "postTargets": 0, "conversations": 0}
    assert client.get(f"/v1/accounts/{account_id}", headers=h).status_code == 404


def test_profile_with_an_account_cannot_be_deleted(client, tenant):
    h = bearer(tenant["apiKey"])
    account_id = add_account(tenant["workspaceId"], tenant["profileId"])
    assert client.delete(f"/v1/profiles/{tenant['profileId']}", headers=h).status_code == 409
    client.post(f"/v1/accounts/{account_id}/disconnect", headers=h)
    client.delete(f"/v1/accounts/{account_id}/permanent", headers=h)
    assert client.delete(f"/v1/profiles/{tenant['profileId']}", headers=h).status_code == 200
    assert client.get(f"/v1/profiles/{tenant['profileId']}", headers=h).status_code == 404
