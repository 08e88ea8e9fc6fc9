"""The tenancy matrix of CONTRACT section 2 on every endpoint of the foundation."""

import pytest

from tests.conftest import bearer
from tests.support.factories import add_account, add_key, add_profile

pytestmark = pytest.mark.shared_service


@pytest.fixture
def world(tenant, other_tenant):
    """Two workspaces; in ours a second profile with an account, and keys of every kind."""
    ws = tenant["workspaceId"]
    second = add_profile(ws)
    return {
        "full": tenant["apiKey"],
        "read": add_key(ws, permission="read"),
        "scoped": add_key(ws, scope="profiles", profile_ids=[tenant["profileId"]]),
        "mine": tenant,
        "second_profile": second,
        "second_account": add_account(ws, second),
        "main_account": add_account(ws, tenant["profileId"]),
        "foreign_profile": other_tenant["profileId"],
        "foreign_account": add_account(other_tenant["workspaceId"], other_tenant["profileId"]),
        "foreign_key_id": None,
    }


def test_another_workspaces_resources_are_404_for_every_kind_of_key(client, world):
    for key in (world["full"], world["read"], world["scoped"]):
        h = bearer(key)
        assert client.get(f"/v1/profiles/{world['foreign_profile']}", headers=h).status_code == 404
        assert client.patch(f"/v1/profiles/{world['foreign_profile']}", headers=h, json={"name": "x"}).status_code == 404
        assert client.delete(f"/v1/profiles/{world['foreign_profile']}", headers=h).status_code == 404
        assert client.get(f"/v1/accounts/{world['foreign_account']}", headers=h).status_code == 404
        assert client.post(f"/v1/accounts/{world['foreign_account']}/disconnect", headers=h).status_code == 404
        assert client.delete(f"/v1/accounts/{world['foreign_account']}/permanent", headers=h).status_code == 404


def test_other_workspaces_key_cannot_be_revoked(client, world, other_tenant):
    foreign_keys = client.get("/v1/api-keys", headers=bearer(other_tenant["apiKey"])).json()["data"]
    answer = client.delete(f"/v1/api-keys/{foreign_keys[0]['id']}", headers=bearer(world["full"]))
    assert answer.status_code == 404
    assert answer.json()["error"]["code"] == "not_found"
    # and the foreign key still works
    assert client.get("/v1/workspaces", headers=bearer(other_tenant["apiKey"])).status_code == 200


def test_lists_never_show_another_workspace(client, world):
    h = bearer(world["full"])
    accounts = client.get("/v1/accounts", headers=h).json()["data"]
    assert {a["id"] for a in accounts} == {world["main_account"], world["second_account"]}
    profiles = {p["id"] for p in client.get("/v1/profiles", headers=h).json()["data"]}
    assert world["foreign_profile"] not in profiles
    workspaces = client.get("/v1/workspaces", headers=h).json()["data"]
    assert [w["id"] for w in workspaces] == [world["mine"]["workspaceId"]]


def test_profile_scoped_key_gets_403_outside_its_profiles(client, world):
    h = bearer(world["scoped"])
    assert client.get(f"/v1/profiles/{world['second_profile']}", headers=h).status_code == 403
    assert client.patch(f"/v1/profiles/{world['second_profile']}", headers=h, json={"name": "x"}).status_code == 403
    assert client.delete(f"/v1/profiles/{world['second_profile']}", headers=h).status_code == 403
    assert client.get(f"/v1/accounts/{world['second_account']}", headers=h).status_code == 403
    answer = client.post(f"/v1/accounts/{world['second_account']}/disconnect", headers=h)
    assert answer.status_code == 403
    assert answer.json()["error"]["code"] == "forbidden"
    assert client.delete(f"/v1/accounts/{world['second_account']}/permanent", headers=h).status_code == 403
    # and nothing changed
    account = client.get(f"/v1/accounts/{world['second_account']}", headers=bearer(world["full"])).json()
    assert account["status"] == "connected"


def test_profile_scoped_key_sees_only_its_profiles_in_lists(client, world):
    h = bearer(world["scoped"])
    assert [a["id"] for a in client.get("/v1/accounts", headers=h).json()["data"]] == [world["main_account"]]
    assert [p["id"] for p in client.get("/v1/profiles", headers=h).json()["data"]] == [world["mine"]["profileId"]]
    workspace = client.get("/v1/workspaces", headers=h).json()["data"][0]
    assert [p["id"] for p in workspace["profiles"]] == [world["mine"]["profileId"]]
    assert workspace["role"] == "member"


def test_profile_scoped_key_acts_inside_its_profiles(client, world):
    h = bearer(world["scoped"])
    assert client.get(f"/v1/accounts/{world['main_account']}", headers=h).status_code == 200
    renamed = client.patch(f"/v1/profiles/{world['mine']['profileId']}", headers=h, json={"name": "Renamed"})
    assert renamed.status_code == 200
    assert renamed.json()["name"] == "Renamed"


def test_profile_scoped_key_cannot_create_profiles_or_full_keys(client, world):
    h = bearer(world["scoped"])
    assert client.post("/v1/profiles", headers=h, json={"name": "Sneaky"}).status_code == 403
    assert client.post("/v1/api-keys", headers=h, json={"name": "escalate"}).status_code == 403
    assert client.post("/v1/api-keys", headers=h, json={"name": "wider", "scope": "profiles",
                                                         "profileIds": [world["second_profile"]]}).status_code == 403
    narrow = client.post("/v1/api-keys", headers=h, json={"name": "same", "scope": "profiles",
                                                           "profileIds": [world["mine"]["profileId"]]})
    assert narrow.status_code == 201


def test_read_key_reads_but_every_write_is_403(client, world):
    h = bearer(world["read"])
    assert client.get("/v1/accounts", headers=h).status_code == 200
    assert client.get(f"/v1/profiles/{world['second_profile']}", headers=h).status_code == 200
    writes = [
        client.post("/v1/profiles", headers=h, json={"name": "x"}),
        client.patch(f"/v1/profiles/{world['second_profile']}", headers=h, json={"name": "x"}),
        client.delete(f"/v1/profiles/{world['second_profile']}", headers=h),
        client.post(f"/v1/accounts/{world['main_account']}/disconnect", headers=h),
        client.delete(f"/v1/accounts/{world['main_account']}/permanent", headers=h),
        client.post("/v1/api-keys", headers=h, json={"name": "x", "permission": "read"}),
    ]
    assert [w.status_code for w in writes] == [403] * len(writes)
    own_id = next(k["id"] for k in client.get("/v1/api-keys", headers=h).json()["data"] if k["permission"] == "read")
    assert client.delete(f"/v1/api-keys/{own_id}", headers=h).status_code == 403
    assert client.get(f"/v1/profiles/{world['second_profile']}", headers=h).json()["name"] == "Second brand"


def test_profile_scoped_key_lists_only_keys_within_its_profiles(client, world):
    ws = world["mine"]["workspaceId"]
    both = add_key(ws, scope="profiles", profile_ids=[world["mine"]["profileId"], world["second_profile"]])
    add_key(ws, scope="profiles", profile_ids=[world["second_profile"]])
    full = bearer(world["full"])
    everything = client.get("/v1/api-keys", headers=full).json()["data"]
    assert len(everything) == 5  # the owner's, read, scoped, both, second-only
    seen = client.get("/v1/api-keys", headers=bearer(world["scoped"])).json()
    assert [k["scope"] for k in seen["data"]] == ["profiles"]
    assert seen["data"][0]["profileIds"] == [world["mine"]["profileId"]]
    assert seen["pagination"]["total"] == 1
    assert all(k["prefix"] != both[:11] for k in seen["data"])
    wider = client.get("/v1/api-keys", headers=bearer(both)).json()["data"]
    assert sorted(len(k["profileIds"]) for k in wider) == [1, 1, 2]
    assert {k["scope"] for k in wider} == {"profiles"}


def test_a_list_filter_naming_a_profile_outside_the_keys_is_403(client, world):
    h = bearer(world["scoped"])
    for path in ("/v1/accounts", "/v1/conversations"):
        answer = client.get(path, headers=h, params={"profileId": world["second_profile"]})
        assert answer.status_code == 403, path
        assert answer.json()["error"]["code"] == "forbidden"
        own = client.get(path, headers=h, params={"profileId": world["mine"]["profileId"]})
        assert own.status_code == 200, path
    listed = client.get("/v1/accounts", headers=h, params={"profileId": world["mine"]["profileId"]}).json()
    assert [a["id"] for a in listed["data"]] == [world["main_account"]]
