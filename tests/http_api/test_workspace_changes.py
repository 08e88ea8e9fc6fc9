"""A workspace a process has already read is served from memory, yet any change to it or to its
profiles made elsewhere holds at the very next request: the change is written by a connection of
its own, as another process (or a person at a SQL prompt) would write it, never through the
service."""

from collections.abc import Callable

import pytest

from storage.db import connection
from storage.hot import epochs
from tests.conftest import bearer
from tests.support.elsewhere import elsewhere

pytestmark = pytest.mark.shared_service


def _elsewhere(live) -> Callable[[str, tuple], None]:
    return elsewhere(live.settings.database_url)


def _workspace(client, key: str) -> dict:
    answer = client.get("/v1/workspaces", headers=bearer(key))
    assert answer.status_code == 200
    return answer.json()["data"][0]


def _remembered(client, tenant) -> dict:
    first = _workspace(client, tenant["apiKey"])
    assert _workspace(client, tenant["apiKey"]) == first  # the second answer came from memory
    return first


def test_a_workspace_renamed_elsewhere_is_seen_at_the_next_request(client, live, tenant):
    before = _remembered(client, tenant)
    _elsewhere(live)("UPDATE workspace SET name = ?, updated_at = '2031-01-01 00:00:00' WHERE id = ?",
                     ("Renamed elsewhere", tenant["workspaceId"]))
    after = _workspace(client, tenant["apiKey"])
    assert after["name"] == "Renamed elsewhere"
    assert after["updatedAt"] != before["updatedAt"]


def test_a_profile_renamed_elsewhere_is_seen_at_the_next_request(client, live, tenant):
    _remembered(client, tenant)
    _elsewhere(live)("UPDATE profile SET name = ? WHERE id = ?", ("Renamed", tenant["profileId"]))
    assert _workspace(client, tenant["apiKey"])["profiles"] == [{"id": tenant["profileId"], "name": "Renamed"}]


def test_a_profile_made_elsewhere_is_seen_at_the_next_request(client, live, tenant):
    _remembered(client, tenant)
    _elsewhere(live)("INSERT INTO profile (id, workspace_id, name, created_at, updated_at)"
                     " VALUES (?, ?, ?, '2031-01-01 00:00:00', '2031-01-01 00:00:00')",
                     ("prf_elsewhere", tenant["workspaceId"], "Made elsewhere"))
    profiles = _workspace(client, tenant["apiKey"])["profiles"]
    assert [profile["id"] for profile in profiles] == [tenant["profileId"], "prf_elsewhere"]


def test_a_profile_deleted_elsewhere_is_gone_at_the_next_request(client, live, tenant):
    assert _remembered(client, tenant)["profiles"]
    _elsewhere(live)("DELETE FROM profile WHERE id = ?", (tenant["profileId"],))
    assert _workspace(client, tenant["apiKey"])["profiles"] == []


def test_keys_of_one_remembered_workspace_each_see_their_own_profiles(client, tenant):
    second = client.post("/v1/profiles", headers=bearer(tenant["apiKey"]), json={"name": "Second"}).json()
    narrow = client.post("/v1/api-keys", headers=bearer(tenant["apiKey"]),
                         json={"name": "narrow", "scope": "profiles", "profileIds": [second["id"]]}).json()
    reader = client.post("/v1/api-keys", headers=bearer(tenant["apiKey"]),
                         json={"name": "reader", "permission": "read"}).json()
    full = _remembered(client, tenant)
    assert (full["role"], [profile["id"] for profile in full["profiles"]]) == ("owner", [tenant["profileId"],
                                                                                       second["id"]])
    seen_narrowly = _workspace(client, narrow["key"])
    assert (seen_narrowly["role"], seen_narrowly["profiles"]) == ("member", [{"id": second["id"], "name": "Second"}])
    assert _workspace(client, reader["key"]) == {**full, "role": "member"}
    assert _workspace(client, tenant["apiKey"]) == full


def test_a_change_to_a_workspace_moves_the_workspace_epoch_and_not_the_keys(client, live, tenant):
    with connection():
        before = epochs()
    _elsewhere(live)("UPDATE profile SET name = ? WHERE id = ?", ("Moved", tenant["profileId"]))
    with connection():
        after = epochs()
    assert after.keys == before.keys
    assert after.workspaces > before.workspaces
