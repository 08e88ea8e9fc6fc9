"""Where each polled inbox stands (`InboxPoll`) and YouTube's daily quota (`PlatformQuota`).

YouTube gives a project 10,000 units a day (by default), shared by every channel connected through
it and reset at midnight Pacific time; `commentThreads.list` costs 1 unit a page, `comments.insert`
50 and `videos.insert` 1,600. So polls spend from a budget of their own, a share of the quota
(`SWITCHBOARD_YOUTUBE_POLL_SHARE`, default 0.8), counted before each call in a short transaction:
once the day's budget is spent the polls wait for the next quota day, and the rest of the quota is
left to uploads and replies. Each account's spend of the day is kept too, and shown under the
account's `capabilities.inbox`.
"""

from __future__ import annotations

import datetime as dt
from typing import Any
from zoneinfo import ZoneInfo

from peewee import fn

from service.kit import clock, settings
from storage.models import Account, InboxPoll, PlatformQuota

QUOTA_ZONE = ZoneInfo("America/Los_Angeles")  # YouTube's quota day ends at midnight Pacific time
POLL_UNITS = 1  # commentThreads.list, a page
POLLED_OR_CHECKED = ("youtube", "x", "tiktok")
# X's DM events come by webhook to an account subscribed to Account Activity; a webhook heard within
# this long means the subscription is live, and polling rests until it is quiet for as long.
WEBHOOK_FRESH = dt.timedelta(hours=24)


def quota_day(moment: dt.datetime | None = None) -> str:
    at = (moment or clock.now()).replace(tzinfo=dt.UTC)
    return at.astimezone(QUOTA_ZONE).date().isoformat()


def quota_resets_at(moment: dt.datetime | None = None) -> dt.datetime:
    """The next midnight Pacific time, as a naive UTC instant (the engine's columns)."""
    at = (moment or clock.now()).replace(tzinfo=dt.UTC).astimezone(QUOTA_ZONE)
    midnight = dt.datetime.combine(at.date() + dt.timedelta(days=1), dt.time(), QUOTA_ZONE)
    return midnight.astimezone(dt.UTC).replace(tzinfo=None)


def poll_budget() -> int:
    current = settings.current()
    return int(current.youtube_daily_quota * current.youtube_poll_share)


def spend(account: Account, units: int = POLL_UNITS) -> bool:
    """Count `units` of today's YouTube quota for one of the account's calls, if the polls' budget
    has them: False (nothing counted) when it has not. Call inside a short write transaction."""
    day = quota_day()
    PlatformQuota.insert(platform=account.platform, day=day, units=0).on_conflict_ignore().execute()
    taken = (PlatformQuota.update(units=PlatformQuota.units + units)
             .where(PlatformQuota.platform == account.platform, PlatformQuota.day == day,
                    PlatformQuota.units + units <= poll_budget())
             .execute())
    if not taken:
        return False
    row = _row(account)
    units_today = (row.quota_units if row.quota_day == day else 0) + units
    InboxPoll.update(quota_day=day, quota_units=units_today, updated_at=clock.now()).where(
        InboxPoll.account == account.id).execute()
    return True


def _row(account: Account) -> InboxPoll:
    InboxPoll.insert(account=account.id, platform=account.platform,
                     updated_at=clock.now()).on_conflict_ignore().execute()
    return InboxPoll.get(InboxPoll.account == account.id)


def row(account: Account) -> InboxPoll:
    """The account's poll row, made when missing (in the caller's transaction)."""
    return _row(account)


def webhook_heard(account_ids: list[str]) -> None:
    """A signed X webhook for these accounts was just stored: their subscription is live."""
    moment = clock.now()
    for account_id in account_ids:
        InboxPoll.insert(account=account_id, platform="x", webhook_at=moment, updated_at=moment).on_conflict(
            conflict_target=[InboxPoll.account], update={InboxPoll.webhook_at: moment, InboxPoll.updated_at: moment},
        ).execute()


def webhook_live(poll: InboxPoll | None, moment: dt.datetime | None = None) -> bool:
    fresh_since = (moment or clock.now()) - WEBHOOK_FRESH
    return poll is not None and poll.webhook_at is not None and poll.webhook_at > fresh_since


def project_units_today(platform: str = "youtube") -> int:
    found = PlatformQuota.select(fn.SUM(PlatformQuota.units)).where(
        PlatformQuota.platform == platform, PlatformQuota.day == quota_day()).scalar()
    return int(found or 0)


def inbox_state(account_id: str, platform: str) -> dict[str, Any]:
    """What the account record shows of its inbox under `capabilities.inbox`: how messages arrive
    now, the last poll, TikTok's Business Messaging, YouTube's quota spend of the day."""
    poll = InboxPoll.get_or_none(InboxPoll.account == account_id)
    state: dict[str, Any] = {"lastPolledAt": _iso(poll.polled_at) if poll is not None else None}
    if platform == "x":
        state["arrivesBy"] = "webhook" if webhook_live(poll) else "poll"
    elif platform == "youtube":
        day = quota_day()
        state["arrivesBy"] = "poll"
        state["quota"] = {
            "day": day,
            "accountUnitsToday": poll.quota_units if poll is not None and poll.quota_day == day else 0,
            "projectUnitsToday": project_units_today(),
            "dailyLimit": settings.current().youtube_daily_quota,
            "pollBudget": poll_budget(),
        }
    elif platform == "tiktok":
        state["arrivesBy"] = "webhook"
        state["businessAccount"] = poll.business if poll is not None else None
    return state


def _iso(moment: dt.datetime | None) -> str | None:
    return None if moment is None else moment.replace(microsecond=0).isoformat() + "Z"
