"""/v1/webhooks: endpoints, secrets, filters, tenancy, the catalogue, the log's filters."""

from __future__ import annotations

import re
import socket
from datetime import timedelta

import pytest

from kit import clock, net
from service.common import events
from storage.db import connection
from storage.models import IdempotencyRecord
from tests.conftest import bearer

pytestmark = pytest.mark.shared_service


def _create(client, key, **body):
    body.setdefault("url", "https://localhost:9/hook")
    return client.post("/v1/webhooks", json=body, headers=bearer(key))


def _key(client, tenant, **body):
    answer = client.post("/v1/api-keys", json={"name": "k", **body}, headers=bearer(tenant["apiKey"]))
    assert answer.status_code == 201, answer.text
    return answer.json()["key"]


def test_create_shows_the_secret_once_and_never_again(client, tenant):
    created = _create(client, tenant["apiKey"], description="orders", events=["post.published"])
    assert created.status_code == 201
    body = created.json()
    assert re.fullmatch(r"whsec_[A-Za-z0-9+/]{43}=", body["secret"])  # standard base64 of 32 bytes
    assert body["id"].startswith("wh_")
    assert body["url"] == "https://localhost:9/hook"
    assert body["events"] == ["post.published"]
    assert body["description"] == "orders"
    assert body["enabled"] is True
    assert body["createdAt"].endswith("Z")

    listed = client.get("/v1/webhooks", headers=bearer(tenant["apiKey"])).json()
    one = client.get(f"/v1/webhooks/{body['id']}", headers=bearer(tenant["apiKey"])).json()
    assert listed["pagination"]["total"] == 1
    assert "secret" not in listed["data"][0]
    assert "secret" not in one
    assert body["secret"] not in client.get("/v1/webhooks", headers=bearer(tenant["apiKey"])).text


def test_events_omitted_or_empty_mean_every_event(client, tenant):
    assert _create(client, tenant["apiKey"]).json()["events"] == []
    assert _create(client, tenant["apiKey"], events=[]).json()["events"] == []


def test_an_unknown_event_name_is_refused_naming_the_field(client, tenant):
    answer = _create(client, tenant["apiKey"], events=["post.published", "post.exploded"])
    assert answer.status_code == 422
    assert answer.json()["error"]["code"] == "validation_failed"
    assert [d["field"] for d in answer.json()["error"]["details"]] == ["events[1]"]


def test_unknown_fields_and_plain_http_are_refused(client, tenant):
    typo = _create(client, tenant["apiKey"], evnets=[])
    plain = _create(client, tenant["apiKey"], url="http://localhost:9/hook")
    relative = _create(client, tenant["apiKey"], url="/hook")
    assert typo.status_code == 422
    assert plain.status_code == 422
    assert plain.json()["error"]["details"][0]["field"] == "url"
    assert relative.status_code == 422


def test_credentials_in_the_url_are_refused(client, tenant):
    answer = _create(client, tenant["apiKey"], url="https://user:pw@localhost:9/hook")
    assert answer.status_code == 422
    assert answer.json()["error"]["details"][0]["field"] == "url"


def test_patch_changes_only_what_is_sent_and_rechecks_events(client, tenant):
    made = _create(client, tenant["apiKey"], description="a").json()
    path = f"/v1/webhooks/{made['id']}"
    patched = client.patch(path, json={"enabled": False, "events": ["message.received"]},
                           headers=bearer(tenant["apiKey"]))
    refused = client.patch(path, json={"events": ["nope"]}, headers=bearer(tenant["apiKey"]))
    assert patched.status_code == 200
    assert patched.json()["enabled"] is False
    assert patched.json()["events"] == ["message.received"]
    assert patched.json()["description"] == "a"
    assert refused.status_code == 422
    assert client.get(path, headers=bearer(tenant["apiKey"])).json()["events"] == ["message.received"]


def test_delete_removes_the_endpoint(client, tenant):
    made = _create(client, tenant["apiKey"]).json()
    deleted = client.delete(f"/v1/webhooks/{made['id']}", headers=bearer(tenant["apiKey"]))
    assert deleted.status_code == 200
    assert deleted.json() == {"id": made["id"], "deleted": True}
    assert client.get(f"/v1/webhooks/{made['id']}", headers=bearer(tenant["apiKey"])).status_code == 404


def test_rotate_returns_a_new_secret(client, tenant):
    made = _create(client, tenant["apiKey"]).json()
    rotated = client.post(f"/v1/webhooks/{made['id']}/rotate-secret", headers=bearer(tenant["apiKey"]))
    assert rotated.status_code == 200
    assert set(rotated.json()) == {"secret"}
    assert rotated.json()["secret"].startswith("whsec_")
    assert rotated.json()["secret"] != made["secret"]


def test_another_workspace_sees_nothing(client, tenant, other_tenant):
    made = _create(client, tenant["apiKey"]).json()
    theirs = bearer(other_tenant["apiKey"])
    assert client.get(f"/v1/webhooks/{made['id']}", headers=theirs).status_code == 404
    assert client.patch(f"/v1/webhooks/{made['id']}", json={"enabled": False}, headers=theirs).status_code == 404
    assert client.delete(f"/v1/webhooks/{made['id']}", headers=theirs).status_code == 404
    assert client.post(f"/v1/webhooks/{made['id']}/test", headers=theirs).status_code == 404
    assert client.post(f"/v1/webhooks/{made['id']}/rotate-secret", headers=theirs).status_code == 404
    assert client.get(f"/v1/webhooks/{made['id']}/deliveries", headers=theirs).status_code == 404
    assert client.get("/v1/webhooks", headers=theirs).json()["data"] == []
    delivery = client.post(f"/v1/webhooks/{made['id']}/test", headers=bearer(tenant["apiKey"])).json()
    assert client.post(f"/v1/webhooks/deliveries/{delivery['id']}/redeliver", headers=theirs).status_code == 404


def test_read_and_profile_keys_may_read_but_not_manage(client, tenant):
    made = _create(client, tenant["apiKey"]).json()
    read_key = _key(client, tenant, permission="read")
    profile_key = _key(client, tenant, scope="profiles", profileIds=[tenant["profileId"]])
    for key in (read_key, profile_key):
        assert client.get("/v1/webhooks", headers=bearer(key)).status_code == 200
        assert client.get(f"/v1/webhooks/{made['id']}", headers=bearer(key)).status_code == 200
        assert client.get(f"/v1/webhooks/{made['id']}/deliveries", headers=bearer(key)).status_code == 200
        assert _create(client, key).status_code == 403
        assert client.patch(f"/v1/webhooks/{made['id']}", json={"enabled": False},
                            headers=bearer(key)).status_code == 403
        assert client.post(f"/v1/webhooks/{made['id']}/rotate-secret", headers=bearer(key)).status_code == 403
        assert client.post(f"/v1/webhooks/{made['id']}/test", headers=bearer(key)).status_code == 403
        assert client.delete(f"/v1/webhooks/{made['id']}", headers=bearer(key)).status_code == 403
    assert client.get(f"/v1/webhooks/{made['id']}", headers=bearer(tenant["apiKey"])).json()["enabled"] is True


def test_the_catalogue_lists_every_event(client, tenant):
    answer = client.get("/v1/webhooks/events", headers=bearer(tenant["apiKey"]))
    assert answer.status_code == 200
    names = [item["name"] for item in answer.json()["data"]]
    assert names == list(events.CATALOGUE)
    assert "webhook.test" in names
    assert all(item["description"] for item in answer.json()["data"])


def test_test_event_is_queued_and_answers_202_with_its_delivery(client, tenant):
    made = _create(client, tenant["apiKey"]).json()
    answer = client.post(f"/v1/webhooks/{made['id']}/test", headers=bearer(tenant["apiKey"]))
    assert answer.status_code == 202
    assert answer.json()["event"] == "webhook.test"
    assert answer.json()["eventId"].startswith("evt_")
    assert answer.json()["id"].startswith("whd_")
    assert answer.json()["webhookId"] == made["id"]


def test_a_disabled_endpoint_refuses_test_events(client, tenant):
    made = _create(client, tenant["apiKey"]).json()
    client.patch(f"/v1/webhooks/{made['id']}", json={"enabled": False}, headers=bearer(tenant["apiKey"]))
    answer = client.post(f"/v1/webhooks/{made['id']}/test", headers=bearer(tenant["apiKey"]))
    assert answer.status_code == 409


def test_the_log_filters_by_status_and_event_and_refuses_unknown_values(client, tenant):
    made = _create(client, tenant["apiKey"]).json()
    client.post(f"/v1/webhooks/{made['id']}/test", headers=bearer(tenant["apiKey"]))
    path = f"/v1/webhooks/{made['id']}/deliveries"
    by_event = client.get(path, params={"event": "webhook.test"}, headers=bearer(tenant["apiKey"])).json()
    other_event = client.get(path, params={"event": "post.failed"}, headers=bearer(tenant["apiKey"])).json()
    bad_event = client.get(path, params={"event": "post.exploded"}, headers=bearer(tenant["apiKey"]))
    bad_status = client.get(path, params={"status": "LOST"}, headers=bearer(tenant["apiKey"]))
    bad_limit = client.get(path, params={"limit": 101}, headers=bearer(tenant["apiKey"]))
    assert by_event["pagination"]["total"] == 1
    assert other_event["pagination"]["total"] == 0
    assert bad_event.status_code == 422
    assert bad_status.status_code == 422
    assert bad_limit.status_code == 422


def test_openapi_documents_every_webhook_operation(client):
    document = client.get("/v1/openapi.json").json()
    paths = document["paths"]
    assert set(paths["/v1/webhooks"]) >= {"get", "post"}
    assert set(paths["/v1/webhooks/{id}"]) >= {"get", "patch", "delete"}
    for path in ("/v1/webhooks/{id}/rotate-secret", "/v1/webhooks/{id}/test",
                 "/v1/webhooks/deliveries/{id}/redeliver"):
        assert "post" in paths[path]
    assert "get" in paths["/v1/webhooks/{id}/deliveries"]
    assert "get" in paths["/v1/webhooks/events"]
    assert "202" in paths["/v1/webhooks/{id}/test"]["post"]["responses"]


def test_a_retry_after_a_create_died_answers_with_the_endpoint_it_stored(client, tenant, monkeypatch):
    # The URL's host is looked up before the endpoint is written, outside a transaction, so the
    # endpoint is stored in a commit of its own, tied to the request's Idempotency-Key: a retry after
    # the first request died there (its key still unanswered, its lease run out) finds that endpoint.
    monkeypatch.setattr(net, "_getaddrinfo", lambda host, port: [
        (socket.AF_INET, socket.SOCK_STREAM, 6, "", ("93.184.216.34", port))])
    headers = {**bearer(tenant["apiKey"]), "Idempotency-Key": "hook-once"}
    body = {"url": "https://hooks.example.test/in", "events": ["message.received"]}
    first = client.post("/v1/webhooks", json=body, headers=headers)
    assert first.status_code == 201
    with connection():
        died = IdempotencyRecord.update(status=None, body=None, locked_until=clock.now() - timedelta(seconds=1)).where(
            IdempotencyRecord.idempotency_key == "hook-once", IdempotencyRecord.resource_id == first.json()["id"]
        ).execute()
    assert died == 1
    again = client.post("/v1/webhooks", json=body, headers=headers)
    assert again.status_code == 201
    assert (again.json()["id"], again.json()["secret"]) == (first.json()["id"], first.json()["secret"])
    listed = client.get("/v1/webhooks", headers=bearer(tenant["apiKey"])).json()
    assert [item["id"] for item in listed["data"]] == [first.json()["id"]]
