"""Who is acting: an `Actor` built from an API key (or, at /mcp, an OAuth token).

Every service function takes `actor=` and asks it the tenancy questions, so /v1 and MCP answer
them alike: another workspace's resource is 404, outside the key's profiles 403, a write with a
read key 403.
"""

from __future__ import annotations

import math
import threading
import time
from dataclasses import dataclass

from service.kit import clock, tokens
from service.kit.errors import Forbidden, Unauthorized
from storage import hot
from storage.db import db, is_postgres
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

    @property
    def can_write(self) -> bool:
        return self.permission == "read-write"

    def require_write(self) -> None:
        if not self.can_write:
            raise Forbidden("This key is read-only.")

    def sees_profile(self, profile_id: str) -> bool:
        return self.profile_ids is None or profile_id in self.profile_ids

    def require_profile(self, profile_id: str) -> None:
        if not self.sees_profile(profile_id):
            raise Forbidden("This key is not allowed to act on that profile.")

    def require_full_scope(self, what: str) -> None:
        if self.profile_ids is not None:
            raise Forbidden(f"A key limited to profiles cannot {what}.")


# Keys this process has checked, by SHA-256 of the key: the database and epoch they were read at,
# the row, the actor built from it, and until when (`clock.epoch()`) the key needs no check but the
# epoch's (see `_quiet_until`). An entry holds only while `api_key_epoch` of the same database
# still reads as it did (see `authenticate_api_key`). Bounded: when full, the oldest entries make
# room.
_known: dict[str, tuple[tuple[int, int], hot.KeyRow, Actor, float]] = {}
KNOWN_KEYS_MAX = 10_000
# The process's latest read of the epoch (see `_epoch`): (when it was begun, database, value).
_last_read: tuple[float, int, int] | None = None
# The read of the epoch under way that began last, if any (see `_epoch`).
_reading: _Read | None = None


def authenticate_api_key(authorization: str | None, *, arrived: float | None = None) -> Actor:
    """Check `Authorization: Bearer sk_...` against storage on every request.

    A key checked before is taken from memory when the key epoch, one row that triggers move in
    the very transaction that revokes, deletes, narrows or expires any key, still reads as it did
    then: a revocation holds at once in every process, for the price of a one-row read instead of
    the key's row and its conversions. The epoch is read before the key, so a change committed
    between the two reads leaves an entry that is refreshed at its next use rather than one that
    outlives the change (PostgreSQL reads each statement at its own moment).

    `arrived` (`time.monotonic()` when the request came in): the epoch this process read last, on
    any thread, may serve it when that read was begun after the request arrived, since it then
    shows every change committed before the request was sent. A storage thread taking a batch of
    waiting requests reads the epoch once for the batch, and a request that waited while another
    thread read it needs no read of its own (on PostgreSQL, one round trip saved each).
    """
    if not authorization:
        raise Unauthorized("Send your API key as Authorization: Bearer sk_....")
    scheme, _, presented = authorization.partition(" ")
    presented = presented.strip()
    if scheme.lower() != "bearer" or not tokens.API_KEY_PATTERN.fullmatch(presented):
        raise Unauthorized("The API key is malformed.")
    digest = tokens.sha256_hex(presented)
    epoch = (id(db.obj), _epoch(arrived))
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


def _epoch(arrived: float | None) -> int:
    global _last_read, _reading
    database = id(db.obj)
    last = _last_read  # one read of the global: the tuple is never changed in place
    if arrived is not None and last is not None and last[0] >= arrived and last[1] == database:
        return last[2]
    pending = _reading
    if arrived is not None and pending is not None and pending.began >= arrived and pending.database == database:
        # Another thread's read, begun after this request arrived, is under way: its answer serves
        # this request as a finished one would (see `authenticate_api_key`), for a wait on the
        # thread instead of a round trip of our own (PostgreSQL only: see `_Read`).
        pending.done.wait()
        if pending.value is not None:
            return pending.value
    made = time.monotonic()  # before the read: it shows at least what was committed by then
    mine = _Read(made, database) if is_postgres() else None
    if mine is not None:
        _reading = mine
    try:
        value = hot.api_key_epoch()
        if mine is not None:
            mine.value = value
    finally:
        if mine is not None:
            mine.done.set()  # a failed read leaves `value` None: its waiters read for themselves
            if _reading is mine:
                _reading = None
    last = _last_read
    # Threads race to record their reads: the one begun last is kept (each pair is true alone).
    if last is None or made >= last[0] or last[1] != database:
        _last_read = (made, database, value)
    return value


class _Read:
    """A read of the key epoch under way on some thread, which threads serving requests that
    arrived before it began wait for instead of reading too. On PostgreSQL only: there a read is a
    round trip whose wait releases the GIL; SQLite's reads (on the event loop, which must never
    wait on a thread) cost less than the hand-over."""

    __slots__ = ("began", "database", "done", "value")

    def __init__(self, began: float, database: int) -> None:
        self.began = began
        self.database = database
        self.done = threading.Event()
        self.value: int | None = None


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


def member_actor(user_id: str, workspace_id: str) -> Actor:
    """The person acting in one of their workspaces from the dashboard."""
    if not Membership.select().where(Membership.user == user_id, Membership.workspace == workspace_id).exists():
        raise PermissionError("not a member")
    return Actor(workspace_id=workspace_id, permission="read-write", profile_ids=None,
                 credential_id=f"session:{user_id}", user_id=user_id)
