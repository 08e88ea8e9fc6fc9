from tests.conftest import bearer


def test_one(live):
    t = live.tenant()
    assert live.client.get("/v1/workspaces", headers=bearer(t["apiKey"])).status_code == 200


def test_two(live):
    t = live.tenant()
    r = live.client.get("/v1/workspaces", headers=bearer(t["apiKey"])).json()
    assert len(r["data"]) == 1
