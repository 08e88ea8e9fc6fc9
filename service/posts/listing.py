"""Posts as lists: `GET /v1/posts` (filters, a window of time), the calendar's days, and the
published counts that follower analytics read."""

from __future__ import annotations

import bisect
import datetime as dt
from dataclasses import dataclass
from typing import Any

from peewee import fn

from kit import scheduling
from kit.errors import FieldProblem, ValidationFailed
from kit.pagination import Page, records, window
from service.identity.auth import Actor
from service.posts.records import record
from service.posts.shapes import Post as PostRecord
from storage.db import db
from storage.models import Post, PostTarget


def list_posts(*, actor: Actor, status: str | None = None, profile_id: str | None = None,
               account_id: str | None = None, platform: str | None = None, source: str | None = None,
               page: int | None = None, limit: int | None = None, from_: str | None = None,
               to: str | None = None) -> Page:
    dates = _window(from_, to)
    query = _visible(actor, Post.select(), dates)
    if status is not None:
        query = query.where(Post.status == status)
    if source not in (None, "all"):
        query = query.where(Post.source == source)
    # Filters on the targets: the post has one that matches them all.
    by_target: dict[str, str] = {}
    if profile_id is not None:
        actor.require_profile(profile_id)
        by_target["profile_id"] = profile_id
    if account_id is not None:
        by_target["account"] = account_id
    if platform is not None:
        by_target["platform"] = platform
    if by_target:
        query = query.where(Post.id.in_(PostTarget.select(PostTarget.post).filter(**by_target)))
    page, limit, offset = window(page, limit)
    total = query.count()
    rows = list(query.order_by(Post.created_at.desc(), Post.id.desc()).paginate(page, limit)) if offset < total else []
    by_post: dict[str, list[PostTarget]] = {row.id: [] for row in rows}
    if rows:
        for target in PostTarget.select().where(PostTarget.post.in_(list(by_post))).order_by(PostTarget.position):
            by_post[target.post_id].append(target)
    items = [record(row, by_post[row.id]) for row in rows]
    return Page(PostRecord, records(PostRecord, items), page, limit, total)


def _visible(actor: Actor, query: Any, dates: tuple[dt.datetime, dt.datetime] | None) -> Any:
    """The workspace's posts the actor may see, those of the window `[start, end)` when given: the
    one filter of `GET /v1/posts?from=&to=` and of the dashboard's calendar."""
    query = query.where(Post.workspace == actor.workspace_id)
    if dates is not None:
        start, end = dates
        # A calendar shows a post on the day it is due or went live (a target of a partial post too).
        live = PostTarget.select(PostTarget.post).where(PostTarget.workspace == actor.workspace_id,
                                                       PostTarget.published_at >= start, PostTarget.published_at < end)
        query = query.where(((Post.scheduled_for >= start) & (Post.scheduled_for < end))
                            | ((Post.published_at >= start) & (Post.published_at < end)) | Post.id.in_(live))
    if actor.profile_ids is not None:
        outside = PostTarget.select(PostTarget.post).where(PostTarget.workspace == actor.workspace_id,
                                                          PostTarget.profile_id.not_in(list(actor.profile_ids)))
        query = query.where(Post.id.not_in(outside))
    return query


# The contract's range of instants a caller may send (1970-01-01 .. 9999-12-30).
def _window(from_: str | None, to: str | None) -> tuple[dt.datetime, dt.datetime] | None:
    """`[from, to)` as naive UTC, either end open; None without either."""
    if from_ is None and to is None:
        return None
    problems: list[FieldProblem] = []
    start, end = scheduling.query_instant(from_, "from", problems), scheduling.query_instant(to, "to", problems)
    if start is not None and end is not None and start >= end:
        problems.append(FieldProblem("to", "must be after from"))
    if problems:
        raise ValidationFailed("Some fields are not valid.", details=problems)
    return start or scheduling.EARLIEST, end or scheduling.LATEST


def published_counts(*, account_ids: list[str], start: dt.datetime, end: dt.datetime,
                     source: str = "all") -> dict[str, dict[str, int]]:
    """For follower analytics: per account, its targets `published` in [start, end) of posts of that
    `source` (`all`, `service`, `external`), with their summed `likes`, `comments`, `shares`.
    Accounts without any are left out."""
    query = (PostTarget.select(PostTarget.account, fn.COUNT(PostTarget.id).alias("count"),
                               fn.SUM(PostTarget.likes).alias("likes"), fn.SUM(PostTarget.comments).alias("comments"),
                               fn.SUM(PostTarget.shares).alias("shares"))
             .join(Post)
             .where(PostTarget.account.in_(account_ids), PostTarget.status == "published",
                    PostTarget.published_at >= start, PostTarget.published_at < end)
             .group_by(PostTarget.account))
    if source != "all":
        query = query.where(Post.source == source)
    rows: list[dict[str, Any]] = list(query.dicts())  # type: ignore[arg-type]
    return {row["account"]: {"count": int(row["count"]), "likes": int(row["likes"] or 0),
                             "comments": int(row["comments"] or 0), "shares": int(row["shares"] or 0)}
            for row in rows}


@dataclass(frozen=True)
class CalendarEntry:
    id: str
    content: str
    status: str
    at: dt.datetime


def calendar(*, actor: Actor, from_: str, to: str, per_day: int = 4, zone: dt.tzinfo = dt.UTC
             ) -> dict[dt.date, tuple[list[CalendarEntry], int]]:
    """The posts `list_posts(from_=, to=)` finds in a window, by day (in `zone`): each day's first
    `per_day` by time and how many it holds in all. A month of thousands of posts is one narrow
    query (the time as stored, no conversion per row; each row's day found by bisection among the
    days' starts) and one more for the few shown."""
    start, end = _window(from_, to) or (scheduling.EARLIEST, scheduling.LATEST)
    when = fn.COALESCE(Post.published_at, Post.scheduled_for).coerce(False)
    query = _visible(actor, Post.select(when, Post.id), (start, end))
    first_day = start.replace(tzinfo=dt.UTC).astimezone(zone).date() - dt.timedelta(days=1)
    last_day = min(end, scheduling.LATEST).replace(tzinfo=dt.UTC).astimezone(zone).date() + dt.timedelta(days=1)
    days = [first_day + dt.timedelta(days=n) for n in range((last_day - first_day).days + 1)]
    # Each day's first instant in UTC, written as the database writes a naive UTC time.
    starts = [dt.datetime.combine(day, dt.time(), tzinfo=zone).astimezone(dt.UTC).strftime("%Y-%m-%d %H:%M:%S")
              for day in days]
    counts: dict[int, int] = {}
    shown: dict[int, list[str]] = {}
    # The driver's own rows: peewee's per-row conversion would cost more than the rest of the page.
    rows: Any = db.execute(query.order_by(when, Post.id)).fetchall()
    for at, post_id in rows:
        if at is None:
            continue
        index = bisect.bisect_right(starts, str(at)) - 1
        counts[index] = counts.get(index, 0) + 1
        if counts[index] <= per_day:
            shown.setdefault(index, []).append(post_id)
    wanted = [post_id for ids_ in shown.values() for post_id in ids_]
    found = {post.id: post for post in Post.select(Post.id, Post.content, Post.status, Post.scheduled_for,
                                                   Post.published_at).where(Post.id.in_(wanted))} if wanted else {}
    out: dict[dt.date, tuple[list[CalendarEntry], int]] = {}
    for index, count in counts.items():
        entries = []
        for post_id in shown.get(index, []):
            post = found[post_id]
            at = (post.published_at or post.scheduled_for or start).replace(tzinfo=dt.UTC).astimezone(zone)
            entries.append(CalendarEntry(post.id, post.content[:80], post.status, at))
        out[days[index]] = (entries, count)
    return out
