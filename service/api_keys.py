"""API keys: created (the secret shown once), listed, revoked."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from service import clock, ids, tokens
from service.auth import Actor
from service.errors import Forbidden, NotFound, ValidationFailed
from service.pagination import Page, paginate
from service.validation import (
    ID,
    INSTANT,
    NULLABLE_INSTANT,
    Array,
    Int,
    Obj,
    Str,
    record,
)
from storage.models import ApiKey, Profile

SCOPES = ("full", "profiles")
PERMISSIONS = ("read-write", "read")

CREATE = Obj(
    name="CreateApiKey",
    fields={
        "name": Str(min_length=1, max_length=200),
        "scope": Str(enum=SCOPES, description="`full`: every profile, also later ones (default)."),
        "profileIds": Array(items=ID, description="Required with scope `profiles`."),
        "permission": Str(enum=PERMISSIONS, description="Default `read-write`."),
        "expiresInDays": Int(minimum=1, maximum=3650),
    },
    required=("name",),
)

_COMMON = {
    "id": ID,
    "name": Str(),
    "prefix": Str(description="`sk_` and the first 8 hex characters of the key."),
    "scope": Str(enum=SCOPES),
    "profileIds": Array(items=ID),
    "permission": Str(enum=PERMISSIONS),
    "expiresAt": NULLABLE_INSTANT,
}
CREATED = record(
    "ApiKeyCreated",
    {**_COMMON, "key": Str(description="The secret; shown in this answer only."), "createdAt": INSTANT,
     "updatedAt": INSTANT},
)
RECORD = record(
    "ApiKey",
    {**_COMMON, "createdAt": INSTANT, "updatedAt": INSTANT, "lastUsedAt": NULLABLE_INSTANT,
     "revokedAt": NULLABLE_INSTANT},
)
REVOKED = record("ApiKeyRevoked", {"id": ID, "revokedAt": INSTANT})


def to_record(key: ApiKey) -> dict[str, Any]:
    return {
        "id": key.id,
        "name": key.name,
        "prefix": key.prefix,
        "scope": key.scope,
        "profileIds": list(key.profile_ids or []),
        "permission": key.permission,
        "createdAt": clock.iso(key.created_at),
        "updatedAt": clock.iso(key.updated_at),
        "lastUsedAt": clock.iso(key.last_used_at),
        "expiresAt": clock.iso(key.expires_at),
        "revokedAt": clock.iso(key.revoked_at),
    }


def create(
    *,
    actor: Actor,
    name: str,
    scope: str = "full",
    profileIds: list[str] | None = None,
    permission: str = "read-write",
    expiresInDays: int | None = None,
) -> dict[str, Any]:
    actor.require_write()
    if scope == "full":
        actor.require_full_scope("create a key with scope full")
        if profileIds:
            raise ValidationFailed.field("profileIds", "must be omitted with scope full")
        profile_ids: list[str] = []
    else:
        if not profileIds:
            raise ValidationFailed.field("profileIds", "must list at least one profile with scope profiles")
        profile_ids = list(dict.fromkeys(profileIds))
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
    return create_key(
        workspace_id=actor.workspace_id,
        name=name,
        scope=scope,
        profile_ids=profile_ids,
        permission=permission,
        expires_in_days=expiresInDays,
    )


def create_key(
    *,
    workspace_id: str,
    name: str,
    scope: str = "full",
    profile_ids: list[str] | None = None,
    permission: str = "read-write",
    expires_in_days: int | None = None,
) -> dict[str, Any]:
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
    out = to_record(key)
    del out["lastUsedAt"], out["revokedAt"]
    return {**out, "key": secret}


def list_keys(*, actor: Actor, page: int | None = None, limit: int | None = None) -> Page:
    """The workspace's keys; a key limited to profiles sees only keys whose profiles lie within its own
    (not the workspace-wide keys, nor keys of profiles it cannot act on)."""
    query = ApiKey.select().where(ApiKey.workspace == actor.workspace_id)
    if actor.profile_ids is not None:
        # profile_ids is a JSON list: few keys per workspace, so the rule is applied here, not in SQL.
        candidates = ApiKey.select(ApiKey.id, ApiKey.profile_ids).where(
            ApiKey.workspace == actor.workspace_id, ApiKey.scope == "profiles")
        visible = [key.id for key in candidates
                   if key.profile_ids and all(actor.sees_profile(pid) for pid in key.profile_ids)]
        query = query.where(ApiKey.id.in_(visible))
    query = query.order_by(ApiKey.created_at.desc(), ApiKey.id.desc())
    return paginate(query, page=page, limit=limit, render=to_record)


def revoke(*, actor: Actor, key_id: str) -> dict[str, Any]:
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
    return {"id": key.id, "revokedAt": clock.iso(key.revoked_at)}
