"""An account's past follower counts, read once after it is connected, so that its follower line
does not start empty; the daily snapshots (service/analytics/work.py) go on from there.

Where the platform gives them, its adapter reads them (`follower_history`, at most the adapter's
`follower_history_days`): Instagram's insights (30 days), a LinkedIn organization's follower
statistics, YouTube's subscriber count on the day of connection. In the sandbox every account that
has followers gets `BACKFILL_DAYS` days: what the platform gave, and before it a line of the
sandbox's own that grows by a few followers a day up to it, so that trying analytics in the sandbox
shows something. A day that has a count keeps it: a backfill never overwrites a snapshot.

The work is the account's `history` chore (service/analytics/work.py): armed once, a minute after
the account is connected, and never again (its row stays, idle, once run). `SWITCHBOARD_FOLLOWER_
BACKFILL=0` turns it off.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import logging

from kit import clock
from platforms.base import FollowerPoint, PlatformFailure
from service.accounts import adapters
from service.common.configured import Configured
from storage.db import db
from storage.models import Account, FollowerSnapshot

log = logging.getLogger("switchboard.analytics")
settings = Configured(__name__)  # handed in by the composition root (wire)

BACKFILL_DAYS = 90


def _gained(account_id: str, day: dt.date) -> int:
    """The sandbox's followers gained on a day (0 to 9), the same on every ask."""
    return hashlib.sha256(f"gained:{account_id}:{day}".encode()).digest()[0] % 10


def sandbox_line(account_id: str, given: list[FollowerPoint], now: int | None, today: dt.date,
                 days: int = BACKFILL_DAYS) -> list[FollowerPoint]:
    """`days` days up to today: the points given, and before the first of them (else before today's
    count `now`) a line that loses a few followers a day going back, never below zero."""
    if given:
        first = min(given, key=lambda point: point.day)
        anchor_day, count = first.day, first.followers
    elif now is not None:
        anchor_day, count = today, now
    else:
        return []
    made = {point.day: point for point in given}
    made.setdefault(anchor_day, FollowerPoint(anchor_day, count))
    day = anchor_day
    while day > today - dt.timedelta(days=days - 1):
        count = max(0, count - _gained(account_id, day))
        day -= dt.timedelta(days=1)
        made.setdefault(day, FollowerPoint(day, count))
    return sorted(made.values(), key=lambda point: point.day)


def read(account: Account) -> list[FollowerPoint]:
    """The account's past counts: the platform's, and in the sandbox its own line before them.
    Outside any transaction (it asks the platform); a platform that will not give them gives none."""
    capabilities = adapters.adapter(account.platform).capabilities
    given: list[FollowerPoint] = []
    if capabilities.follower_history_days:
        try:
            given = adapters.call(account, lambda adapter, ctx: adapter.follower_history(ctx, days=BACKFILL_DAYS))
        except PlatformFailure as failure:
            log.info("past follower counts of account %s: none (%s)", account.id, failure.message)
    if not settings().sandbox or not capabilities.followers:
        return given
    now = None
    if not given:
        try:
            now = adapters.call(account, lambda adapter, ctx: adapter.follower_count(ctx))
        except PlatformFailure:
            return []  # no followers to speak of (a bot without a channel, an ad account)
    return sandbox_line(account.id, given, now, clock.now().date())


def write(account_id: str, points: list[FollowerPoint]) -> int:
    """Each point as the day's count, where the day has none yet; how many were written."""
    if not points:
        return 0
    moment = clock.now()
    rows = [{"account": account_id, "date": point.day, "followers": max(0, point.followers), "state": "taken",
             "taken_at": moment} for point in points]
    with db.atomic():
        have = {str(row.date) for row in FollowerSnapshot.select(FollowerSnapshot.date).where(
            FollowerSnapshot.account == account_id, FollowerSnapshot.date.in_([point.day for point in points]))}
        missing = [row for row in rows if str(row["date"]) not in have]
        if missing:
            FollowerSnapshot.insert_many(missing).on_conflict_ignore().execute()
    return len(missing)


def backfill(account: Account) -> int:
    """Read the account's past counts and keep those of days without one: how many days were added."""
    return write(account.id, read(account))
