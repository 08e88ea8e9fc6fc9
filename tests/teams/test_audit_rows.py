"""The audit row of each change: every action below, made through /v1 with the owner's key (or MCP
by a person), leaves one row naming the action, what it changed and who did it; a change that is
refused leaves none, as the row is written in the change's own transaction."""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Callable
from typing import Any

import pytest

from kit import clock
from storage.db import connection
from storage.models import Event
from tests.conftest import bearer
from tests.support.factories import add_account
from tests.support.oauth_flow import call_tool_raw
from tests.support.posts import PNG
from tests.support.webhook_receiver import wait_for
from tests.teams.people import join, mcp_token

pytestmark = pytest.mark.shared_service

Do = Callable[[Any, dict[str, str]], str]  # (client, world) -> the id of what the action changed


def _made(client, world, path: str, body: dict[str, Any]) -> str:
    answer = client.post(path, json=body, headers=bearer(world["apiKey"]))
    assert answer.status_code in (200, 201), answer.text
    return str(answer.json()["id"])


def _ok(answer) -> None:
    assert answer.status_code in (200, 201, 202, 204), answer.text


def _broadcast(client, world) -> str:
    return _made(client, world, "/v1/broadcasts", {"accountId": world["account"], "name": "News", "text": "Hi"})


def _sequence(client, world) -> str:
    return _made(client, world, "/v1/sequences", {"accountId": world["account"], "name": "Welcome",
                                                  "trigger": "conversation_started",
                                                  "steps": [{"delayMinutes": 60, "text": "Welcome"}]})


def _post(client, world) -> str:
    return _made(client, world, "/v1/posts", {"content": "Draft", "targets": [
        {"accountId": world["account"], "options": {"chatId": "@brand"}}]})


def _act(method: str, path: str, make: Do | None = None, body: dict[str, Any] | None = None) -> Do:
    """An action on a thing `make` made first (its id fills `{id}` in `path`)."""
    def do(client, world) -> str:
        thing = make(client, world) if make else ""
        sent = json.loads(json.dumps(body).replace("{account}", world["account"])) if body else None
        answer = client.request(method, path.replace("{id}", thing).replace("{account}", world["account"]),
                                json=sent, headers=bearer(world["apiKey"]))
        _ok(answer)
        return thing or world["account"]
    return do


def _uploaded(client, world) -> str:
    key = bearer(world["apiKey"])
    started = client.post("/v1/media/uploads", json={"filename": "a.png", "contentType": "image/png",
                                                     "size": len(PNG)}, headers=key).json()
    assert client.put(started["uploadUrl"], content=PNG).status_code == 200
    done = client.post(f"/v1/media/uploads/{started['token']}/complete", headers=key)
    _ok(done)
    return str(done.json()["id"])


def _profile(client, world) -> str:
    return _made(client, world, "/v1/profiles", {"name": "Client B"})


# (the action's name in the log, the target's type, how to do it)
ACTIONS: list[tuple[str, str, Do]] = [
    ("broadcast.created", "broadcast", _broadcast),
    ("broadcast.updated", "broadcast", _act("PUT", "/v1/broadcasts/{id}", _broadcast, {"name": "Renamed"})),
    ("broadcast.started", "broadcast", _act("PUT", "/v1/broadcasts/{id}", _broadcast, {"sendNow": True})),
    ("broadcast.cancelled", "broadcast", _act("POST", "/v1/broadcasts/{id}/cancel", _act(
        "PUT", "/v1/broadcasts/{id}", _broadcast, {"scheduledFor": "2999-01-01T09:00:00Z"}))),
    ("broadcast.deleted", "broadcast", _act("DELETE", "/v1/broadcasts/{id}", _broadcast)),
    ("sequence.created", "sequence", _sequence),
    ("sequence.updated", "sequence", _act("PUT", "/v1/sequences/{id}", _sequence, {"status": "paused"})),
    ("sequence.deleted", "sequence", _act("DELETE", "/v1/sequences/{id}", _sequence)),
    ("sequence.enrolled", "sequence", lambda client, world: _act(
        "POST", "/v1/sequences/{id}/enroll", _sequence, {"conversationId": world["conversation"]})(client, world)),
    ("media.uploaded", "media", _uploaded),
    ("media.deleted", "media", _act("DELETE", "/v1/media/{id}", _uploaded)),
    ("post.created", "post", _post),
    ("post.updated", "post", _act("PUT", "/v1/posts/{id}", _post, {"content": "Changed", "targets": [
        {"accountId": "{account}", "options": {"chatId": "@brand"}}]})),
    ("post.deleted", "post", _act("DELETE", "/v1/posts/{id}", _post)),
    ("queue.updated", "account", _act("PUT", "/v1/accounts/{account}/queue", None,
                                      {"timezone": "Europe/Paris", "slots": [{"weekday": 1, "time": "09:30"}]})),
    ("profile.created", "profile", _profile),
    ("profile.renamed", "profile", _act("PATCH", "/v1/profiles/{id}", _profile, {"name": "Client C"})),
    ("profile.deleted", "profile", _act("DELETE", "/v1/profiles/{id}", _profile)),
    ("conversation.started", "conversation", lambda client, world: _made(
        client, world, "/v1/inbox/conversations", {"accountId": world["account"], "contactHandle": "@bo"})),
]


@pytest.fixture
def world(client, tenant) -> dict[str, str]:
    account = add_account(tenant["workspaceId"], tenant["profileId"], platform="telegram")
    conversation = _made(client, {**tenant}, "/v1/inbox/conversations", {"accountId": account, "contactHandle": "@ann"})
    return {**tenant, "account": account, "conversation": conversation}


def _rows(client, world, action: str) -> list[dict[str, Any]]:
    answer = client.get("/v1/audit-log", params={"action": action}, headers=bearer(world["apiKey"]))
    assert answer.status_code == 200, answer.text
    return answer.json()["data"]


@pytest.mark.parametrize(("action", "target_type", "do"), ACTIONS, ids=[row[0] for row in ACTIONS])
def test_each_change_leaves_its_row(client, world, action, target_type, do):
    target = do(client, world)
    rows = _rows(client, world, action)
    assert [(row["target"], row["actor"]["type"]) for row in rows if row["target"]["id"] != world["conversation"]] \
        == [({"type": target_type, "id": target}, "key")]
    assert rows[0]["actor"]["label"].startswith("Bootstrap key (sk_") and rows[0]["ip"] == "127.0.0.1"


def test_a_refused_change_leaves_no_row(client, world):
    broadcast = _broadcast(client, world)
    client.put(f"/v1/broadcasts/{broadcast}", json={"scheduledFor": "2999-01-01T09:00:00Z"},
               headers=bearer(world["apiKey"]))
    refused = client.delete(f"/v1/broadcasts/{broadcast}", headers=bearer(world["apiKey"]))
    assert refused.status_code == 409
    assert _rows(client, world, "broadcast.deleted") == []


def test_a_person_approving_through_mcp_is_the_row_s_actor(client, live, world):
    switched = client.patch(f"/v1/workspaces/{world['workspaceId']}/settings", json={"postApproval": True},
                            headers=bearer(world["apiKey"]))
    assert switched.status_code == 200
    member = mcp_token(live.url, join(client, world, "member"), world["workspaceId"])
    admin_person = join(client, world, "admin")
    admin = mcp_token(live.url, admin_person, world["workspaceId"])
    made = call_tool_raw(client, member, "create_post", {"content": "Sale", "targets": [
        {"accountId": world["account"], "options": {"chatId": "@brand"}}], "scheduledFor": "2999-01-01T09:00:00Z"})
    post = made.json()["result"]["structuredContent"]
    assert post["status"] == "pending_approval"
    rejected = call_tool_raw(client, admin, "reject_post", {"postId": post["id"], "reason": "Off brand"})
    assert rejected.json()["result"]["structuredContent"]["status"] == "rejected"
    rows = _rows(client, world, "post.rejected")
    assert [(row["actor"]["type"], row["target"]["id"], row["details"]) for row in rows] == [
        ("oauth_client", post["id"], {"reason": "Off brand"})]
    assert _rows(client, world, "post.created")[0]["actor"]["type"] == "oauth_client"
    with connection():  # the same events as /v1's rejection
        events = [e.type for e in Event.select().where(Event.workspace == world["workspaceId"]).order_by(Event.id)
                  if (e.data or {}).get("id") == post["id"]]
    assert events == ["post.approval_requested", "post.rejected"]


def test_a_scheduled_broadcast_that_comes_due_is_started_by_the_service(client, world):
    soon = (dt.datetime.now(dt.UTC) + dt.timedelta(minutes=1)).isoformat()
    broadcast = _made(client, world, "/v1/broadcasts", {"accountId": world["account"], "name": "Later", "text": "Hi",
                                                        "scheduledFor": soon})
    clock.advance(120)  # past its time
    wait_for(lambda: _rows(client, world, "broadcast.started"))
    rows = _rows(client, world, "broadcast.started")
    assert [(row["target"]["id"], row["actor"]["type"]) for row in rows] == [(broadcast, "system")]
