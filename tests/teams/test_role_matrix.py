"""The role matrix: each role (owner, admin, member, a member limited to a profile, viewer) against
every MCP tool and every dashboard page and action, and each kind of key against every /v1
operation, as declared below. The lists are read from the running service (its `tools/list`, its
OpenAPI document) and from the dashboard's route table, so a new tool, operation or page without a
row here fails.

A refusal is checked as a person meets it: a 403 that names the role it needs (a page in the
dashboard, the error envelope over MCP and /v1). What a role may use must never be refused for its
role (its answer may still be a 404 or a 422 for the made-up input: the check is who may, not what).
/v1 takes API keys only, which have no role (only owners and admins make them) and keep their own
scope and permission: a `read` key is refused every write, as a viewer is, and a key limited to
profiles everything that needs the whole workspace, as a member limited to profiles is.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

import httpx2
import pytest

from dashboard.routes import table
from tests.conftest import bearer
from tests.support.factories import add_account, add_key, add_profile
from tests.support.oauth_flow import browser_sign_in, call_tool_raw, email_of, hidden
from tests.teams.people import invite, join, mcp_token, set_role

pytestmark = pytest.mark.shared_service

RANK = {"viewer": 0, "member": 1, "admin": 2, "owner": 3}
ROLES = ["owner", "admin", "member", "limited", "viewer"]  # `limited`: a member limited to one profile

World = dict[str, str]
Args = Callable[[World], dict[str, Any]]

# --- MCP: tool -> (the least role that may call it, its arguments) ---------------------------------
TOOLS: dict[str, tuple[str, Args]] = {
    "list_workspaces": ("viewer", lambda w: {}),
    "list_accounts": ("viewer", lambda w: {}),
    "get_publish_options": ("viewer", lambda w: {"accountId": w["account"]}),
    "list_templates": ("viewer", lambda w: {"accountId": w["account"]}),
    "create_post": ("member", lambda w: {"content": "Hello", "targets": [{"accountId": w["account"]}]}),
    "list_posts": ("viewer", lambda w: {}),
    "get_post": ("viewer", lambda w: {"postId": w["post"]}),
    "delete_post": ("member", lambda w: {"postId": w["post"]}),
    "retry_post": ("member", lambda w: {"postId": w["post"]}),
    "import_posts_csv": ("member", lambda w: {"csv": "content,accounts\nHi," + w["account"], "dryRun": True}),
    "approve_post": ("admin", lambda w: {"postId": w["post"]}),
    "reject_post": ("admin", lambda w: {"postId": w["post"], "reason": "Not on brand"}),
    "list_media": ("viewer", lambda w: {}),
    "import_media": ("member", lambda w: {"url": "https://media.invalid/a.jpg"}),
    "upload_media": ("member", lambda w: {"filename": "a.png", "contentType": "image/png", "dataBase64": "AA=="}),
    "list_conversations": ("viewer", lambda w: {}),
    "get_messages": ("viewer", lambda w: {"conversationId": w["conversation"]}),
    "start_conversation": ("member", lambda w: {"accountId": w["account"], "contactHandle": "@ann"}),
    "send_message": ("member", lambda w: {"conversationId": w["conversation"], "text": "Hi"}),
    "update_conversation": ("member", lambda w: {"conversationId": w["conversation"], "status": "resolved"}),
    "add_note": ("member", lambda w: {"conversationId": w["conversation"], "text": "Call back"}),
    "list_saved_replies": ("viewer", lambda w: {}),
    "create_broadcast": ("member", lambda w: {"accountId": w["account"], "name": "B", "text": "Hi"}),
    "list_broadcasts": ("viewer", lambda w: {}),
    "update_broadcast": ("member", lambda w: {"broadcastId": w["broadcast"], "name": "B2"}),
    "send_broadcast_now": ("member", lambda w: {"broadcastId": w["broadcast"]}),
    "cancel_broadcast": ("member", lambda w: {"broadcastId": w["broadcast"]}),
    "get_follower_analytics": ("viewer", lambda w: {}),
    "list_sequences": ("viewer", lambda w: {}),
    "create_sequence": ("member", lambda w: {"accountId": w["account"], "name": "S", "trigger": "conversation_started",
                                             "steps": [{"delayMinutes": 1, "text": "Hi"}]}),
    "update_sequence": ("member", lambda w: {"sequenceId": w["sequence"], "name": "S2"}),
    "enroll_in_sequence": ("member", lambda w: {"sequenceId": w["sequence"], "conversationId": w["conversation"]}),
    "list_comment_automations": ("viewer", lambda w: {}),
    "create_comment_automation": ("member", lambda w: {"accountId": w["account"], "name": "A", "dmText": "Hi"}),
    "update_comment_automation": ("member", lambda w: {"automationId": "ca_none", "name": "A2"}),
    "list_webhooks": ("admin", lambda w: {}),
    "create_webhook": ("admin", lambda w: {"url": "https://hooks.invalid/in"}),
    "delete_webhook": ("admin", lambda w: {"webhookId": w["webhook"]}),
}

# --- the dashboard: (method, route) -> the least role that may use it ------------------------------
ADMIN_ROUTES = {
    "/dashboard/accounts/connected", "/dashboard/accounts/connect/{platform}", "/dashboard/accounts/choose",
    "/dashboard/accounts/{id}/disconnect", "/dashboard/accounts/{id}/reconnect",
    "/dashboard/accounts/{id}/grants/{grant}", "/dashboard/profiles",
    "/dashboard/profiles/{id}/rename", "/dashboard/review/{id}/{decision:str}", "/dashboard/api-keys",
    "/dashboard/api-keys/{id}/revoke", "/dashboard/members", "/dashboard/members/{id}/role",
    "/dashboard/members/{id}/remove", "/dashboard/invitations/{id}/revoke", "/dashboard/audit-log",
    "/dashboard/webhooks", "/dashboard/webhooks/deliveries/{id}/redeliver", "/dashboard/webhooks/{id}",
    "/dashboard/webhooks/{id}/live", "/dashboard/webhooks/{id}/{action:str}",
}
MEMBER_PAGES = {
    "/dashboard/posts/new", "/dashboard/posts/{id}/edit", "/dashboard/broadcasts/new", "/dashboard/automations/new",
    "/dashboard/sequences/new", "/dashboard/posts/{id}/delete", "/dashboard/media/{id}/delete",
    "/dashboard/broadcasts/{id}/delete", "/dashboard/automations/{id}/delete", "/dashboard/sequences/{id}/delete",
    "/dashboard/posts/{id}/move", "/dashboard/automations/recent-posts",
}
ANYONE_POSTS = {"/dashboard/workspace", "/dashboard/settings/connected-apps/revoke", "/dashboard/invitations/{token}",
                "/dashboard/profile", "/dashboard/profile/browser-zone"}
READ_PAGES = {
    "/dashboard", "/dashboard/accounts", "/dashboard/inbox", "/dashboard/inbox/live", "/dashboard/inbox/{id}",
    "/dashboard/inbox/{id}/live", "/dashboard/posts", "/dashboard/posts/{id}", "/dashboard/accounts/{id}/queue",
    "/dashboard/calendar", "/dashboard/media", "/dashboard/broadcasts", "/dashboard/broadcasts/{id}",
    "/dashboard/broadcasts/{id}/live", "/dashboard/automations", "/dashboard/automations/{id}", "/dashboard/sequences",
    "/dashboard/sequences/{id}", "/dashboard/analytics", "/dashboard/settings/connected-apps",
    "/dashboard/invitations/{token}", "/dashboard/settings/connected-apps/revoke", "/dashboard/profile",
}


def least_for_route(method: str, path: str) -> str:
    if path in ADMIN_ROUTES:
        return "admin"
    if method == "POST":
        return "viewer" if path in ANYONE_POSTS else "member"
    if path in MEMBER_PAGES:
        return "member"
    assert path in READ_PAGES, f"no row in the role matrix for GET {path}"
    return "viewer"


# --- /v1: operation -> what it does --------------------------------------------------------------------
# `read`; `write` (the daily work: a read key is refused); `manage` (owners' and admins' in the
# dashboard and MCP; for keys, a write); `:workspace` when a key limited to profiles is refused it too,
# as it reaches beyond any profile. `open` operations need no key.
OPERATIONS: dict[str, str] = {
    "getHealth": "open", "getReadiness": "open",
    "createApiKey": "manage:workspace", "listApiKeys": "read", "revokeApiKey": "manage:workspace",
    "listWorkspaces": "read", "getWorkspaceSettings": "read", "updateWorkspaceSettings": "manage:workspace",
    "listProfiles": "read", "createProfile": "manage:workspace", "getProfile": "read", "updateProfile": "manage",
    "deleteProfile": "manage",
    "listAccounts": "read", "getAccount": "read", "disconnectAccount": "manage", "deleteAccountPermanently": "manage",
    "getPublishOptions": "read", "listInstagramConversations": "read", "listTemplates": "read",
    "startConnect": "read", "connectCallback": "open", "startGrantConnect": "manage", "grantConnectCallback": "open", "listConnectChoices": "read",
    "chooseConnectChoices": "manage", "connectTelegram": "manage", "connectWhatsApp": "manage",
    "subscribeWebhooks": "manage",
    "startConversation": "write", "listConversations": "read", "getConversation": "read",
    "updateConversation": "write", "listMessages": "read", "sendMessage": "write", "listNotes": "read",
    "addNote": "write",
    "createBroadcast": "write", "listBroadcasts": "read", "getBroadcast": "read", "updateBroadcast": "write",
    "deleteBroadcast": "write", "cancelBroadcast": "write", "listBroadcastRecipients": "read",
    "createPost": "write", "listPosts": "read", "getPost": "read", "updatePost": "write", "deletePost": "write",
    "retryPost": "write", "getPostingQueue": "read", "putPostingQueue": "write", "importPosts": "write",
    "approvePost": "manage:workspace", "rejectPost": "manage:workspace",
    "createUpload": "write", "putUploadBytes": "open", "completeUpload": "write", "getMedia": "read",
    "deleteMedia": "write", "listMedia": "read", "importMedia": "write",
    "listWebhookEvents": "read", "createWebhook": "manage:workspace", "listWebhooks": "read",
    "getWebhook": "read", "updateWebhook": "manage:workspace", "deleteWebhook": "manage:workspace",
    "rotateWebhookSecret": "manage:workspace", "testWebhook": "manage:workspace",
    "listWebhookDeliveries": "read", "redeliverWebhook": "manage:workspace",
    "getFollowerAnalytics": "read",
    "createCommentAutomation": "write", "listCommentAutomations": "read", "getCommentAutomation": "read",
    "updateCommentAutomation": "write", "deleteCommentAutomation": "write", "listCommentAutomationLogs": "read",
    "createSequence": "write", "listSequences": "read", "getSequence": "read", "updateSequence": "write",
    "deleteSequence": "write", "enrollInSequence": "write", "listSequenceEnrollments": "read",
    "listMembers": "read", "updateMember": "manage:workspace", "removeMember": "manage:workspace",
    "createInvitation": "manage:workspace", "listInvitations": "read:workspace",
    "revokeInvitation": "manage:workspace", "listAuditLog": "read:workspace",
    "listSavedReplies": "read", "createSavedReply": "write", "getSavedReply": "read", "updateSavedReply": "write",
    "deleteSavedReply": "write",
}


# --- the workspace every test acts in ----------------------------------------------------------------


@pytest.fixture
def world(client, tenant) -> World:
    """A fresh workspace with one of each thing, all in its main profile, made with the owner's key."""
    key = bearer(tenant["apiKey"])
    account = add_account(tenant["workspaceId"], tenant["profileId"], platform="telegram")

    def made(path: str, body: dict[str, Any]) -> str:
        answer = client.post(path, json=body, headers=key)
        assert answer.status_code in (200, 201), (path, answer.text)
        return str(answer.json()["id"])

    return {
        **tenant,
        "account": account,
        "conversation": made("/v1/inbox/conversations", {"accountId": account, "contactHandle": "@ann"}),
        "post": made("/v1/posts", {"content": "Draft", "targets": [{"accountId": account, "options": {"chatId": "@brand"}}]}),
        "broadcast": made("/v1/broadcasts", {"accountId": account, "name": "News", "text": "Hello"}),
        "sequence": made("/v1/sequences", {"accountId": account, "name": "Welcome", "trigger": "conversation_started",
                                           "steps": [{"delayMinutes": 5, "text": "Welcome"}]}),
        "webhook": made("/v1/webhooks", {"url": "https://127.0.0.1:9/in"}),
        "savedReply": made("/v1/saved-replies", {"name": "Thanks", "text": "Thanks!"}),
        "invitation": invite(client, tenant, "viewer")["id"],
        "otherProfile": add_profile(tenant["workspaceId"]),
        "spareMember": join(client, tenant, "viewer")["userId"],  # one the actions on members may change
    }


def _person(client, world: World, role: str) -> dict[str, str]:
    if role == "owner":
        return {"userId": world["userId"], "email": email_of(world["userId"]), "password": "correct horse"}
    if role == "limited":
        return join(client, world, "member", profileIds=[world["profileId"]])
    return join(client, world, role)


def _may(role: str, least: str) -> bool:
    return RANK["member" if role == "limited" else role] >= RANK[least]


def _named_role(text: str, least: str, role: str) -> bool:
    shown = "member" if role == "limited" else role
    return f"the {least} role" in text and f"your role in this workspace is {shown}" in text


# --- MCP ---------------------------------------------------------------------------------------------


def _tool_answer(client, token: str, name: str, arguments: dict[str, Any]) -> tuple[int, dict[str, Any]]:
    answer = call_tool_raw(client, token, name, arguments)
    if answer.status_code != 200:  # a read-only token at a write tool: refused before the tool, 403
        return answer.status_code, answer.json()
    return 200, answer.json()["result"].get("structuredContent") or {}


def test_every_tool_of_the_servers_list_has_a_row(client, tenant):
    listed = client.post("/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
                         headers={**bearer(tenant["apiKey"]), "Accept": "application/json, text/event-stream",
                                  "MCP-Protocol-Version": "2025-06-18"})
    assert sorted(tool["name"] for tool in listed.json()["result"]["tools"]) == sorted(TOOLS)


def _tools_wrong(client, token: str, world: World, role: str) -> list[tuple[Any, ...]]:
    """Each tool called with the person's token: what does not answer as the matrix says."""
    wrong: list[tuple[Any, ...]] = []
    for name, (least, arguments) in TOOLS.items():
        status, body = _tool_answer(client, token, name, arguments(world))
        error = body.get("error") or {}
        code = error.get("code", "ok") if status == 200 else body.get("error")
        if _may(role, least):
            if code in ("forbidden", "insufficient_scope"):
                wrong.append((name, "refused", body))
        elif status == 403:  # a viewer's read-only token: the scope challenge names what is missing
            if code != "insufficient_scope":
                wrong.append((name, "not refused as MCP refuses a missing scope", body))
        elif code != "forbidden" or not _named_role(body["error"]["message"], least, role):
            wrong.append((name, "allowed, or refused without naming the role", body))
    return wrong


def test_a_token_never_exceeds_a_lowered_role(client, live, world):
    person = _person(client, world, "admin")
    token = mcp_token(live.url, person, world["workspaceId"])
    assert _tool_answer(client, token, "list_webhooks", {})[1].get("error") is None
    set_role(world["workspaceId"], person["userId"], "member")
    for name in ("list_webhooks", "approve_post", "delete_webhook"):
        _, body = _tool_answer(client, token, name, TOOLS[name][1](world))
        assert body["error"]["code"] == "forbidden" and _named_role(body["error"]["message"], "admin", "member")
    set_role(world["workspaceId"], person["userId"], "viewer")
    _, body = _tool_answer(client, token, "add_note", TOOLS["add_note"][1](world))
    assert body["error"]["code"] == "forbidden" and _named_role(body["error"]["message"], "member", "viewer")
    notes = client.get(f"/v1/conversations/{world['conversation']}/notes", headers=bearer(world["apiKey"]))
    assert notes.json()["data"] == []


# --- the dashboard -----------------------------------------------------------------------------------


def _route_path(path: str, world: World) -> str:
    values = {"{id}": world["post"], "{platform}": "telegram", "{decision:str}": "approve", "{token}": "unknown",
              "{action:str}": "delete"}
    specific = {"/dashboard/accounts/{id}": world["account"], "/dashboard/inbox/{id}": world["conversation"],
                "/dashboard/broadcasts/{id}": world["broadcast"], "/dashboard/sequences/{id}": world["sequence"],
                "/dashboard/webhooks/{id}": world["webhook"], "/dashboard/members/{id}": world["spareMember"],
                "/dashboard/invitations/{id}": world["invitation"], "/dashboard/profiles/{id}": world["otherProfile"]}
    for prefix, value in specific.items():
        if path.startswith(prefix):
            path = prefix.replace("{id}", value) + path[len(prefix):]
    for name, value in values.items():
        path = path.replace(name, value)
    return path


def test_every_dashboard_route_has_a_row(live):
    for path, _view, methods in table(live.settings):
        for method in methods:
            least_for_route(method, path)  # asserts the row exists


def _pages_wrong(live, person: dict[str, str], world: World, role: str) -> list[tuple[Any, ...]]:
    """Each page and action opened by the person, signed in: what does not answer as the matrix says."""
    wrong: list[tuple[Any, ...]] = []
    with httpx2.Client(base_url=live.url, timeout=30) as browser:
        browser_sign_in(browser, person["email"], person["password"])
        csrf = hidden(browser.get("/dashboard/inbox", params={"workspace": world["workspaceId"]}).text, "csrf_token")
        for path, _view, methods in table(live.settings):
            for method in methods:
                least = least_for_route(method, path)
                url = _route_path(path, world)
                if method == "GET":
                    answer = browser.get(url, params={"workspace": world["workspaceId"]})
                else:
                    answer = browser.post(url, data={"csrf_token": csrf, "workspaceId": world["workspaceId"]})
                if _may(role, least):
                    if answer.status_code == 403:
                        wrong.append((method, path, "refused"))
                elif answer.status_code != 403 or "text/html" not in answer.headers["content-type"] or \
                        "You need another role" not in answer.text or not _named_role(answer.text, least, role):
                    wrong.append((method, path, answer.status_code, "not a 403 page naming the role"))
    return wrong


@pytest.mark.parametrize("role", ROLES)
def test_each_role_uses_exactly_the_tools_pages_and_actions_it_may(client, live, world, role):
    person = _person(client, world, role)
    token = mcp_token(live.url, person, world["workspaceId"])
    wrong = _tools_wrong(client, token, world, role) + _pages_wrong(live, person, world, role)
    assert not wrong, "\n" + "\n".join(map(repr, wrong))


def test_a_member_limited_to_a_profile_meets_404_outside_it(client, live, world):
    outside = add_account(world["workspaceId"], world["otherProfile"], platform="telegram")
    started = client.post("/v1/inbox/conversations", json={"accountId": outside, "contactHandle": "@zed"},
                          headers=bearer(world["apiKey"])).json()["id"]
    person = _person(client, world, "limited")
    with httpx2.Client(base_url=live.url, timeout=30) as browser:
        browser_sign_in(browser, person["email"], person["password"])
        page = browser.get(f"/dashboard/inbox/{started}", params={"workspace": world["workspaceId"]})
        assert page.status_code == 404
        listed = browser.get("/dashboard/inbox", params={"workspace": world["workspaceId"]}).text
        assert '<span class="who">zed</span>' not in listed and '<span class="who">ann</span>' in listed


# --- /v1 ---------------------------------------------------------------------------------------------


def _operations(client) -> list[tuple[str, str, dict[str, Any]]]:
    document = client.get("/v1/openapi.json").json()
    return [(method.upper(), path, operation) for path, item in document["paths"].items()
            for method, operation in item.items()]


# Bodies where the document's example would meet a rule beyond the key's kind (its made-up ids are
# replaced by the world's own, see `_v1_call`).
BODIES = {"updateMember": {"role": "member"}, "updateBroadcast": {"name": "Renamed"},
          "startConversation": {"accountId": "acc_2Yx8kQ4mN7pR1sT5", "contactHandle": "@cy"}}
# No valid input exists for it in a test's world (a selection is made by a platform's consent): a
# read key meets the unknown selection's 404 first, as any key does.
NOT_FOUND_FIRST = {"chooseConnectChoices"}


def _v1_call(client, key: str, method: str, path: str, operation: dict[str, Any], world: World) -> httpx2.Response:
    ids = {"/v1/api-keys/": world["spareKey"], "/v1/profiles/": world["profileId"],
           "/v1/webhooks/deliveries/": world["delivery"],
           "/v1/accounts/": world["account"], "/v1/conversations/": world["conversation"],
           "/v1/broadcasts/": world["broadcast"], "/v1/posts/": world["post"], "/v1/media/": "med_none",
           "/v1/webhooks/": world["webhook"], "/v1/comment-automations/": world["automation"],
           "/v1/sequences/": world["sequence"], "/v1/invitations/": world["invitation"],
           "/v1/saved-replies/": world["savedReply"], "/v1/workspaces/": world["workspaceId"],
           "/v1/members/": world["spareMember"]}
    url = path
    for prefix, value in ids.items():
        if url.startswith(prefix):
            url = re.sub(r"\{[A-Za-z]+\}", value, url, count=1)
    url = url.replace("{platform}", "telegram").replace("{accountId}", world["account"]).replace("{token}", "none")
    content = operation.get("requestBody", {}).get("content", {})
    headers = bearer(key)
    if "application/json" in content:
        body = BODIES.get(operation["operationId"]) or content["application/json"].get("example") or {}
        made_up = {"acc_2Yx8kQ4mN7pR1sT5": world["account"], "prf_2Yx8kQ4mN7pR1sT5": world["profileId"],
                   "conv_2Yx8kQ4mN7pR1sT5": world["conversation"], "ca_2Yx8kQ4mN7pR1sT5": world["automation"]}
        text = json.dumps(body)
        for example, real in made_up.items():
            text = text.replace(example, real)
        body = json.loads(text)
        return client.request(method, url, json=body, headers=headers)
    if content:
        media_type = next(iter(content))
        return client.request(method, url, content=b"content,accounts\n", headers={**headers, "Content-Type": media_type})
    return client.request(method, url, headers=headers)


@pytest.fixture
def keyed(client, world) -> World:
    """The world, with a key its operations may revoke and a webhook delivery to send again."""
    key = bearer(world["apiKey"])
    client.post(f"/v1/webhooks/{world['webhook']}/test", headers=key)
    deliveries = client.get(f"/v1/webhooks/{world['webhook']}/deliveries", headers=key).json()["data"]
    instagram = add_account(world["workspaceId"], world["profileId"], platform="instagram")
    automation = client.post("/v1/comment-automations", json={"accountId": instagram, "name": "Prices",
                                                              "matchType": "contains", "keywords": ["price"], "dmText": "Hi"},
                             headers=key)
    assert automation.status_code == 201, automation.text
    return {**world, "spareKey": client.post("/v1/api-keys", json={"name": "spare"}, headers=key).json()["id"],
            "delivery": deliveries[0]["id"], "automation": automation.json()["id"]}


def test_every_operation_of_the_document_has_a_row(client):
    assert sorted(operation["operationId"] for _, _, operation in _operations(client)) == sorted(OPERATIONS)


@pytest.mark.parametrize("kind", ["read", "profiles", "full"])
def test_each_kind_of_key_uses_exactly_the_operations_it_may(client, keyed, kind):
    key = {"full": keyed["apiKey"],
           "read": add_key(keyed["workspaceId"], permission="read"),
           "profiles": add_key(keyed["workspaceId"], scope="profiles", profile_ids=[keyed["profileId"]])}[kind]
    refused, allowed = [], []
    for method, path, operation in _operations(client):
        does = OPERATIONS[operation["operationId"]]
        if does != "open":
            no = (kind == "read" and not does.startswith("read")) or (kind == "profiles" and does.endswith(":workspace"))
            (refused if no else allowed).append((method, path, operation))
    wrong = []
    for method, path, operation in refused:  # first, while every thing they name is still there
        answer = _v1_call(client, key, method, path, operation, keyed)
        if operation["operationId"] in NOT_FOUND_FIRST and answer.status_code == 404:
            continue
        if answer.status_code != 403 or answer.json().get("error", {}).get("code") != "forbidden" or \
                set(answer.json()) != {"error"} or not answer.json()["error"]["message"]:
            wrong.append((method, path, answer.status_code, answer.text[:120]))
    for method, path, operation in allowed:
        answer = _v1_call(client, key, method, path, operation, keyed)
        if answer.status_code in (401, 403) or answer.status_code >= 500:
            wrong.append((method, path, answer.status_code, answer.text[:120]))
    assert not wrong, "\n" + "\n".join(map(repr, wrong))

