from tests.conftest import bearer


def test_workspaces_answer_for_a_fresh_key(client, tenant):
    answer = client.get("/v1/workspaces", headers=bearer(tenant["apiKey"]))
    assert answer.status_code == 200
    assert answer.json()["data"][0]["id"] == tenant["workspaceId"]
