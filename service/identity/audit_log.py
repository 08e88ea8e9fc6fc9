"""Reading the audit log (owners and admins, and workspace-wide keys), and its retention.

Rows are written by `service.common.audit.record` in the transaction of each change. A sign-in
belongs to no one workspace: each workspace's log shows the sign-ins of its members. Labels (an
e-mail, a key's name, a client's name) are looked up when the log is read, so a row stays small.
"""

from __future__ import annotations

from typing import Any

from peewee import fn

from kit import clock, ids, scheduling
from kit.errors import FieldProblem, ValidationFailed
from kit.pagination import Page, records, window
from service.common.configured import Configured
from service.identity.audit_shapes import AuditEntry as EntryRecord
from service.identity.auth import Actor
from storage.db import db
from storage.models import ApiKey, AuditEntry, Membership, OAuthClient, OAuthGrant, User

settings = Configured(__name__)  # handed in by the composition root (wire)
READ_AUDIT = "read the audit log"
BATCH = 1000


def list_entries(*, actor: Actor, page: int | None = None, limit: int | None = None, action: str | None = None,
                 actor_id: str | None = None, from_: str | None = None, to: str | None = None) -> Page:
    """Newest first, filtered by action, by who acted, and by `[from, to)`."""
    actor.require_role("admin", READ_AUDIT)
    actor.require_full_scope(READ_AUDIT)
    problems: list[FieldProblem] = []
    start, end = scheduling.query_instant(from_, "from", problems), scheduling.query_instant(to, "to", problems)
    if problems:
        raise ValidationFailed("Some fields are not valid.", details=problems)
    page, limit, offset = window(page, limit)
    people = Membership.select(Membership.user).where(Membership.workspace == actor.workspace_id)
    query = AuditEntry.select().where(
        (AuditEntry.workspace == actor.workspace_id)
        | (AuditEntry.workspace.is_null() & AuditEntry.user_id.in_(people)))
    if action is not None:
        query = query.where(AuditEntry.action == action)
    if actor_id is not None:
        query = query.where(AuditEntry.actor_id == actor_id)
    if start is not None:
        query = query.where(AuditEntry.at >= start)
    if end is not None:
        query = query.where(AuditEntry.at < end)
    total = query.count()
    rows = list(query.order_by(AuditEntry.id.desc()).paginate(page, limit)) if offset < total else []
    return Page(EntryRecord, records(EntryRecord, _shaped(rows)), page, limit, total)


def _shaped(rows: list[AuditEntry]) -> list[dict[str, Any]]:
    labels = _labels(rows)
    return [{
        "id": row.id, "at": row.at,
        "actor": {"type": row.actor_type, "id": row.actor_id,
                  "label": row.actor_label or labels.get((row.actor_type, row.actor_id, row.user_id))},
        "action": row.action, "target": {"type": row.target_type, "id": row.target_id},
        "ip": row.ip, "details": row.details,
    } for row in rows]


def _labels(rows: list[AuditEntry]) -> dict[tuple[str, str | None, str | None], str]:
    """Who each row's actor is, in words: a person's e-mail, a key's name and prefix, a client's
    name (for whom it acted)."""
    users = {row.user_id for row in rows if row.user_id}
    keys = {row.actor_id for row in rows if row.actor_type == "key" and row.actor_id}
    clients = {row.actor_id for row in rows if row.actor_type == "oauth_client" and row.actor_id}
    emails = {u.id: u.email for u in User.select(User.id, User.email).where(User.id.in_(list(users)))} if users else {}
    names = ({k.id: f"{k.name} ({k.prefix}…)" for k in ApiKey.select(ApiKey.id, ApiKey.name, ApiKey.prefix)
              .where(ApiKey.id.in_(list(keys)))} if keys else {})
    client_names: dict[str, str] = {}
    if clients:
        for registered in OAuthClient.select(OAuthClient.client_id, OAuthClient.client_name).where(
                OAuthClient.client_id.in_(list(clients))):
            client_names[registered.client_id] = registered.client_name or registered.client_id
        granted: list[tuple[str, str | None]] = list(
            OAuthGrant.select(OAuthGrant.client_id, fn.MAX(OAuthGrant.client_name))
            .where(OAuthGrant.client_id.in_(list(clients))).group_by(OAuthGrant.client_id).tuples())  # type: ignore[arg-type]
        for client_id, name in granted:
            client_names.setdefault(client_id, name or client_id)
    out: dict[tuple[str, str | None, str | None], str] = {}
    for row in rows:
        key = (row.actor_type, row.actor_id, row.user_id)
        if row.actor_type == "user" and row.user_id in emails:
            out[key] = emails[row.user_id]
        elif row.actor_type == "key" and row.actor_id in names:
            out[key] = names[row.actor_id]
        elif row.actor_type == "oauth_client" and row.actor_id:
            shown = client_names.get(row.actor_id, row.actor_id)
            out[key] = f"{shown} for {emails[row.user_id]}" if row.user_id in emails else shown
        elif row.actor_type == "system":
            out[key] = "Switchboard"
    return out


def forget_old(*, limit: int | None = None) -> int:
    """Delete up to `limit` rows older than `SWITCHBOARD_AUDIT_RETENTION_DAYS` (0: kept for ever);
    ids begin with their millisecond, so the primary key finds them."""
    days = settings().audit_retention_days
    if days <= 0:
        return 0
    before = ids.first_at("aud", clock.epoch() - days * 86400)
    with db.atomic():
        doomed = AuditEntry.select(AuditEntry.id).where(AuditEntry.id < before).order_by(AuditEntry.id).limit(
            limit or BATCH)
        return int(AuditEntry.delete().where(AuditEntry.id.in_(doomed)).execute())
