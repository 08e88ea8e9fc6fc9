"""Per-credential request rate, counted in storage so that every API process shares one budget.

A fixed one-minute window: one upsert a request, which both SQLite and PostgreSQL do atomically.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from peewee import EXCLUDED

from service.errors import RateLimited
from storage.db import db
from storage.models import RateLimitCounter

WINDOW_SECONDS = 60


@dataclass(frozen=True)
class Quota:
    limit: int
    remaining: int
    reset: int  # unix seconds when the window ends

    def headers(self) -> dict[str, str]:
        return {
            "X-RateLimit-Limit": str(self.limit),
            "X-RateLimit-Remaining": str(self.remaining),
            "X-RateLimit-Reset": str(self.reset),
        }


def hit(credential_id: str, *, limit: int, at: float | None = None) -> Quota:
    """Count one request; raise RateLimited (with the quota headers) once over the limit."""
    moment = int(at if at is not None else time.time())
    window = moment - moment % WINDOW_SECONDS
    # Its own transaction: the count stands even when the request it admitted fails.
    with db.atomic():
        cursor = (
            RateLimitCounter.insert(key_id=credential_id, window_start=window, count=1)
            .on_conflict(
                conflict_target=[RateLimitCounter.key_id, RateLimitCounter.window_start],
                update={RateLimitCounter.count: RateLimitCounter.count + EXCLUDED.count},
            )
            .returning(RateLimitCounter.count)
            .tuples()
            .execute()
        )
        count = int(next(iter(cursor))[0])
    reset = window + WINDOW_SECONDS
    quota = Quota(limit=limit, remaining=max(limit - count, 0), reset=reset)
    if count > limit:
        raise RateLimited(
            f"More than {limit} requests a minute with this key.",
            headers={**quota.headers(), "Retry-After": str(max(reset - moment, 1))},
        )
    return quota


def forget_old_windows(*, before: float | None = None) -> int:
    moment = int(before if before is not None else time.time())
    return RateLimitCounter.delete().where(RateLimitCounter.window_start < moment - 2 * WINDOW_SECONDS).execute()
