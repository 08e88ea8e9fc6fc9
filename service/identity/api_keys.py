"""API keys: created (the secret shown once), listed, revoked."""

from __future__ import annotations

from datetime import timedelta

from kit import clock, ids, tokens
from kit.errors import Forbidden, NotFound, ValidationFailed
from kit.pagination import Page, paginate
from service.common import audit
from service.identity.api_key_shapes import ApiKey as KeyRecord
from service.identity.api_key_shapes import ApiKeyCreated, ApiKeyRevoked
from service.identity.auth import Actor
from storage.models import ApiKey, Profile

MANAGE_KEYS = "manage API keys"


def create(
    *,
    actor: Actor,
    name: str,
    scope: str = "full",
    profile_ids: list[str] | None = None,
    permission: str = "read-write",
    expires_in_days: int | None = None,
) -> ApiKeyCreated:
    actor.require_write()
    actor.require_role("admin", MANAGE_KEYS)
    if scope == "full":
        actor.require_full_scope("create a key with scope full")
        if profile_ids:
            raise ValidationFailed.field("profileIds", "must be omitted with scope full")
        profile_ids = []
    else:
        if not profile_ids:
            raise ValidationFailed.field("profileIds", "must list at least one profile with scope profiles")
        profile_ids = list(dict.fromkeys(profile_ids))
        found = {
            row.id
            for row in Profile.select(Profile.id).where(
                Profile.id.in_(profile_ids), Profile.workspace == actor.workspace_id
            )
        }
        missing = [pid for pid in profile_ids if pid not in found]
        if missing:
            raise ValidationFailed.field("profileIds", "names profiles that do not exist: " + ", ".join(missing))
        if any(not actor.sees_profile(pid) for pid in profile_ids):
            raise Forbidden("A key cannot grant profiles that it cannot act on itself.")
    created = create_key(
        workspace_id=actor.workspace_id,
        name=name,
        scope=scope,
        profile_ids=profile_ids,
        permission=permission,
        expires_in_days=expires_in_days,
    )
    audit.record(actor, "key.created", target=("key", created.id),
                 details={"name": name, "scope": scope, "permission": permission})
    return created


def create_key(
    *,
    workspace_id: str,
    name: str,
    scope: str = "full",
    profile_ids: list[str] | None = None,
    permission: str = "read-write",
    expires_in_days: int | None = None,
) -> ApiKeyCreated:
    """Create a key without tenancy checks (bootstrap and the dashboard have already made them)."""
    secret = tokens.new_api_key()
    moment = clock.now()
    key = ApiKey.create(
        id=ids.new_id("key"),
        workspace=workspace_id,
        name=name,
        secret_hash=tokens.sha256_hex(secret),
        prefix=tokens.api_key_prefix(secret),
        scope=scope,
        profile_ids=profile_ids or [],
        permission=permission,
        created_at=moment,
        updated_at=moment,
        expires_at=moment + timedelta(days=expires_in_days) if expires_in_days else None,
    )
    return ApiKeyCreated(**dict(KeyRecord.model_validate(key)), key=secret)


def list_keys(*, actor: Actor, page: int | None = None, limit: int | None = None) -> Page:
    """The workspace's keys; a key limited to profiles sees only keys whose profiles lie within its own
    (not the workspace-wide keys, nor keys of profiles it cannot act on)."""
    actor.require_role("admin", MANAGE_KEYS)
    query = ApiKey.select().where(ApiKey.workspace == actor.workspace_id)
    if actor.profile_ids is not None:
        # profile_ids is a JSON list: few keys per workspace, so the rule is applied here, not in SQL.
        candidates = ApiKey.select(ApiKey.id, ApiKey.profile_ids).where(
            ApiKey.workspace == actor.workspace_id, ApiKey.scope == "profiles")
        visible = [key.id for key in candidates
                   if key.profile_ids and all(actor.sees_profile(pid) for pid in key.profile_ids)]
        query = query.where(ApiKey.id.in_(visible))
    query = query.order_by(ApiKey.created_at.desc(), ApiKey.id.desc())
    return paginate(query, page=page, limit=limit, record=KeyRecord)


def revoke(*, actor: Actor, key_id: str) -> ApiKeyRevoked:
    actor.require_role("admin", MANAGE_KEYS)
    key = ApiKey.get_or_none(ApiKey.id == key_id, ApiKey.workspace == actor.workspace_id)
    if key is None:
        raise NotFound("No API key with that id.")
    actor.require_write()
    # A key limited to profiles must not be able to revoke the keys that administer the workspace.
    if key.scope == "full":
        actor.require_full_scope("revoke a key with scope full")
    elif any(not actor.sees_profile(pid) for pid in key.profile_ids or []):
        raise Forbidden("This key cannot revoke a key with profiles outside its own.")
    if key.revoked_at is None:
        key.revoked_at = key.updated_at = clock.now()
        key.save()
        audit.record(actor, "key.revoked", target=("key", key.id), details={"name": key.name})
    return ApiKeyRevoked.model_validate(key)
