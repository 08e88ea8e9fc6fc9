"""OAuth grants, codes and tokens as the authorisation server and the MCP resource server see them.

A *grant* is one person's consent to one client in one workspace (a "connected app" on the
dashboard). Codes and tokens descend from it. Secrets are random, prefixed, and stored only as
SHA-256 hashes; a lookup hashes what was presented. Revoking a grant revokes every token of it in
the same transaction, so the next /mcp request in any process is refused.

Authlib drives the protocol (oauth/server.py); this module keeps the rows and the rules that are
ours: single-use codes (a replay revokes what the code produced), refresh-token rotation with
reuse detection (a rotated refresh token presented again revokes the grant), resource binding.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from kit import clock, ids, tokens
from kit.errors import NotFound
from service.common import audit
from service.identity import roles
from service.identity.auth import Actor, person_actor
from storage import hot
from storage.db import db
from storage.models import Membership, OAuthCode, OAuthGrant, OAuthToken, Workspace

SCOPES = ("read", "write")
CODE_LIFETIME = timedelta(minutes=10)
ACCESS_LIFETIME = timedelta(hours=1)
REFRESH_LIFETIME = timedelta(days=30)
# A grant's lastUsedAt is for people; refreshing it on every MCP call would make reads writes.
LAST_USED_RESOLUTION_SECONDS = 60

ACCESS_PREFIX = "sbat_"
REFRESH_PREFIX = "sbrt_"


def new_access_token() -> str:
    return ACCESS_PREFIX + secrets.token_urlsafe(32)


def new_refresh_token() -> str:
    return REFRESH_PREFIX + secrets.token_urlsafe(32)


def scope_list(scope: str | None) -> list[str]:
    return [part for part in (scope or "").split() if part]


def normalise_scope(scope: str | None) -> str:
    """Known scopes in a fixed order, duplicates dropped."""
    asked = set(scope_list(scope))
    return " ".join(name for name in SCOPES if name in asked)


# --- codes ----------------------------------------------------------------------------------------


def save_code(
    code: str,
    *,
    client_id: str,
    client_name: str | None,
    user_id: str,
    workspace_id: str,
    redirect_uri: str,
    scope: str,
    resource: str,
    code_challenge: str,
    code_challenge_method: str,
) -> None:
    moment = clock.now()
    scope = scope_within_role(user_id=user_id, workspace_id=workspace_id, scope=scope)
    OAuthCode.create(
        code_hash=tokens.sha256_hex(code),
        client_id=client_id,
        client_name=client_name,
        user=user_id,
        workspace=workspace_id,
        redirect_uri=redirect_uri,
        scope=scope,
        resource=resource,
        code_challenge=code_challenge,
        code_challenge_method=code_challenge_method,
        expires_at=moment + CODE_LIFETIME,
        created_at=moment,
    )
    audit.record(None, "app.authorized", workspace_id=workspace_id, target=("oauth_client", client_id),
                 user_id=user_id, details={"scope": scope, "clientName": client_name})


def scope_within_role(*, user_id: str, workspace_id: str, scope: str) -> str:
    """What the person may grant in that workspace: a viewer grants `read` only. (The token check
    holds the role again at every call, so a role lowered later lowers the token too.)"""
    membership = Membership.get_or_none(Membership.user == user_id, Membership.workspace == workspace_id)
    if membership is None:
        raise NotFound("No workspace with that id.")
    if roles.permission_of(membership.role) == "read":
        return normalise_scope(" ".join(part for part in scope_list(scope) if part != "write"))
    return scope


def claim_code(code: str, *, client_id: str) -> OAuthCode | None:
    """The code's row if it is live and this is its first use; None otherwise.

    The claim is one conditional UPDATE, so two concurrent exchanges of one code cannot both win.
    A code presented again after it was exchanged revokes the grant it produced (RFC 6749 §4.1.2).
    """
    digest = tokens.sha256_hex(code)
    row = OAuthCode.get_or_none(OAuthCode.code_hash == digest)
    if row is None or row.client_id != client_id:
        return None
    moment = clock.now()
    if row.used_at is not None:
        if row.grant_id:
            revoke_grant(row.grant_id, reason="code_reuse")
        return None
    if row.expires_at <= moment:
        return None
    claimed = (
        OAuthCode.update(used_at=moment)
        .where(OAuthCode.code_hash == digest, OAuthCode.used_at.is_null())
        .execute()
    )
    if claimed != 1:
        return None
    row.used_at = moment
    return row


# --- tokens ---------------------------------------------------------------------------------------


def _store_token(grant: OAuthGrant, access: str, refresh: str | None, scope: str) -> OAuthToken:
    moment = clock.now()
    return OAuthToken.create(
        id=ids.new_id("oat"),
        grant=grant.id,
        client_id=grant.client_id,
        user=grant.user_id,
        workspace=grant.workspace_id,
        scope=scope,
        resource=grant.resource,
        access_hash=tokens.sha256_hex(access),
        refresh_hash=tokens.sha256_hex(refresh) if refresh else None,
        access_expires_at=moment + ACCESS_LIFETIME,
        refresh_expires_at=moment + REFRESH_LIFETIME if refresh else None,
        created_at=moment,
    )


def issue_for_code(code: OAuthCode, *, access: str, refresh: str | None) -> OAuthToken:
    """Open the grant that the exchanged code stands for and store its first tokens."""
    grant = OAuthGrant.create(
        id=ids.new_id("oag"),
        client_id=code.client_id,
        client_name=code.client_name,
        user=code.user_id,
        workspace=code.workspace_id,
        scope=code.scope,
        resource=code.resource,
        created_at=clock.now(),
    )
    OAuthCode.update(grant_id=grant.id).where(OAuthCode.code_hash == code.code_hash).execute()
    return _store_token(grant, access, refresh, code.scope)


def issue_for_refresh(previous: OAuthToken, *, access: str, refresh: str | None, scope: str) -> OAuthToken:
    return _store_token(previous.grant, access, refresh, scope)


def claim_refresh_token(refresh: str, *, client_id: str) -> OAuthToken | None:
    """The token row whose refresh token this is, claimed for one rotation; None if unusable.

    A refresh token that was already rotated is a stolen copy or a replay: the whole grant is
    revoked, so both the thief and the legitimate client must ask the person again.
    """
    row = OAuthToken.get_or_none(OAuthToken.refresh_hash == tokens.sha256_hex(refresh))
    if row is None or row.client_id != client_id:
        return None
    grant = row.grant
    if grant.revoked_at is not None:
        return None
    moment = clock.now()
    if row.refresh_used_at is not None:
        revoke_grant(grant.id, reason="refresh_reuse")
        return None
    if row.revoked_at is not None or row.refresh_expires_at is None or row.refresh_expires_at <= moment:
        return None
    claimed = (
        OAuthToken.update(refresh_used_at=moment)
        .where(OAuthToken.id == row.id, OAuthToken.refresh_used_at.is_null())
        .execute()
    )
    if claimed != 1:  # a concurrent rotation of the same token: that is reuse too
        revoke_grant(grant.id, reason="refresh_reuse")
        return None
    row.refresh_used_at = moment
    return row


def retire_access_token(row: OAuthToken) -> None:
    """After a rotation the old access token goes with its refresh token."""
    OAuthToken.update(revoked_at=clock.now()).where(OAuthToken.id == row.id, OAuthToken.revoked_at.is_null()).execute()


def find_token(presented: str, hint: str | None = None) -> tuple[OAuthToken, str] | None:
    """(row, "access_token" | "refresh_token") for a presented token, for RFC 7009 revocation."""
    digest = tokens.sha256_hex(presented)
    order = ["refresh_token", "access_token"] if hint == "refresh_token" else ["access_token", "refresh_token"]
    for kind in order:
        column = OAuthToken.access_hash if kind == "access_token" else OAuthToken.refresh_hash
        row = OAuthToken.get_or_none(column == digest)
        if row is not None:
            return row, kind
    return None


def revoke_token(row: OAuthToken, kind: str) -> None:
    """RFC 7009: revoking a refresh token ends the grant; an access token ends only itself."""
    if kind == "refresh_token":
        revoke_grant(row.grant_id, reason="revocation")
    else:
        retire_access_token(row)


def revoke_grant(grant_id: str, *, reason: str) -> None:
    moment = clock.now()
    OAuthGrant.update(revoked_at=moment, revoked_reason=reason).where(
        OAuthGrant.id == grant_id, OAuthGrant.revoked_at.is_null()
    ).execute()
    OAuthToken.update(revoked_at=moment).where(
        OAuthToken.grant == grant_id, OAuthToken.revoked_at.is_null()
    ).execute()


# --- the resource server's view -------------------------------------------------------------------


@dataclass(frozen=True)
class TokenInfo:
    token_id: str
    grant_id: str
    client_id: str
    user_id: str
    workspace_id: str
    scopes: tuple[str, ...]
    resource: str
    expires_at: datetime

    role: str = "member"  # the person's role in the workspace now (the token never gives more)
    profile_ids: tuple[str, ...] | None = None  # a member or viewer limited to some profiles

    def actor(self) -> Actor:
        """The token acts in its workspace for its user, within the person's current role: `write`
        makes it read-write only where the role writes (a viewer's token reads)."""
        return person_actor(workspace_id=self.workspace_id, user_id=self.user_id, role=self.role,
                            profile_ids=list(self.profile_ids) if self.profile_ids is not None else None,
                            credential_id=self.grant_id, scopes=self.scopes, client_id=self.client_id)


# Written by hand, as a token's first request in a process runs it: the revocation, expiry and
# membership checks are in the statement, so a row comes back only for a live token. (Revoking a
# grant revokes its tokens in the same transaction; the grant's own mark is checked as well, for a
# grant revoked by hand.)
_LIVE_ACCESS_SQL = (
    "SELECT t.id, t.grant_id, t.client_id, t.user_id, t.workspace_id, t.scope, t.resource, t.access_expires_at,"
    " g.last_used_at, m.role, m.profile_ids FROM o_auth_token AS t JOIN o_auth_grant AS g ON g.id = t.grant_id"
    # The person must still belong to the workspace the token was issued for.
    " JOIN membership AS m ON m.user_id = t.user_id AND m.workspace_id = t.workspace_id"
    " WHERE t.access_hash = ? AND t.revoked_at IS NULL AND g.revoked_at IS NULL AND t.access_expires_at > ?"
)

# Access tokens this process has checked, by SHA-256 of the token: the database and epoch they were
# read at, the token, and until when (`clock.epoch()`) it needs no check but the epoch's (not
# expired, its grant's lastUsedAt recent enough). An entry holds only while `oauth_token_epoch` of
# the same database still reads as it did: its triggers (migration 16) move it in the transaction
# of any change that can end a token, whoever writes it. As API keys are (`service.identity.auth`).
_known: dict[str, tuple[tuple[int, int], TokenInfo, float]] = {}
KNOWN_TOKENS_MAX = 10_000


def verify_access_token(presented: str) -> TokenInfo | None:
    """Check a bearer token: a revocation, a person leaving the workspace or a token's expiry made
    by any process holds from the next request on. The epoch is read before the token, so on
    PostgreSQL, where each statement sees its own moment, a change between the two reads leaves an
    entry refreshed at its next use, never one that outlives the change."""
    if not presented.startswith(ACCESS_PREFIX):
        return None
    digest = tokens.sha256_hex(presented)
    epoch = (id(db.obj), hot.oauth_token_epoch())
    known = _known.get(digest)
    if known is not None and known[0] == epoch and clock.epoch() < known[2]:
        return known[1]
    moment = clock.now()
    row = hot.run_fixed(_LIVE_ACCESS_SQL, (digest, moment)).fetchone()
    if row is None:
        return None
    info = TokenInfo(
        token_id=row[0],
        grant_id=row[1],
        client_id=row[2],
        user_id=row[3],
        workspace_id=row[4],
        scopes=tuple(scope_list(row[5])),
        resource=row[6],
        expires_at=OAuthToken.access_expires_at.python_value(row[7]),
        role=row[9],
        profile_ids=_profiles(row[10]),
    )
    last_used = OAuthGrant.last_used_at.python_value(row[8])
    if last_used is not None and (moment - last_used).total_seconds() <= LAST_USED_RESOLUTION_SECONDS:
        _remember(digest, epoch, info, last_used)
        return info
    with db.atomic():
        OAuthGrant.update(last_used_at=moment).where(OAuthGrant.id == info.grant_id).execute()
    # Once it is written for good: the event loop's snapshot may yet give the write up (when another
    # connection holds the lock) for a thread to make.
    db.after_commit(lambda: _remember(digest, epoch, info, moment))
    return info


def _profiles(stored: Any) -> tuple[str, ...] | None:
    value = Membership.profile_ids.python_value(stored)
    return None if value is None else tuple(value)


def _remember(digest: str, epoch: tuple[int, int], info: TokenInfo, last_used: datetime) -> None:
    if len(_known) >= KNOWN_TOKENS_MAX and digest not in _known:
        for oldest in list(_known)[: KNOWN_TOKENS_MAX // 10]:
            _known.pop(oldest, None)
    quiet_until = min(clock.epoch_of(last_used) + LAST_USED_RESOLUTION_SECONDS, clock.epoch_of(info.expires_at))
    _known[digest] = (epoch, info, quiet_until)


# --- connected apps (dashboard) -------------------------------------------------------------------


def has_approved(*, user_id: str, client_id: str) -> bool:
    """Whether the person approved this client on the consent page and has not revoked it since (a
    live grant, or a code not yet exchanged for one): only then may an /authorize error go back to
    the client's redirect URI."""
    return bool(
        OAuthGrant.select().where(OAuthGrant.user == user_id, OAuthGrant.client_id == client_id,
                                  OAuthGrant.revoked_at.is_null()).exists()
        or OAuthCode.select().where(OAuthCode.user == user_id, OAuthCode.client_id == client_id,
                                    OAuthCode.grant_id.is_null()).exists())


def list_connected_apps(*, user_id: str) -> list[dict[str, Any]]:
    """The person's live grants, one entry per client and workspace."""
    rows = (
        OAuthGrant.select(OAuthGrant, Workspace)
        .join(Workspace)
        .where(OAuthGrant.user == user_id, OAuthGrant.revoked_at.is_null())
        .order_by(OAuthGrant.created_at)
    )
    apps: dict[tuple[str, str], dict[str, Any]] = {}
    for grant in rows:
        key = (grant.client_id, grant.workspace_id)
        app = apps.setdefault(
            key,
            {
                "clientId": grant.client_id,
                "clientName": grant.client_name or grant.client_id,
                "workspaceId": grant.workspace_id,
                "workspaceName": grant.workspace.name,
                "scopes": [],
                "authorisedAt": grant.created_at,
                "lastUsedAt": None,
            },
        )
        app["scopes"] = [s for s in SCOPES if s in set(app["scopes"]) | set(scope_list(grant.scope))]
        if grant.last_used_at and (app["lastUsedAt"] is None or grant.last_used_at > app["lastUsedAt"]):
            app["lastUsedAt"] = grant.last_used_at
    return list(apps.values())


def revoke_connected_app(*, user_id: str, client_id: str, workspace_id: str, ip: str | None = None) -> int:
    """End every live grant of this client for this person in this workspace; how many ended."""
    grants = [
        g.id
        for g in OAuthGrant.select(OAuthGrant.id).where(
            OAuthGrant.user == user_id,
            OAuthGrant.client_id == client_id,
            OAuthGrant.workspace == workspace_id,
            OAuthGrant.revoked_at.is_null(),
        )
    ]
    if not grants:
        raise NotFound("No connected app with that id.")
    for grant_id in grants:
        revoke_grant(grant_id, reason="dashboard")
    audit.record(None, "app.revoked", workspace_id=workspace_id, target=("oauth_client", client_id),
                 user_id=user_id, ip=ip, label=None)
    return len(grants)
