"""The calendar: scheduled and published posts by month and by week, from the same window query as
`GET /v1/posts?from=&to=` (`posts.calendar` reads only what a day shows: its first posts by time and
how many it holds), each post a link to its page, each full day a link to the list of that day.

The week is an hour grid (days as columns, hours as rows), each post in the cell of its hour. A
post that can still move (scheduled, not yet due) is dragged to another cell, or taken there with
its "Move to…" page (the keyboard's and a browser without JavaScript's way): either way the move is
confirmed, from → to, before it reschedules (dashboard/moves.py)."""

from __future__ import annotations

import calendar as months
import datetime as dt
from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from dashboard import views
from dashboard.forms import zone_of
from dashboard.views import Seat
from kit.errors import ServiceError, ValidationFailed
from oauth.shell import in_db
from service.posts import ops as posts

PAGE = "/dashboard/calendar"
PER_DAY = {"month": 3, "week": 48}
HOURS = range(24)


def _instant(day: dt.date, zone: dt.tzinfo) -> str:
    moment = dt.datetime.combine(day, dt.time(), tzinfo=zone).astimezone(dt.UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def grid(view: str, anchor: dt.date) -> tuple[dt.date, dt.date, str]:
    """The days shown (Monday first, whole weeks), the end excluded, and the page's heading."""
    if view == "week":
        first = anchor - dt.timedelta(days=anchor.weekday())
        return first, first + dt.timedelta(days=7), f"Week of {first.strftime('%d %B %Y').lstrip('0')}"
    start = anchor.replace(day=1)
    first = start - dt.timedelta(days=start.weekday())
    last = start.replace(day=months.monthrange(start.year, start.month)[1])
    end = last + dt.timedelta(days=7 - last.weekday())
    return first, end, start.strftime("%B %Y")


def shift(view: str, anchor: dt.date, steps: int) -> dt.date:
    if view == "week":
        return anchor + dt.timedelta(days=7 * steps)
    month = anchor.month - 1 + steps
    return dt.date(anchor.year + month // 12, month % 12 + 1, 1)


def month_view(where: Seat, view: str, anchor: dt.date, zone_name: str) -> dict[str, Any]:
    zone = zone_of(zone_name)
    first, end, heading = grid(view, anchor)
    found = posts.calendar(actor=where.actor(), from_=_instant(first, zone), to=_instant(end, zone),
                           per_day=PER_DAY[view], zone=zone)
    today = dt.datetime.now(zone).date()
    weeks = []
    day = first
    while day < end:
        week = []
        for _ in range(7):
            shown, count = found.get(day, ([], 0))
            week.append({"date": day, "shown": shown, "more": count - len(shown), "count": count,
                         "outside": view == "month" and day.month != anchor.month, "today": day == today})
            day += dt.timedelta(days=1)
        weeks.append(week)
    page: dict[str, Any] = {"weeks": weeks, "heading": heading, "total": sum(c for _, c in found.values())}
    if view == "week":
        page["hours"] = hour_grid(weeks[0], dt.datetime.now(zone))
    return page


def hour_grid(days: list[dict[str, Any]], now: dt.datetime) -> list[dict[str, Any]]:
    """The week's rows, one an hour: each a cell per day holding the posts of that hour, each post
    marked `movable` when it is scheduled and not yet due (a move would be refused otherwise)."""
    rows = []
    for hour in HOURS:
        cells = []
        for day in days:
            at = dt.datetime.combine(day["date"], dt.time(hour))
            entries = [{"post": p, "movable": p.status == "scheduled" and p.at > now}
                       for p in day["shown"] if p.at.hour == hour]
            cells.append({"date": day["date"], "hour": hour, "entries": entries, "today": day["today"],
                          "label": f"{at:%A} {at.day} {at:%B %Y}, {at:%H:%M}"})
        rows.append({"hour": hour, "cells": cells})
    return rows


async def calendar_page(request: Request) -> Response:
    params = request.query_params
    view = params.get("view", "month")
    where = await views.seat(request)
    zone_name = params.get("tz") or views.person_zone(request)
    try:
        if view not in PER_DAY:
            raise ValidationFailed.field("view", "must be month or week")
        try:
            anchor = dt.date.fromisoformat(params["date"]) if params.get("date") else dt.datetime.now(
                zone_of(zone_name)).date()
        except ValueError:
            raise ValidationFailed.field("date", "must be a date (YYYY-MM-DD)") from None
        if not dt.date(1970, 2, 1) <= anchor <= dt.date(9999, 11, 30):
            raise ValidationFailed.field("date", "must lie between 1970 and 9999")
        shown = await in_db(month_view, where, view, anchor, zone_name)
    except ServiceError as problem:
        return views.failure(request, problem, PAGE)
    back = request.url.path + (f"?{request.url.query}" if request.url.query else "")
    return views.page(request, "calendar.html", where, title="Calendar", nav="calendar", view=view, tz=zone_name,
                      back=back,
                      anchor=anchor, previous=shift(view, anchor, -1), following=shift(view, anchor, 1),
                      weekdays=["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"], **shown)
