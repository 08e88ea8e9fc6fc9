"""Follower analytics: a daily follower snapshot per connected account, and the series read from them.

Taking snapshots. Once a UTC day per connected account, the engine takes its count: the work is the
account's `snapshot` chore (service/analytics/work.py). A `failed` count (the platform did not
answer) is tried again an hour later. A platform that does not share the count for the account
(WhatsApp, Meta Ads, LinkedIn without the member-analytics permission, a Telegram bot without a
channel) gives a `refused` row, not tried again that day; the other accounts go on. `take_now` (the
`switchboard analytics snapshot` command) takes every connected account at once and overwrites
today's count: a re-take the same day updates the day's row.

Reading them. The window `fromDate..toDate` is cut into buckets: each day, each week (dated its
Monday) or each month (dated its first day). A bucket's `followers` is the last count taken in its
days that lie in the window; a bucket without one shows null rather than a guess, and its `change`
is null too. `change` compares with the latest earlier bucket that has a count, so one missing day
does not hide the next day's change. `growth` runs from the window's first count to its last,
whatever the granularity.
"""

from __future__ import annotations

import datetime as dt
import logging
from dataclasses import dataclass
from typing import Literal

from kit import clock
from kit.errors import FieldProblem, NotFound, ValidationFailed
from platforms.base import PlatformFailure, ReauthRequired, Rejected, Unsupported
from service.accounts import adapters
from service.analytics.shapes import (
    DEFAULT_WINDOW_DAYS,
    MAX_WINDOW_DAYS,
    AccountFollowers,
    FollowerAnalytics,
    PostCounts,
)
from service.identity.auth import Actor
from service.posts import ops as posts
from storage.db import connection, db
from storage.models import Account, FollowerSnapshot

log = logging.getLogger("switchboard.analytics")

Outcome = Literal["taken", "refused", "failed", "gone"]


@dataclass(frozen=True)
class Snapshot:
    account_id: str
    platform: str
    outcome: Outcome
    followers: int | None = None
    reason: str | None = None  # why a count was not taken, safe to show (never a token)


def today() -> dt.date:
    return clock.now().date()


# -- taking snapshots --------------------------------------------------------------------------


def ask(account: Account) -> Snapshot:
    """The platform's count for one account, outside any transaction (it calls the platform)."""
    try:
        count = adapters.call(account, lambda adapter, ctx: adapter.follower_count(ctx))
    except (Unsupported, Rejected, ReauthRequired) as refusal:
        return Snapshot(account.id, account.platform, "refused", reason=refusal.message)
    except PlatformFailure as failure:
        log.info("follower count of account %s: the platform did not answer (%s)", account.id, failure.message)
        return Snapshot(account.id, account.platform, "failed", reason=failure.message)
    return Snapshot(account.id, account.platform, "taken", followers=max(0, int(count)))


def _record_now(snapshot: Snapshot, day: dt.date) -> None:
    row = {"account": snapshot.account_id, "date": day, "followers": snapshot.followers, "state": snapshot.outcome,
           "taken_at": clock.now()}
    update = {FollowerSnapshot.followers: snapshot.followers, FollowerSnapshot.state: snapshot.outcome,
              FollowerSnapshot.taken_at: row["taken_at"]}
    # A count replaces the day's row; a refusal or failure never erases a count taken earlier that day.
    keep_count = None if snapshot.outcome == "taken" else (FollowerSnapshot.state != "taken")
    with db.atomic():
        FollowerSnapshot.insert(**row).on_conflict(
            conflict_target=[FollowerSnapshot.account, FollowerSnapshot.date], update=update, where=keep_count,
        ).execute()


def take_now(*, account_ids: list[str] | None = None) -> list[Snapshot]:
    """Take today's count of every connected account (or of those listed) now, one after the other,
    overwriting any count taken earlier today. Outside any transaction: it calls the platforms."""
    day = today()
    with connection():
        query = Account.select().where(Account.status == "connected")
        if account_ids is not None:
            query = query.where(Account.id.in_(account_ids))
        accounts = list(query.order_by(Account.created_at, Account.id))
        snapshots = []
        for account in accounts:
            snapshot = ask(account)
            _record_now(snapshot, day)
            snapshots.append(snapshot)
    return snapshots


def delete_for_account(account_id: str) -> int:
    """An account deleted for good takes its snapshots with it (an account dependent)."""
    return int(FollowerSnapshot.delete().where(FollowerSnapshot.account == account_id).execute())


# -- posts of the window -------------------------------------------------------------------------


def post_counts(*, account_ids: list[str], from_date: dt.date, to_date: dt.date, source: str
                ) -> dict[str, PostCounts]:
    """For each account, its posts published in the window (`from_date`..`to_date`, UTC days,
    both included) of that `source` (`all`, `service`: published through Switchboard, `external`:
    made on the platform itself): how many, and their likes, comments and shares summed.

    Counts the account's post targets with status `published` and `published_at` in the window,
    whose post's `source` matches."""
    start = dt.datetime.combine(from_date, dt.time())
    end = dt.datetime.combine(to_date + dt.timedelta(days=1), dt.time())
    found = posts.published_counts(account_ids=account_ids, start=start, end=end, source=source)
    empty = {"count": 0, "likes": 0, "comments": 0, "shares": 0}
    return {account_id: PostCounts(**found.get(account_id, empty)) for account_id in account_ids}


# -- reading the series ------------------------------------------------------------------------


def _bucket(day: dt.date, granularity: str) -> dt.date:
    if granularity == "week":
        return day - dt.timedelta(days=day.weekday())
    if granularity == "month":
        return day.replace(day=1)
    return day


def _window(from_date: dt.date | None, to_date: dt.date | None) -> tuple[dt.date, dt.date]:
    end = to_date or today()
    start = from_date or today() - dt.timedelta(days=DEFAULT_WINDOW_DAYS)
    if start > end:
        hint = "" if from_date else " (it defaults to 30 days before today: give it with toDate)"
        raise ValidationFailed("The window is not valid.", details=[
            FieldProblem("fromDate", f"must be on or before toDate{hint}")])
    if (end - start).days + 1 > MAX_WINDOW_DAYS:
        raise ValidationFailed("The window is not valid.", details=[
            FieldProblem("fromDate", f"must be at most {MAX_WINDOW_DAYS} days before toDate, counting both")])
    return start, end


def _accounts(actor: Actor, *, profile_id: str | None, account_id: str | None, platform: str | None
              ) -> list[tuple[str, str]]:
    query = Account.select(Account.id, Account.platform, Account.profile).where(Account.workspace == actor.workspace_id)
    if account_id is not None:
        account = Account.get_or_none(Account.id == account_id, Account.workspace == actor.workspace_id)
        if account is None:
            raise NotFound("No account with that id.")
        actor.require_profile(account.profile_id)
        query = query.where(Account.id == account_id)
    if actor.profile_ids is not None:
        query = query.where(Account.profile.in_(list(actor.profile_ids)))
    if profile_id is not None:
        actor.require_profile(profile_id)  # a filter naming a profile outside the key's: 403, as everywhere
        query = query.where(Account.profile == profile_id)
    if platform is not None:
        query = query.filter(platform=platform)
    return [(row.id, row.platform) for row in query.order_by(Account.created_at, Account.id)]


def read_snapshots(account_ids: list[str], start: dt.date, end: dt.date) -> list[tuple[str, str | dt.date, int]]:
    """`(account_id, day, followers)` of every count taken in the window, by account and day. The day
    is SQLite's text (`YYYY-MM-DD`) or PostgreSQL's date."""
    if not account_ids:
        return []
    marks = ", ".join([db.param] * len(account_ids))  # only placeholders go into the text
    sql = ("SELECT account_id, date, followers FROM follower_snapshot "  # noqa: S608
           f"WHERE account_id IN ({marks}) AND date >= {db.param} AND date <= {db.param} AND state = 'taken' "
           "ORDER BY account_id, date")
    return list(db.execute_sql(sql, [*account_ids, start.isoformat(), end.isoformat()]).fetchall())


def follower_analytics(
    *,
    actor: Actor,
    profile_id: str | None = None,
    account_id: str | None = None,
    platform: str | None = None,
    source: str | None = None,
    from_date: dt.date | None = None,
    to_date: dt.date | None = None,
    granularity: str | None = None,
) -> FollowerAnalytics:
    """Each account's follower series over the window, its growth, and its posts of the window."""
    start, end = _window(from_date, to_date)
    granularity = granularity or "day"
    source = source or "all"
    accounts = _accounts(actor, profile_id=profile_id, account_id=account_id, platform=platform)
    ids = [account for account, _ in accounts]

    # Every day of the window, as text and as a date, with the bucket it falls in.
    days = [start + dt.timedelta(days=n) for n in range((end - start).days + 1)]
    bucket_of: dict[str | dt.date, str] = {}
    for day in days:
        bucket_of[day] = bucket_of[day.isoformat()] = _bucket(day, granularity).isoformat()
    buckets = list(dict.fromkeys(bucket_of.values()))

    # One pass over the rows (in day order): each bucket keeps its last count; each account its first and last.
    in_bucket: dict[str, dict[str, int]] = {account: {} for account in ids}
    first_of: dict[str, int] = {}
    last_of: dict[str, int] = {}
    for account, taken_on, followers in read_snapshots(ids, start, end):
        in_bucket[account][bucket_of[taken_on]] = followers
        if account not in first_of:
            first_of[account] = followers
        last_of[account] = followers
    posts = post_counts(account_ids=ids, from_date=start, to_date=end, source=source)

    out = []
    for account, account_platform in accounts:
        counts = in_bucket[account]
        # Plain dicts, validated into `FollowerPoint`s by pydantic-core in one go: a model built in
        # Python per point costs more than the whole read (366 points an account).
        series: list[dict[str, object]] = []
        previous: int | None = None
        for bucket in buckets:
            count = counts.get(bucket)
            if count is None:
                series.append({"date": bucket, "followers": None, "change": None})
                continue
            change = None if previous is None else count - previous
            series.append({"date": bucket, "followers": count, "change": change})
            previous = count
        first, last = first_of.get(account), last_of.get(account)
        growth = None if first is None or last is None else last - first
        percent = round(growth * 100 / first, 2) if growth is not None and first else None
        out.append(AccountFollowers.model_validate({
            "account_id": account, "platform": account_platform, "series": series, "current_followers": last,
            "growth": growth, "growth_percent": percent, "posts": posts[account]}))
    return FollowerAnalytics(from_date=start.isoformat(), to_date=end.isoformat(), granularity=granularity,
                             source=source, accounts=out)
