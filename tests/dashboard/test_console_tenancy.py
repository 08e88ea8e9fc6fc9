"""Every dashboard route, tried by a person of one workspace on another workspace's things: a 404
page and nothing of the other workspace shown or changed, as on /v1. And every form refuses a post
without its CSRF token.

The routes are read from the dashboard itself, so a page added later without a case here fails."""

from __future__ import annotations

import re
from typing import Any

import httpx2
import pytest
from starlette.routing import Mount, Route

from dashboard import routes as dashboard
from tests.conftest import bearer
from tests.support.oauth_flow import hidden
from tests.support.sandbox import connect_account

pytestmark = pytest.mark.shared_service

# Routes of the person rather than of a workspace (their sign-in, their sessions, the apps they
# allowed, their list of workspaces, their profile), the static files and the 404 page itself: nothing
# to cross.
NOT_WORKSPACE_ROUTES = {
    "/dashboard/login", "/dashboard/logout", "/dashboard", "/dashboard/settings/connected-apps",
    "/dashboard/settings/connected-apps/revoke", "/dashboard/profile", "/dashboard/profile/browser-zone",
    "/dashboard/{rest:path}",
}
# What a path parameter names, for each route's family: filled with the other workspace's thing.
ACTIONS = {"GET": ("delete", "rotate-secret"), "POST": ("test", "enabled", "delete", "rotate-secret")}


def _routes(settings: Any) -> list[tuple[str, str]]:
    found = []
    for route in dashboard.build_routes(settings):
        if isinstance(route, Mount) or not isinstance(route, Route) or route.path in NOT_WORKSPACE_ROUTES:
            continue
        found += [(method, route.path) for method in sorted(route.methods or ()) if method != "HEAD"]
    return found


def _theirs(client: httpx2.Client, other: dict[str, str]) -> dict[str, str]:
    """The other workspace's account, conversation, webhook endpoint, delivery, key and profile."""
    auth = bearer(other["apiKey"])
    bot = connect_account(client, other, "telegram")
    client.post("/sandbox/telegram/inbound-message",
                json={"accountId": bot["id"], "from": {"id": "42", "name": "Secret Sam"}, "text": "private words"})
    (conversation,) = client.get("/v1/conversations", headers=auth).json()["data"]
    # Subscribed to an event nothing here causes: its log holds the test delivery alone, unless a
    # dashboard route sends or redelivers to it.
    hook = client.post("/v1/webhooks", headers=auth, json={"url": "https://localhost:9/theirs",
                                                           "events": ["sequence.completed"]}).json()
    delivery = client.post(f"/v1/webhooks/{hook['id']}/test", headers=auth).json()
    key = client.post("/v1/api-keys", headers=auth, json={"name": "their key"}).json()
    post = client.post("/v1/posts", headers=auth, json={
        "content": "their secret launch", "targets": [{"accountId": bot["id"], "options": {"chatId": "@theirs"}}]}).json()
    broadcast = client.post("/v1/broadcasts", headers=auth, json={
        "accountId": bot["id"], "name": "their broadcast", "text": "their secret offer"}).json()
    sequence = client.post("/v1/sequences", headers=auth, json={
        "accountId": bot["id"], "name": "their sequence", "trigger": "manual",
        "steps": [{"delayMinutes": 0, "text": "their secret step"}]}).json()
    insta = connect_account(client, other, "instagram")
    automation = client.post("/v1/comment-automations", headers=auth, json={
        "accountId": insta["id"], "name": "their automation", "matchType": "any", "dmText": "their secret dm"}).json()
    media = _their_media(client, auth)
    return {"account": bot["id"], "conversation": conversation["id"], "webhook": hook["id"],
            "delivery": delivery["id"], "key": key["id"], "profile": other["profileId"],
            "workspace": other["workspaceId"], "post": post["id"], "broadcast": broadcast["id"],
            "sequence": sequence["id"], "automation": automation["id"], "media": media}


PNG = bytes.fromhex("89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c4890000000d49444154789c6360000002"
                    "00010005fe02fea70000000049454e44ae426082")


def _their_media(client: httpx2.Client, auth: dict[str, str]) -> str:
    upload = client.post("/v1/media/uploads", headers=auth,
                         json={"filename": "their.png", "contentType": "image/png", "size": len(PNG)}).json()
    client.put(f"/v1/media/uploads/{upload['token']}", content=PNG)
    done = client.post(f"/v1/media/uploads/{upload['token']}/complete", headers=auth)
    assert done.status_code == 200, done.text
    return str(done.json()["mediaId"])


def _fill(path: str, theirs: dict[str, str], action: str) -> str:
    studio = {"/dashboard/posts": "post", "/dashboard/broadcasts": "broadcast", "/dashboard/sequences": "sequence",
              "/dashboard/automations": "automation", "/dashboard/media": "media"}
    family = ("delivery" if "/deliveries/" in path else "account" if path.startswith("/dashboard/accounts")
              else "conversation" if path.startswith("/dashboard/inbox") else "webhook" if "/webhooks" in path
              else "key" if "/api-keys" in path
              else next((name for prefix, name in studio.items() if path.startswith(prefix + "/")), "profile"))
    return (path.replace("{platform}", "telegram").replace("{action:str}", action)
            .replace("{id}", theirs[family]))


def _state(client: httpx2.Client, other: dict[str, str], theirs: dict[str, str]) -> dict[str, Any]:
    auth = bearer(other["apiKey"])
    return {
        "account": client.get(f"/v1/accounts/{theirs['account']}", headers=auth).json()["status"],
        "conversation": client.get(f"/v1/conversations/{theirs['conversation']}", headers=auth).json()["unreadCount"],
        "messages": client.get(f"/v1/conversations/{theirs['conversation']}/messages", headers=auth).json()["pagination"],
        "webhook": client.get(f"/v1/webhooks/{theirs['webhook']}", headers=auth).json(),
        "deliveries": client.get(f"/v1/webhooks/{theirs['webhook']}/deliveries", headers=auth).json()["pagination"],
        "keys": client.get("/v1/api-keys", headers=auth).json()["data"],
        "profiles": client.get("/v1/profiles", headers=auth).json()["data"],
        "post": client.get(f"/v1/posts/{theirs['post']}", headers=auth).json(),
        "broadcast": client.get(f"/v1/broadcasts/{theirs['broadcast']}", headers=auth).json(),
        "sequence": client.get(f"/v1/sequences/{theirs['sequence']}", headers=auth).json(),
        "enrollments": client.get(f"/v1/sequences/{theirs['sequence']}/enrollments", headers=auth).json(),
        "automation": client.get(f"/v1/comment-automations/{theirs['automation']}", headers=auth).json(),
        "media": client.get("/v1/media", headers=auth).json()["data"],
        "queue": client.get(f"/v1/accounts/{theirs['account']}/queue", headers=auth).json(),
    }


def test_no_dashboard_route_shows_or_changes_another_workspace(browser, client, tenant, other_tenant, live):
    theirs = _theirs(client, other_tenant)
    before = _state(client, other_tenant, theirs)
    tried = 0
    for method, template in _routes(live.settings):
        for action in ACTIONS[method] if "{action" in template else ("",):
            path = _fill(template, theirs, action)
            # Once naming their workspace, once our own with their things in it.
            for workspace in (theirs["workspace"], tenant["workspaceId"]):
                if method == "GET":
                    answer = browser.get(path, params={"workspace": workspace, "accountId": theirs["account"]})
                else:
                    page = browser.get("/dashboard/accounts")
                    answer = browser.post(path, data={
                        "csrf_token": hidden(page.text, "csrf_token"), "workspaceId": workspace,
                        "profileId": theirs["profile"], "botToken": "123456:AAtheirbot", "name": "taken over",
                        "url": "https://localhost:9/mine", "text": "hello from elsewhere", "enabled": "false",
                        "next": "/dashboard", "conversationId": theirs["conversation"],
                        "accountId": theirs["account"], "slots": "1 09:00", "status": "paused"})
                tried += 1
                # A page of our own workspace, or an action that makes something in it, answers; any
                # path naming their workspace or one of their things is a 404.
                ours = workspace == tenant["workspaceId"] and "{" not in template and not template.endswith("/connected")
                expected = {200, 201, 303, 422} if ours else {404}
                assert answer.status_code in expected, (method, path, workspace, answer.status_code)
                # The upload's steps answer the page's script in JSON (a refusal in words too); another
                # workspace named is the 404 page before them.
                kind = ("application/json", "text/html") if template.startswith("/dashboard/media/uploads") \
                    else ("text/html",)
                assert answer.status_code == 303 or answer.headers["content-type"].startswith(kind), path
                for secret in ("Secret Sam", "private words", theirs["conversation"], theirs["webhook"], theirs["key"],
                               "their secret", "their.png"):
                    assert secret not in answer.text, (method, path, secret)
    assert tried > 40
    assert _state(client, other_tenant, theirs) == before


def test_every_form_refuses_a_post_without_its_csrf_token(browser, tenant, live):
    mine = {"account": "acc_x", "conversation": "conv_x", "webhook": "wh_x", "delivery": "whd_x", "key": "key_x",
            "profile": tenant["profileId"], "workspace": tenant["workspaceId"], "post": "post_x", "broadcast": "bc_x",
            "sequence": "seq_x", "automation": "ca_x", "media": "med_x"}
    posts = [path for method, path in _routes(live.settings) if method == "POST"]
    posts += ["/dashboard/logout", "/dashboard/settings/connected-apps/revoke"]
    for template in posts:
        path = _fill(template, mine, "delete")
        answer = browser.post(path, data={"workspaceId": tenant["workspaceId"], "name": "x", "text": "x"})
        assert answer.status_code == 400, (path, answer.status_code)
        assert re.search(r"This form has expired", answer.text), path
    assert browser.get("/dashboard/accounts").status_code == 200  # still signed in: nothing was done


def test_a_signed_out_visitor_is_sent_to_sign_in_from_every_page(client, live):
    for method, template in _routes(live.settings):
        if method != "GET" or "{" in template:
            continue
        answer = client.get(template)
        assert answer.status_code == 303, template
        assert answer.headers["location"].startswith("/dashboard/login?next="), template


def test_the_same_person_switches_between_their_workspaces(browser, client, tenant, other_tenant):
    from storage.db import connection, db
    from storage.models import Membership

    with connection(), db.atomic():  # the owner of one workspace is made a member of the other
        Membership.create(user=tenant["userId"], workspace=other_tenant["workspaceId"], role="admin")
    page = browser.get("/dashboard/accounts")
    answer = browser.post("/dashboard/workspace", data={
        "csrf_token": hidden(page.text, "csrf_token"), "workspaceId": other_tenant["workspaceId"],
        "next": "/dashboard/inbox"})
    assert answer.status_code == 303
    assert answer.headers["location"] == f"/dashboard/inbox?workspace={other_tenant['workspaceId']}"
    # Remembered: the next page without a workspace in its address is the chosen one's.
    assert other_tenant["workspaceId"] in browser.get("/dashboard/webhooks").text
