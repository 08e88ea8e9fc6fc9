"""Where each polled inbox stands (`InboxPoll`) and YouTube's daily quota (`PlatformQuota`).

YouTube gives a project 10,000 units a day (by default), shared by every channel connected through
it and reset at midnight Pacific time; `commentThreads.list` costs 1 unit a page and `comments.insert`
50 (uploads have a bucket of their own). So polls spend from a budget of their own, a share of the quota
(`SWITCHBOARD_YOUTUBE_POLL_SHARE`, default 0.8), counted before each call in a short transaction:
once the day's budget is spent the polls wait for the next quota day, and the rest of the quota is
left to replies and the other calls. Each account's spend of the day is kept too, and shown under the
account's `capabilities.inbox`.
"""

from __future__ import annotations

import datetime as dt
from typing import Any
from zoneinfo import ZoneInfo

from peewee import fn

from kit import clock
from platforms import registry
from service.common.configured import Configured
from storage.db import is_postgres
from storage.hot import run_fixed
from storage.models import Account, InboxPoll, PlatformQuota

settings = Configured(__name__)  # handed in by the composition root (wire)

QUOTA_ZONE = ZoneInfo("America/Los_Angeles")  # YouTube's quota day ends at midnight Pacific time
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
    current = settings()
    return int(current.youtube_daily_quota * current.youtube_poll_share)


# Written out: each runs once a poll, and building them with peewee costs more than running them.
_ENSURE = ("INSERT INTO inbox_poll (account_id, platform, quota_units, updated_at) VALUES (?, ?, 0, ?)"
           " ON CONFLICT (account_id) DO UPDATE SET platform = excluded.platform RETURNING cursor")
_SPEND = ("INSERT INTO platform_quota (platform, day, units) VALUES (?, ?, ?) ON CONFLICT (platform, day)"
          " DO UPDATE SET units = platform_quota.units + excluded.units"
          " WHERE platform_quota.units + excluded.units <= ? RETURNING units")
_ACCOUNT_SPEND = ("UPDATE inbox_poll SET quota_units = CASE WHEN quota_day = ? THEN quota_units + ? ELSE ? END,"
                  " quota_day = ? WHERE account_id = ?")
_ENSURE_SPENDING = (
    "INSERT INTO inbox_poll (account_id, platform, quota_day, quota_units, updated_at) VALUES (?, ?, ?, ?, ?)"
    " ON CONFLICT (account_id) DO UPDATE SET quota_units = CASE WHEN inbox_poll.quota_day = excluded.quota_day"
    " THEN inbox_poll.quota_units + excluded.quota_units ELSE excluded.quota_units END,"
    " quota_day = excluded.quota_day RETURNING cursor")
_READ = "UPDATE inbox_poll SET cursor = ?, polled_at = ?, updated_at = ? WHERE account_id = ?"
# PostgreSQL: the project's spend and the account's in one statement (a data-modifying `WITH`), a
# round trip less a poll; the account's row counts the units only if the project's budget had them.
_SPEND_ENSURING = (
    "WITH spent AS (" + _SPEND + ") "  # noqa: S608 - from code
    "INSERT INTO inbox_poll (account_id, platform, quota_day, quota_units, updated_at) VALUES (?, ?, ?,"
    " CASE WHEN EXISTS (SELECT 1 FROM spent) THEN ? ELSE 0 END, ?) ON CONFLICT (account_id) DO UPDATE SET"
    " quota_units = CASE WHEN NOT EXISTS (SELECT 1 FROM spent) THEN inbox_poll.quota_units"
    " WHEN inbox_poll.quota_day = excluded.quota_day THEN inbox_poll.quota_units + excluded.quota_units"
    " ELSE excluded.quota_units END,"
    " quota_day = CASE WHEN EXISTS (SELECT 1 FROM spent) THEN excluded.quota_day ELSE inbox_poll.quota_day END"
    " RETURNING cursor, EXISTS (SELECT 1 FROM spent)")


def cursor_of(account: Account) -> str | None:
    """The account's stored cursor; its poll row is made when missing (in the caller's transaction)."""
    found = run_fixed(_ENSURE, (account.id, account.platform, clock.now())).fetchone()
    return found[0] if found else None


def begin(account: Account, *, units: int) -> tuple[bool, str | None]:
    """A poll starts: its first call's `units` of quota counted (for the project, then the account)
    if the polls' budget has them, and the account's cursor; the poll row is made when missing.
    `(False, cursor)`: the budget is spent, nothing counted. Call inside a short write transaction
    (on PostgreSQL it is one statement, which needs none)."""
    if units:
        day, budget = quota_day(), poll_budget()
        if is_postgres() and units <= budget:
            row = run_fixed(_SPEND_ENSURING, (account.platform, day, units, budget, account.id, account.platform, day,
                                              units, clock.now())).fetchone()
            return bool(row[1]), row[0]
        if units <= budget and run_fixed(_SPEND, (account.platform, day, units, budget)).fetchone() is not None:
            found = run_fixed(_ENSURE_SPENDING, (account.id, account.platform, day, units, clock.now())).fetchone()
            return True, found[0] if found else None
        return False, cursor_of(account)
    return True, cursor_of(account)


def polled(platform: str) -> bool:
    """Whether the platform's accounts have a poll of their own (their inbox, or a check of it)."""
    return registry.declared(platform).inbox_rules.poll is not None


def spend(account: Account, units: int) -> bool:
    """Count `units` of today's YouTube quota for one of the account's calls, if the polls' budget
    has them: False (nothing counted) when it has not. The account's poll row must exist
    (`cursor_of`). Call inside a short write transaction."""
    day, budget = quota_day(), poll_budget()
    if units > budget or run_fixed(_SPEND, (account.platform, day, units, budget)).fetchone() is None:
        return False
    run_fixed(_ACCOUNT_SPEND, (day, units, units, day, account.id))
    return True


def read_recorded(account_id: str, cursor: str | None) -> tuple[str, tuple[Any, ...]]:
    """`record_read`'s statement and parameters, for a rider of the poll's outcome (`engine.Also`)."""
    moment = clock.now()
    return _READ, (cursor, moment, moment, account_id)


def record_read(account_id: str, cursor: str | None) -> None:
    """The poll committed: its cursor, and when."""
    moment = clock.now()
    run_fixed(_READ, (cursor, moment, moment, account_id))


def webhook_heard(platform: str, account_ids: list[str]) -> None:
    """A signed webhook for these accounts was just stored: their subscription is live."""
    moment = clock.now()
    for account_id in account_ids:
        InboxPoll.insert(account=account_id, platform=platform, webhook_at=moment, updated_at=moment).on_conflict(
            conflict_target=[InboxPoll.account], update={InboxPoll.webhook_at: moment, InboxPoll.updated_at: moment},
        ).execute()


def webhook_live(poll: InboxPoll | None, moment: dt.datetime | None = None) -> bool:
    fresh_since = (moment or clock.now()) - WEBHOOK_FRESH
    return poll is not None and poll.webhook_at is not None and poll.webhook_at > fresh_since


def project_units_today(platform: str) -> int:
    found = PlatformQuota.select(fn.SUM(PlatformQuota.units)).where(PlatformQuota.day == quota_day()).filter(
        platform=platform).scalar()
    return int(found or 0)


def inbox_state(account_id: str, platform: str) -> dict[str, Any]:
    """What the account record shows of its inbox under `capabilities.inbox`: how messages arrive
    now, the last poll, TikTok's Business Messaging, YouTube's quota spend of the day."""
    poll = InboxPoll.get_or_none(InboxPoll.account == account_id)
    rules = registry.declared(platform).inbox_rules
    state: dict[str, Any] = {"lastPolledAt": _iso(poll.polled_at) if poll is not None else None}
    if rules.rests_while_webhook_heard:
        state["arrivesBy"] = "webhook" if webhook_live(poll) else "poll"
    elif rules.poll == "pages":
        state["arrivesBy"] = "poll"
    elif rules.poll == "business_check":
        state["arrivesBy"] = "webhook"
        state["businessAccount"] = poll.business if poll is not None else None
    if rules.page_units:
        day = quota_day()
        state["quota"] = {
            "day": day,
            "accountUnitsToday": poll.quota_units if poll is not None and poll.quota_day == day else 0,
            "projectUnitsToday": project_units_today(platform),
            "dailyLimit": settings().youtube_daily_quota,
            "pollBudget": poll_budget(),
        }
    return state


def describe_account(account_id: str, platform: str, capabilities: dict[str, Any]) -> None:
    """Receiver of `signals.account_described`: where the account's inbox stands (how messages
    arrive now, its last poll, YouTube's quota spend of the day, whether a TikTok account may use
    Business Messaging) under `capabilities.inbox`."""
    if polled(platform):
        capabilities["inbox"] = inbox_state(account_id, platform)
        if capabilities["inbox"].get("businessAccount") is False:
            capabilities["dm"] = False


def _iso(moment: dt.datetime | None) -> str | None:
    return None if moment is None else moment.replace(microsecond=0).isoformat() + "Z"
