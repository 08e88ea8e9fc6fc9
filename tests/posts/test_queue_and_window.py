"""The posting queue (weekly slots per account, `addToQueue`) and the `from`/`to` window of
`GET /v1/posts` (CONTRACT section 3), through /v1 and MCP's `create_post` and `list_posts`."""

from __future__ import annotations

import datetime as dt
import threading
from zoneinfo import ZoneInfo

import httpx2
import pytest

from kit import clock
from tests.conftest import bearer
from tests.support.oauth_flow import call_tool_raw, hand_made_tokens
from tests.support.sandbox import connect_account

pytestmark = pytest.mark.shared_service


def _iso(moment: dt.datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def _every_day_at(*times: str) -> list[dict]:
    return [{"weekday": day, "time": t} for day in range(1, 8) for t in times]


def test_posts_added_to_the_queue_take_the_next_free_slots_one_each(client, tenant):
    headers = bearer(tenant["apiKey"])
    bot = connect_account(client, tenant, "telegram")
    x = connect_account(client, tenant, "x")
    target = [{"accountId": bot["id"], "options": {"chatId": "@news"}}]
    empty = client.get(f"/v1/accounts/{bot['id']}/queue", headers=headers).json()
    assert empty["slots"] == [] and empty["nextSlots"] == []
    no_queue = client.post("/v1/posts", headers=headers, json={"content": "Hi", "targets": target, "addToQueue": True})
    assert no_queue.status_code == 422
    assert no_queue.json()["error"]["details"][0]["field"] == "targets[0].accountId"

    slots = [{"weekday": 3, "time": "18:00"}, *_every_day_at("09:30"), {"weekday": 3, "time": "18:00"}]
    put = client.put(f"/v1/accounts/{bot['id']}/queue", headers=headers,
                     json={"timezone": "Europe/Paris", "slots": slots})
    assert put.status_code == 200, put.text
    queue = put.json()
    assert len(queue["slots"]) == 8 and queue["slots"][0] == {"weekday": 1, "time": "09:30"}
    paris = ZoneInfo("Europe/Paris")
    upcoming = [dt.datetime.fromisoformat(at.replace("Z", "+00:00")) for at in queue["nextSlots"]]
    assert len(upcoming) == 5 and upcoming == sorted(upcoming)
    assert {u.astimezone(paris).strftime("%H:%M") for u in upcoming} <= {"09:30", "18:00"}
    assert upcoming[0] > clock.now().replace(tzinfo=dt.UTC)

    made = [client.post("/v1/posts", headers=headers, json={"content": f"Tip {n}", "targets": target,
                                                            "addToQueue": True}) for n in range(3)]
    assert [m.status_code for m in made] == [201, 201, 201], made[0].text
    times = [m.json()["scheduledFor"] for m in made]
    assert [m.json()["status"] for m in made] == ["scheduled"] * 3
    assert times == queue["nextSlots"][:3]  # one slot each, in order: never two posts in one slot
    after = client.get(f"/v1/accounts/{bot['id']}/queue", headers=headers).json()
    assert after["nextSlots"][0] == queue["nextSlots"][3]

    # Deleting a queued post frees its slot for the next one.
    assert client.delete(f"/v1/posts/{made[1].json()['id']}", headers=headers).status_code == 200
    again = client.post("/v1/posts", headers=headers, json={"content": "Tip 4", "targets": target,
                                                            "addToQueue": True}).json()
    assert again["scheduledFor"] == times[1]

    both = client.post("/v1/posts", headers=headers, json={
        "content": "Both", "addToQueue": True, "scheduledFor": times[0], "targets": target})
    assert both.status_code == 422 and both.json()["error"]["details"][0]["field"] == "addToQueue"
    mixed = client.post("/v1/posts", headers=headers, json={
        "content": "Mixed", "addToQueue": True, "targets": [*target, {"accountId": x["id"]}]})
    assert mixed.status_code == 422 and mixed.json()["error"]["details"][0]["field"] == "targets[1].accountId"


def test_a_queue_refuses_bad_slots_and_zones(client, tenant):
    headers = bearer(tenant["apiKey"])
    bot = connect_account(client, tenant, "telegram")
    url = f"/v1/accounts/{bot['id']}/queue"
    cases = [({"timezone": "Mars/Olympus", "slots": []}, "timezone"),
             ({"slots": [{"weekday": 8, "time": "09:00"}]}, "slots[0].weekday"),
             ({"slots": [{"weekday": 1, "time": "24:00"}]}, "slots[0].time"),
             ({"slots": [{"weekday": 1, "time": "09:00"}] * 101}, "slots")]
    for body, field in cases:
        answer = client.put(url, headers=headers, json=body)
        assert answer.status_code == 422, (body, answer.text)
        assert answer.json()["error"]["details"][0]["field"] == field
    assert client.get("/v1/accounts/acc_nope/queue", headers=headers).status_code == 404


def test_the_window_keeps_posts_scheduled_or_published_in_it(client, tenant, browser):
    headers = bearer(tenant["apiKey"])
    bot = connect_account(client, tenant, "telegram")
    target = [{"accountId": bot["id"], "options": {"chatId": "@news"}}]
    now = clock.now()
    ids = {}
    for name, days in (("soon", 2), ("later", 20)):
        answer = client.post("/v1/posts", headers=headers, json={
            "content": name, "targets": target, "scheduledFor": _iso(now + dt.timedelta(days=days))})
        ids[name] = answer.json()["id"]
    ids["draft"] = client.post("/v1/posts", headers=headers, json={"content": "d", "targets": target}).json()["id"]

    def window(**query: str) -> list[str]:
        answer = client.get("/v1/posts", headers=headers, params=query)
        assert answer.status_code == 200, answer.text
        return [p["id"] for p in answer.json()["data"]]

    week = {"from": _iso(now), "to": _iso(now + dt.timedelta(days=7))}
    assert window(**week) == [ids["soon"]]
    assert window(**{"from": _iso(now + dt.timedelta(days=7))}) == [ids["later"]]
    assert set(window(to=_iso(now + dt.timedelta(days=30)))) == {ids["soon"], ids["later"]}
    assert len(window()) == 3  # no window: drafts too

    for query, field in (({"from": "yesterday"}, "from"), ({"to": "2026-13-01T00:00:00Z"}, "to"),
                         ({"from": "0001-01-01T00:00:00Z"}, "from"),
                         ({"from": week["to"], "to": week["from"]}, "to")):
        answer = client.get("/v1/posts", headers=headers, params=query)
        assert answer.status_code == 422, (query, answer.text)
        assert answer.json()["error"]["details"][0]["field"] == field

    _, tokens = hand_made_tokens(browser, workspace_id=tenant["workspaceId"])
    listed = call_tool_raw(browser, tokens["access_token"], "list_posts", week).json()["result"]
    assert [p["id"] for p in listed["structuredContent"]["data"]] == [ids["soon"]]
    queued = call_tool_raw(browser, tokens["access_token"], "create_post", {
        "content": "Queued by an assistant", "targets": target, "addToQueue": True}).json()["result"]
    assert queued["structuredContent"]["error"]["details"][0]["field"] == "targets[0].accountId"  # no queue yet


def test_posts_added_at_the_same_moment_never_share_a_slot(client, tenant, server_url):
    headers = bearer(tenant["apiKey"])
    page = connect_account(client, tenant, "facebook")
    client.put(f"/v1/accounts/{page['id']}/queue", headers=headers,
               json={"timezone": "UTC", "slots": _every_day_at("08:00", "12:00", "16:00", "20:00")})
    barrier = threading.Barrier(8)
    answers: list[httpx2.Response] = []

    def add(n: int) -> None:
        with httpx2.Client(base_url=server_url, timeout=60) as http:
            barrier.wait()
            answers.append(http.post("/v1/posts", headers=headers, json={
                "content": f"Concurrent {n}", "addToQueue": True, "targets": [{"accountId": page["id"]}]}))

    threads = [threading.Thread(target=add, args=(n,)) for n in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert [a.status_code for a in answers] == [201] * 8, [a.text for a in answers]
    times = sorted(a.json()["scheduledFor"] for a in answers)
    assert len(set(times)) == 8  # eight posts, eight slots
    queue = client.get(f"/v1/accounts/{page['id']}/queue", headers=headers).json()
    assert queue["nextSlots"][0] > times[-1]
