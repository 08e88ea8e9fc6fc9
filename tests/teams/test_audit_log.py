"""The audit log: each change and sign-in with who did it, read through /v1 by owners, admins and
workspace-wide keys, with filters."""

from __future__ import annotations

import httpx2
import pytest

from tests.conftest import bearer
from tests.support.factories import add_key
from tests.support.oauth_flow import browser_sign_in, email_of, hidden
from tests.teams.people import invite, join

pytestmark = pytest.mark.shared_service


def _log(client, key, **query) -> list[dict]:
    answer = client.get("/v1/audit-log", params=query, headers=bearer(key))
    assert answer.status_code == 200, answer.text
    return answer.json()["data"]


def test_a_key_made_and_revoked_is_logged_with_the_key_that_did_it(client, tenant):
    made = client.post("/v1/api-keys", json={"name": "CI"}, headers=bearer(tenant["apiKey"])).json()
    client.delete(f"/v1/api-keys/{made['id']}", headers=bearer(tenant["apiKey"]))
    rows = _log(client, tenant["apiKey"])
    assert [(row["action"], row["target"]) for row in rows[:2]] == [
        ("key.revoked", {"type": "key", "id": made["id"]}), ("key.created", {"type": "key", "id": made["id"]})]
    assert rows[0]["actor"]["type"] == "key" and rows[0]["actor"]["label"].startswith("Bootstrap key (sk_")
    assert rows[0]["ip"] == "127.0.0.1"


def test_invitations_and_joins_are_logged_and_filtered_by_action(client, tenant):
    person = join(client, tenant, "member")
    invited = _log(client, tenant["apiKey"], action="member.invited")
    assert [row["details"]["email"] for row in invited] == [person["email"]]
    joined = _log(client, tenant["apiKey"], action="member.joined")
    assert [(row["actor"]["type"], row["actor"]["id"], row["actor"]["label"]) for row in joined] == [
        ("user", person["userId"], person["email"])]


def test_sign_ins_good_and_refused_reach_the_members_workspace(client, live, tenant):
    email = email_of(tenant["userId"])
    with httpx2.Client(base_url=live.url, timeout=30) as http:
        page = http.get("/dashboard/login")
        refused = http.post("/dashboard/login", data={"email": email, "password": "wrong password",
                                                       "csrf_token": hidden(page.text, "csrf_token")})
        assert refused.status_code == 401
        browser_sign_in(http, email, "correct horse")
    rows = _log(client, tenant["apiKey"], actorId=tenant["userId"])
    assert [row["action"] for row in rows[:2]] == ["signin.succeeded", "signin.failed"]
    assert rows[1]["details"] == {"method": "password", "reason": "wrong e-mail or password"}


def test_the_window_filters_and_a_bad_instant_is_a_422(client, tenant):
    invite(client, tenant, "viewer")
    assert _log(client, tenant["apiKey"], **{"from": "2999-01-01T00:00:00Z"}) == []
    assert len(_log(client, tenant["apiKey"], to="2999-01-01T00:00:00Z")) >= 1
    bad = client.get("/v1/audit-log", params={"from": "yesterday"}, headers=bearer(tenant["apiKey"]))
    assert bad.status_code == 422 and bad.json()["error"]["details"][0]["field"] == "from"


def test_only_workspace_wide_keys_read_it_and_another_workspace_sees_nothing(client, tenant, other_tenant):
    invite(client, tenant, "viewer")
    limited = add_key(tenant["workspaceId"], scope="profiles", profile_ids=[tenant["profileId"]])
    assert client.get("/v1/audit-log", headers=bearer(limited)).status_code == 403
    assert _log(client, other_tenant["apiKey"], action="member.invited") == []


def test_rows_past_the_retention_go(client, tenant, live):
    from dataclasses import replace

    from service.identity import audit_log
    from storage.db import connection, db
    from storage.models import AuditEntry

    invite(client, tenant, "viewer")
    with connection(), db.atomic():  # made long ago, by its id's millisecond
        for row in AuditEntry.select().where(AuditEntry.workspace == tenant["workspaceId"],
                                             AuditEntry.action == "member.invited"):
            AuditEntry.update(id="aud_0000000000" + row.id[-16:]).where(AuditEntry.id == row.id).execute()
    before = audit_log.settings()
    audit_log.settings.configure(replace(before, audit_retention_days=400))
    try:
        with connection():
            assert audit_log.forget_old() >= 1
    finally:
        audit_log.settings.configure(before)
    assert _log(client, tenant["apiKey"], action="member.invited") == []


def test_the_scheduler_drains_a_backlog_of_old_rows_a_batch_a_tick(client, tenant, live, monkeypatch):
    """A backlog past the retention (an upgrade, a retention shortened) goes a batch every tick, not a
    batch a minute: a deployment writing more audit rows a minute than a batch would outgrow that."""
    from dataclasses import replace

    from service.identity import audit_log
    from storage.db import connection, db
    from storage.models import AuditEntry
    from tasks import retention

    for role in ("viewer", "member", "admin"):
        invite(client, tenant, role)
    with connection(), db.atomic():  # made long ago, by its id's millisecond
        for row in AuditEntry.select().where(AuditEntry.workspace == tenant["workspaceId"],
                                             AuditEntry.action == "member.invited"):
            AuditEntry.update(id="aud_0000000000" + row.id[-16:]).where(AuditEntry.id == row.id).execute()
    monkeypatch.setattr(audit_log, "BATCH", 2)
    monkeypatch.setattr(retention, "_audit", retention.Retention(audit_log.forget_old,
                                                                 batch=lambda: audit_log.BATCH))
    before = audit_log.settings()
    audit_log.settings.configure(replace(before, audit_retention_days=400))
    try:
        with connection():
            retention.forget_old_audit_entries()  # the first look: a whole batch, so more behind it
            retention.forget_old_audit_entries()  # the next tick takes the rest
    finally:
        audit_log.settings.configure(before)
    assert _log(client, tenant["apiKey"], action="member.invited") == []
