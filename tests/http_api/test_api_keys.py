import re
import sqlite3
from datetime import timedelta
from pathlib import Path

import pytest

from kit import clock
from storage.db import connection, db
from storage.models import ApiKey
from tests.conftest import PG_BASE, bearer
from tests.support.secret_scan import readable_tables

pytestmark = pytest.mark.shared_service


def test_created_key_has_the_contract_shape_and_is_shown_once(client, tenant):
    h = bearer(tenant["apiKey"])
    created = client.post("/v1/api-keys", headers=h, json={"name": "CI", "permission": "read", "expiresInDays": 30})
    assert created.status_code == 201
    body = created.json()
    assert re.fullmatch(r"sk_[0-9a-f]{64}", body["key"])
    assert body["prefix"] == body["key"][:11]
    assert body["id"].startswith("key_")
    assert (body["scope"], body["permission"], body["profileIds"]) == ("full", "read", [])
    assert body["expiresAt"].endswith("Z")
    listed = client.get("/v1/api-keys", headers=h).json()["data"]
    mine = next(k for k in listed if k["id"] == body["id"])
    assert "key" not in mine and "secretHash" not in mine
    assert body["key"] not in client.get("/v1/api-keys", headers=h).text
    assert set(mine) == {"id", "name", "prefix", "scope", "profileIds", "permission", "createdAt", "updatedAt",
                         "lastUsedAt", "expiresAt", "revokedAt"}


def test_new_key_works_and_revoked_key_fails_on_the_next_request(client, tenant):
    h = bearer(tenant["apiKey"])
    created = client.post("/v1/api-keys", headers=h, json={"name": "temp"}).json()
    assert client.get("/v1/workspaces", headers=bearer(created["key"])).status_code == 200
    revoked = client.delete(f"/v1/api-keys/{created['id']}", headers=h)
    assert revoked.status_code == 200
    assert revoked.json()["revokedAt"].endswith("Z")
    refused = client.get("/v1/workspaces", headers=bearer(created["key"]))
    assert refused.status_code == 401
    assert refused.headers["www-authenticate"].startswith("Bearer")
    assert refused.json()["error"]["code"] == "unauthorized"


def test_expired_key_is_refused(client, tenant):
    created = client.post("/v1/api-keys", headers=bearer(tenant["apiKey"]), json={"name": "short",
                                                                                 "expiresInDays": 1}).json()
    with connection():
        ApiKey.update(expires_at=clock.now() - timedelta(seconds=1)).where(ApiKey.id == created["id"]).execute()
    assert client.get("/v1/workspaces", headers=bearer(created["key"])).status_code == 401


def test_missing_malformed_and_unknown_keys_are_401_with_the_envelope(client):
    for headers in ({}, {"Authorization": "Bearer nope"}, {"Authorization": "Basic abc"},
                    {"Authorization": "Bearer sk_" + "0" * 64}, {"Authorization": "Bearer sk_" + "A" * 64}):
        answer = client.get("/v1/accounts", headers=headers)
        assert answer.status_code == 401
        assert answer.headers["www-authenticate"].startswith("Bearer")
        assert answer.json()["error"]["code"] == "unauthorized"


def test_last_used_at_is_recorded(client, tenant):
    h = bearer(tenant["apiKey"])
    client.get("/v1/workspaces", headers=h)
    keys = client.get("/v1/api-keys", headers=h).json()["data"]
    assert keys[-1]["lastUsedAt"] is not None


def test_key_validation(client, tenant):
    h = bearer(tenant["apiKey"])
    cases = [
        ({"name": "x", "scope": "profiles"}, "profileIds"),
        ({"name": "x", "scope": "profiles", "profileIds": ["prf_nope"]}, "profileIds"),
        ({"name": "x", "scope": "full", "profileIds": [tenant["profileId"]]}, "profileIds"),
        ({"name": "x", "expiresInDays": 0}, "expiresInDays"),
        ({"name": "x", "expiresInDays": 3651}, "expiresInDays"),
        ({"name": "x", "permission": "admin"}, "permission"),
        ({"name": ""}, "name"),
        ({}, "name"),
    ]
    for body, field in cases:
        answer = client.post("/v1/api-keys", headers=h, json=body)
        assert answer.status_code == 422, body
        assert answer.json()["error"]["code"] == "validation_failed"
        assert field in [d["field"] for d in answer.json()["error"]["details"]], body


def _make_keys(client, tenant):
    h = bearer(tenant["apiKey"])
    return [tenant["apiKey"], *(client.post("/v1/api-keys", headers=h, json={"name": f"k{i}"}).json()["key"]
                                for i in range(3))]


@pytest.mark.skipif(bool(PG_BASE), reason="the database is a file only on the embedded setup")
def test_no_plaintext_key_anywhere_in_the_database_file(client, live, tenant):
    secrets = _make_keys(client, tenant)
    path = Path(live.settings.database_url.removeprefix("sqlite:///"))
    raw = b"".join(p.read_bytes() for p in path.parent.glob(path.name + "*"))  # WAL and shm included
    assert raw
    for secret in secrets:
        assert secret[3:].encode() not in raw
    rows = sqlite3.connect(path).execute("SELECT secret_hash, prefix FROM api_key WHERE workspace_id = ?",
                                         (tenant["workspaceId"],)).fetchall()
    assert len(rows) == 4
    assert all(re.fullmatch(r"[0-9a-f]{64}", h) and re.fullmatch(r"sk_[0-9a-f]{8}", p) for h, p in rows)


def test_no_plaintext_key_in_any_table(client, tenant):
    secrets = _make_keys(client, tenant)
    with connection():
        text = "\n".join(
            str(row)
            for table in readable_tables()
            for row in db.execute_sql(f'SELECT * FROM "{table}"').fetchall()
        )
    assert "key_" in text
    for secret in secrets:
        assert secret[3:] not in text
