"""Secrets shown once (a new key, a webhook secret) are never kept in the clear, also not in the
replay of a request sent with an `Idempotency-Key`."""

from storage.db import connection
from storage.models import IdempotencyRecord
from tests.conftest import bearer
from tests.support.secret_scan import database_text, files_text, findings


def _replayed(client, path, headers, body=None):
    first = client.post(path, headers=headers, json=body)
    again = client.post(path, headers=headers, json=body)
    assert first.status_code in (200, 201), first.text
    assert again.headers.get("idempotent-replayed") == "true"
    assert again.json() == first.json()
    return first.json()


def test_replays_of_new_keys_and_webhook_secrets_are_not_kept_in_the_clear(client, tenant, service):
    h = bearer(tenant["apiKey"])
    key = _replayed(client, "/v1/api-keys", {**h, "Idempotency-Key": "key-1"}, {"name": "ci"})["key"]
    made = _replayed(client, "/v1/webhooks", {**h, "Idempotency-Key": "hook-1"}, {"url": "https://localhost:9/h"})
    rotated = _replayed(client, f"/v1/webhooks/{made['id']}/rotate-secret", {**h, "Idempotency-Key": "rot-1"})
    secrets = [key, made["secret"], rotated["secret"]]
    with connection():
        assert IdempotencyRecord.select().count() == 3
    assert findings(database_text(), known=secrets) == []
    # The files too (the embedded setup's database, its WAL with pages not yet checkpointed, the queue).
    assert findings(files_text(service.data_dir.rglob("*")), known=secrets) == []
