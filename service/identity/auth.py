"""Who is acting: an `Actor` built from an API key, an OAuth token (at /mcp) or a dashboard session.

Every service function takes `actor=` and asks it the tenancy questions, so /v1, MCP and the
dashboard answer them alike: another workspace's resource is 404, outside the key's (or the
member's) profiles 403, a write with a read key (or as a viewer) 403, and an action above the
person's role 403 naming the role it needs (`service.identity.roles`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

from kit import clock, tokens
from kit.errors import Forbidden, Unauthorized
from service.common import epochs
from service.identity import roles
from storage import hot
from storage.db import db
from storage.models import ApiKey, Membership

# A key's lastUsedAt is refreshed at most this often: it is for people, and a write per request
# would serialise every call on SQLite.
LAST_USED_RESOLUTION_SECONDS = 60


@dataclass(frozen=True)
class Actor:
    workspace_id: str
    permission: str  # read-write | read
    profile_ids: frozenset[str] | None  # None: every profile of the workspace, also later ones
    credential_id: str  # the key or token id: rate limits and idempotency are kept per credential
    user_id: str | None = None
    # The person's role in the workspace (a session or an OAuth token); None for an API key, which
    # keeps its own scope and permission.
    role: str | None = None
    client_id: str | None = None  # the OAuth client acting for the person (MCP), for the audit log
    ip: str | None = None  # the caller's address, for the audit log

    @property
    def can_write(self) -> bool:
        return self.permission == "read-write"

    def require_write(self) -> None:
        if not self.can_write:
            if self.role == "viewer":
                raise Forbidden(roles.refusal("member", self.role, "change anything"))
            raise Forbidden("This key is read-only." if self.role is None
                            else "This connection was granted read access only.")

    def sees_profile(self, profile_id: str) -> bool:
        return self.profile_ids is None or profile_id in self.profile_ids

    def require_profile(self, profile_id: str) -> None:
        if not self.sees_profile(profile_id):
            raise Forbidden("This key is not allowed to act on that profile." if self.role is None
                            else "You are not allowed to act on that profile.")

    def require_full_scope(self, what: str) -> None:
        if self.profile_ids is not None:
            raise Forbidden(f"A key limited to profiles cannot {what}." if self.role is None
                            else f"A member limited to some profiles cannot {what}.")

    def has_role(self, needed: str) -> bool:
        """Whether the person's role reaches `needed`; an API key has every role its permission allows."""
        return self.role is None or roles.at_least(self.role, needed)

    def require_role(self, needed: str, what: str) -> None:
        """403 naming the role an action needs, when the person's role is below it."""
        if self.role is not None and not roles.at_least(self.role, needed):
            raise Forbidden(roles.refusal(needed, self.role, what))

    def at(self, ip: str | None) -> Actor:
        """The same actor, calling from `ip` (for the audit log)."""
        return self if ip is None or ip == self.ip else replace(self, ip=ip)


# Keys this process has checked, by SHA-256 of the key: the database and epoch they were read at,
# the row, the actor built from it, and until when (`clock.epoch()`) the key needs no check but the
# epoch's (see `_quiet_until`). An entry holds only while `api_key_epoch` of the same database
# still reads as it did (see `authenticate_api_key`). Bounded: when full, the oldest entries make
# room.
_known: dict[str, tuple[tuple[int, int], hot.KeyRow, Actor, float]] = {}
KNOWN_KEYS_MAX = 10_000


def authenticate_api_key(authorization: str | None, *, arrived: float | None = None) -> Actor:
    """Check `Authorization: Bearer sk_...` against storage on every request.

    A key checked before is taken from memory when the key epoch, one row that triggers move in
    the very transaction that revokes, deletes, narrows or expires any key, still reads as it did
    then: a revocation holds at once in every process, for the price of a one-row read instead of
    the key's row and its conversions. The epoch is read before the key, so a change committed
    between the two reads leaves an entry that is refreshed at its next use rather than one that
    outlives the change (PostgreSQL reads each statement at its own moment).

    `arrived` (`time.monotonic()` when the request came in): the epoch read of another request,
    or of another thread, may serve this one when it began after the request arrived
    (`service.common.epochs`, which reads it with the workspace epoch).
    """
    if not authorization:
        raise Unauthorized("Send your API key as Authorization: Bearer sk_....")
    scheme, _, presented = authorization.partition(" ")
    presented = presented.strip()
    if scheme.lower() != "bearer" or not tokens.API_KEY_PATTERN.fullmatch(presented):
        raise Unauthorized("The API key is malformed.")
    digest = tokens.sha256_hex(presented)
    epoch = (id(db.obj), epochs.read(arrived).keys)
    known = _known.get(digest)
    if known is not None and known[0] == epoch:
        _, key, actor, quiet_until = known
        if clock.epoch() < quiet_until:
            return actor
    else:
        found = hot.find_api_key(digest)
        if found is None or not tokens.same_hash(found.secret_hash, presented):
            raise Unauthorized("The API key is not valid.")
        key, actor = found, _actor(found)
        _remember(digest, epoch, key, actor)
    moment = clock.now()
    if key.revoked_at is not None:
        raise Unauthorized("The API key has been revoked.")
    if key.expires_at is not None and key.expires_at <= moment:
        raise Unauthorized("The API key has expired.")
    if key.last_used_at is None or (moment - key.last_used_at).total_seconds() > LAST_USED_RESOLUTION_SECONDS:
        with db.atomic():
            ApiKey.update(last_used_at=moment).where(ApiKey.id == key.id).execute()
        # Once it is written for good: the event loop's snapshot may yet give the write up (when
        # another connection holds the lock) for a thread to make.
        refreshed = key._replace(last_used_at=moment)
        db.after_commit(lambda: _remember(digest, epoch, refreshed, actor))
    return actor


def outbound_bucket(authorization: str | None) -> str | None:
    """Whose share of the outbound pool (`kit.bulkhead`) a request takes, known before the request
    is authenticated (without storage): the workspace of a key this process has checked, else the
    key itself. None for a request without a key (it is refused before it calls anyone)."""
    if not authorization:
        return None
    presented = authorization.partition(" ")[2].strip()
    if not presented:
        return None
    digest = tokens.sha256_hex(presented)
    known = _known.get(digest)
    return known[2].workspace_id if known is not None else "key:" + digest[:32]


def _actor(key: hot.KeyRow) -> Actor:
    return Actor(
        workspace_id=key.workspace_id,
        permission=key.permission,
        profile_ids=None if key.scope == "full" else frozenset(key.profile_ids or []),
        credential_id=key.id,
    )


def _remember(digest: str, epoch: tuple[int, int], key: hot.KeyRow, actor: Actor) -> None:
    if len(_known) >= KNOWN_KEYS_MAX and digest not in _known:
        for oldest in list(_known)[: KNOWN_KEYS_MAX // 10]:
            _known.pop(oldest, None)
    _known[digest] = (epoch, key, actor, _quiet_until(key))


def _quiet_until(key: hot.KeyRow) -> float:
    """Until when the key is certainly good and its `lastUsedAt` recent enough, in `clock.epoch()`
    seconds: before then a request needs neither the datetimes of the full check nor a write."""
    if key.revoked_at is not None or key.last_used_at is None:
        return -math.inf
    until = clock.epoch_of(key.last_used_at) + LAST_USED_RESOLUTION_SECONDS
    return until if key.expires_at is None else min(until, clock.epoch_of(key.expires_at))


def person_actor(*, workspace_id: str, user_id: str, role: str, profile_ids: list[str] | None,
                 credential_id: str, scopes: tuple[str, ...] | None = None, client_id: str | None = None,
                 ip: str | None = None) -> Actor:
    """A person acting in a workspace with their current role: from the dashboard, or through an
    OAuth token (`scopes`) that never gives more than the role does, also after it was lowered.
    Owners and admins act on every profile; a member or viewer on their `profile_ids` when set."""
    permission = roles.permission_of(role)
    if scopes is not None and "write" not in scopes:
        permission = "read"
    limited = role in roles.LIMITABLE and profile_ids is not None
    return Actor(workspace_id=workspace_id, permission=permission,
                 profile_ids=frozenset(profile_ids or []) if limited else None,
                 credential_id=credential_id, user_id=user_id, role=role, client_id=client_id, ip=ip)


def member_actor(user_id: str, workspace_id: str, *, ip: str | None = None) -> Actor:
    """The person acting in one of their workspaces from the dashboard, with their role there now."""
    membership = Membership.get_or_none(Membership.user == user_id, Membership.workspace == workspace_id)
    if membership is None:
        raise PermissionError("not a member")
    return person_actor(workspace_id=workspace_id, user_id=user_id, role=membership.role,
                        profile_ids=membership.profile_ids, credential_id=f"session:{user_id}", ip=ip)
