"""`Idempotency-Key` on POST: the first answer is kept for 24 hours and replayed for the same body.

The record is inserted in the same transaction as the operation, so a key whose operation failed
(and rolled back) leaves nothing behind and may be retried; two concurrent requests with one key
meet at the primary key, and the loser replays the winner's answer.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from service import clock
from service.errors import Conflict, ValidationFailed
from storage.models import IdempotencyRecord

TTL = timedelta(hours=24)
MAX_KEY_LENGTH = 255


@dataclass(frozen=True)
class Replay:
    status: int
    body: Any


def request_fingerprint(method: str, path: str, body: bytes) -> str:
    return hashlib.sha256(method.encode() + b" " + path.encode() + b"\n" + body).hexdigest()


def check_key(key: str) -> None:
    if not key or len(key) > MAX_KEY_LENGTH or not key.isprintable():
        raise ValidationFailed.field("Idempotency-Key", f"must be 1..{MAX_KEY_LENGTH} printable characters")


def find(credential_id: str, key: str, fingerprint: str) -> Replay | None:
    """The kept answer for this key, if any; 409 when the key was used with another request."""
    row = IdempotencyRecord.get_or_none(
        IdempotencyRecord.key_id == credential_id,
        IdempotencyRecord.idempotency_key == key,
        IdempotencyRecord.created_at > clock.now() - TTL,
    )
    if row is None:
        return None
    if row.request_hash != fingerprint:
        raise Conflict("This Idempotency-Key was already used with a different request.")
    return Replay(status=row.status, body=json.loads(row.body))


def remember(credential_id: str, key: str, fingerprint: str, status: int, body: Any) -> None:
    # An expired record with the same key is replaced rather than kept forever.
    IdempotencyRecord.delete().where(
        IdempotencyRecord.key_id == credential_id,
        IdempotencyRecord.idempotency_key == key,
        IdempotencyRecord.created_at <= clock.now() - TTL,
    ).execute()
    IdempotencyRecord.create(
        key_id=credential_id,
        idempotency_key=key,
        request_hash=fingerprint,
        status=status,
        body=json.dumps(body, ensure_ascii=False, separators=(",", ":")),
    )


def forget_expired() -> int:
    return IdempotencyRecord.delete().where(IdempotencyRecord.created_at <= clock.now() - TTL).execute()
