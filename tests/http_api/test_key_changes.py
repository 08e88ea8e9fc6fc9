"""A key a process has already checked is remembered, yet any change to it made elsewhere holds at the
very next request: here the change is written by a connection of its own, as another process (or a
person at a SQL prompt) would write it, never through the service."""

from collections.abc import Callable
from datetime import timedelta

import pytest

from kit import clock
from storage.db import connection
from storage.hot import epochs
from tests.conftest import bearer
from tests.support.elsewhere import elsewhere

pytestmark = pytest.mark.shared_service


def _elsewhere(live) -> Callable[[str, tuple], None]:
    return elsewhere(live.settings.database_url)


def _new_key(client, tenant, **fields) -> dict:
    created = client.post("/v1/api-keys", headers=bearer(tenant["apiKey"]), json={"name": "remembered", **fields})
    assert created.status_code == 201
    key = created.json()
    assert client.get("/v1/workspaces", headers=bearer(key["key"])).status_code == 200  # now remembered
    return key


@pytest.mark.parametrize(("statement", "refused"), [
    ("UPDATE api_key SET revoked_at = '2020-01-01 00:00:00' WHERE id = ?", "The API key has been revoked."),
    ("UPDATE api_key SET expires_at = '2020-01-01 00:00:00' WHERE id = ?", "The API key has expired."),
    ("DELETE FROM api_key WHERE id = ?", "The API key is not valid."),
], ids=["revoked", "expired", "deleted"])
def test_a_remembered_key_changed_elsewhere_is_refused_at_the_next_request(client, live, tenant, statement,
                                                                           refused):
    key = _new_key(client, tenant)
    _elsewhere(live)(statement, (key["id"],))
    answer = client.get("/v1/workspaces", headers=bearer(key["key"]))
    assert answer.status_code == 401
    assert answer.json()["error"]["message"] == refused


def test_a_remembered_key_made_read_only_elsewhere_cannot_write(client, live, tenant):
    key = _new_key(client, tenant)
    assert client.post("/v1/profiles", headers=bearer(key["key"]), json={"name": "Before"}).status_code == 201
    _elsewhere(live)("UPDATE api_key SET permission = 'read' WHERE id = ?", (key["id"],))
    assert client.post("/v1/profiles", headers=bearer(key["key"]), json={"name": "After"}).status_code == 403


def test_a_remembered_key_narrowed_to_no_profile_elsewhere_sees_none(client, live, tenant):
    key = _new_key(client, tenant)
    _elsewhere(live)("UPDATE api_key SET scope = 'profiles', profile_ids = '[]' WHERE id = ?", (key["id"],))
    workspace = client.get("/v1/workspaces", headers=bearer(key["key"])).json()["data"][0]
    assert (workspace["role"], workspace["profiles"]) == ("member", [])


def test_a_remembered_key_of_a_workspace_deleted_elsewhere_is_refused(client, live):
    doomed = live.tenant()
    key = _new_key(client, doomed)
    statements = _elsewhere(live)
    # What holds the workspace without cascading goes first; the keys go with the workspace itself.
    statements("DELETE FROM membership WHERE workspace_id = ?", (doomed["workspaceId"],))
    statements("DELETE FROM profile WHERE workspace_id = ?", (doomed["workspaceId"],))
    statements("DELETE FROM workspace WHERE id = ?", (doomed["workspaceId"],))
    assert client.get("/v1/workspaces", headers=bearer(key["key"])).status_code == 401


def test_using_a_key_leaves_every_remembered_key_standing(client, live, tenant):
    key = _new_key(client, tenant)  # its first use wrote lastUsedAt
    with connection():
        before = epochs().keys
    _elsewhere(live)("UPDATE api_key SET last_used_at = NULL WHERE id = ?", (key["id"],))
    assert client.get("/v1/workspaces", headers=bearer(key["key"])).status_code == 200  # writes lastUsedAt again
    with connection():
        assert epochs().keys == before


# With nothing changed anywhere, time alone still tells on a remembered key.

def test_a_remembered_key_expires_when_its_time_comes(client, tenant):
    key = _new_key(client, tenant, expiresInDays=1)
    clock.advance(24 * 3600 + 5)
    answer = client.get("/v1/workspaces", headers=bearer(key["key"]))
    assert answer.status_code == 401
    assert answer.json()["error"]["message"] == "The API key has expired."


def test_a_remembered_key_records_its_use_again_after_a_minute(client, tenant):
    key = _new_key(client, tenant)
    first = _last_used_at(client, tenant, key)
    clock.advance(30)
    assert client.get("/v1/workspaces", headers=bearer(key["key"])).status_code == 200
    assert _last_used_at(client, tenant, key) == first  # within the minute: not written again
    clock.advance(60)
    assert client.get("/v1/workspaces", headers=bearer(key["key"])).status_code == 200
    later = _last_used_at(client, tenant, key)
    assert clock.parse_iso(later) - clock.parse_iso(first) >= timedelta(seconds=90)


def _last_used_at(client, tenant, key: dict) -> str:
    listed = client.get("/v1/api-keys", headers=bearer(tenant["apiKey"]), params={"limit": 100}).json()["data"]
    return next(item["lastUsedAt"] for item in listed if item["id"] == key["id"])
