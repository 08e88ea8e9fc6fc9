"""`Idempotency-Key` on POST: reserved before the operation does anything, its first answer kept 24 hours.

1. `reserve()` records the key in its own committed transaction before the operation runs. The
   primary key (credential, key) makes concurrent requests meet there: the first one owns the key;
   a second one with the same key gets 409 `idempotency_in_progress` while the first runs, the first
   answer once it finished (same status, same body), or 409 `conflict` when its body differs.
2. An operation that makes something (a message to send) calls `attach(resource_id)` in the
   transaction that creates it, so the thing and its key commit together.
3. `complete()` stores the answer, encrypted (an answer may carry a secret shown once). An operation
   that runs in one write transaction completes inside it: the change and its answer commit together.
4. A request that fails before making anything `release()`s the key: nothing happened, and a retry
   may run. One that fails after making something keeps its answer, like a success.

A request that dies while it holds the key leaves a lease that runs out; a retry then takes the key
over and, when the first request had already made its resource, finds it (`Reservation.resource_id`)
instead of making a second one.
"""

from __future__ import annotations

import contextvars
import hashlib
import secrets
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from kit import clock, crypto
from kit.errors import Conflict, ValidationFailed
from service.common.configured import Configured
from storage.models import IdempotencyRecord

settings = Configured(__name__)  # handed in by the composition root (wire)

TTL = timedelta(hours=24)
MAX_KEY_LENGTH = 255


def _lease() -> timedelta:
    """How long a request holds its key. Longer than a send may keep a request busy (the platform
    call is bounded by the send lease, plus a few seconds of waiting on the pace and the answer).
    A retry after it takes over; even too early that is safe, since the message row is claimed."""
    return timedelta(seconds=settings().send_lease_seconds + 10)


@dataclass(frozen=True)
class Replay:
    status: int
    body: Any


@dataclass(frozen=True)
class Reservation:
    credential_id: str
    key: str
    owner: str
    resource_id: str | None = None  # what an earlier holder of the key made before it died


def request_fingerprint(method: str, path: str, body: bytes) -> str:
    return hashlib.sha256(method.encode() + b" " + path.encode() + b"\n" + body).hexdigest()


def check_key(key: str) -> None:
    if not key or len(key) > MAX_KEY_LENGTH or not key.isprintable():
        raise ValidationFailed.field("Idempotency-Key", f"must be 1..{MAX_KEY_LENGTH} printable characters")


def _seal(body: Any) -> str:
    return crypto.encrypt_json({"body": body}).decode("ascii")


def _unseal(text: str) -> Any:
    return crypto.decrypt_json(text.encode("ascii"))["body"]


def _record(credential_id: str, key: str) -> Any:
    return (IdempotencyRecord.key_id == credential_id) & (IdempotencyRecord.idempotency_key == key)


def reserve(credential_id: str, key: str, fingerprint: str) -> Reservation | Replay:
    """Take the key for this request, or say why not. Call in a transaction of its own, which must
    commit before the operation starts."""
    moment = clock.now()
    owner = secrets.token_hex(8)
    # An expired record with the same key is replaced rather than kept forever.
    IdempotencyRecord.delete().where(
        _record(credential_id, key), IdempotencyRecord.created_at <= moment - TTL
    ).execute()
    # The key's row: ours, or the one another request holds. On PostgreSQL that request may free the
    # key (it failed, having made nothing) between our insert and our read: the row is gone, and
    # the key is free to take on the next turn.
    for _ in range(3):
        IdempotencyRecord.insert(
            key_id=credential_id, idempotency_key=key, request_hash=fingerprint, owner=owner,
            locked_until=moment + _lease(), created_at=moment,
        ).on_conflict_ignore().execute()
        row = IdempotencyRecord.get_or_none(_record(credential_id, key))
        if row is not None:
            break
    else:  # taken and freed again each time: requests with this key are running right now
        raise Conflict("A request with this Idempotency-Key is still running; retry when it has finished.",
                       code="idempotency_in_progress")
    if row.owner == owner and row.status is None:
        return Reservation(credential_id, key, owner)
    if row.request_hash != fingerprint:
        raise Conflict("This Idempotency-Key was already used with a different request.")
    if row.status is not None and row.body is not None:
        return Replay(status=row.status, body=_unseal(row.body))
    if row.locked_until is not None and row.locked_until > moment:
        raise Conflict("A request with this Idempotency-Key is still running; retry when it has finished.",
                       code="idempotency_in_progress")
    # Its holder died mid-request (the lease ran out): take the key over, with what it made.
    taken = (
        IdempotencyRecord.update(owner=owner, locked_until=moment + _lease())
        .where(_record(credential_id, key), IdempotencyRecord.owner == row.owner, IdempotencyRecord.status.is_null())
        .execute()
    )
    if not taken:
        raise Conflict("A request with this Idempotency-Key is still running; retry when it has finished.",
                       code="idempotency_in_progress")
    return Reservation(credential_id, key, owner, row.resource_id)


def complete(reservation: Reservation, status: int, body: Any) -> None:
    """Keep the answer for replays (in the operation's transaction when it has one)."""
    IdempotencyRecord.update(status=status, body=_seal(body), locked_until=None).where(
        _record(reservation.credential_id, reservation.key), IdempotencyRecord.owner == reservation.owner
    ).execute()


def finish_failed(reservation: Reservation, status: int, body: Any) -> None:
    """A request failed: keep its answer when it had made something, else free the key."""
    row = IdempotencyRecord.get_or_none(_record(reservation.credential_id, reservation.key),
                                        IdempotencyRecord.owner == reservation.owner)
    if row is None:
        return
    if row.resource_id is not None:
        complete(reservation, status, body)
    else:
        release(reservation)


def release(reservation: Reservation) -> None:
    IdempotencyRecord.delete().where(
        _record(reservation.credential_id, reservation.key), IdempotencyRecord.owner == reservation.owner,
        IdempotencyRecord.status.is_null(),
    ).execute()


# -- the running request's reservation, for operations that make something ---------------------------
_current: contextvars.ContextVar[Reservation | None] = contextvars.ContextVar("idempotency", default=None)


def bind(reservation: Reservation | None) -> contextvars.Token[Reservation | None]:
    return _current.set(reservation)


def unbind(token: contextvars.Token[Reservation | None]) -> None:
    _current.reset(token)


def attach(resource_id: str) -> None:
    """Tie what the running request made to its key, in the transaction that makes it. No key: no-op."""
    reservation = _current.get()
    if reservation is None:
        return
    IdempotencyRecord.update(resource_id=resource_id).where(
        _record(reservation.credential_id, reservation.key), IdempotencyRecord.owner == reservation.owner
    ).execute()


def forget_expired() -> int:
    return int(IdempotencyRecord.delete().where(IdempotencyRecord.created_at <= clock.now() - TTL).execute())


def stored_body(row: IdempotencyRecord) -> Any:
    """A kept answer in the clear (for tests and operators)."""
    return None if row.body is None else _unseal(row.body)

