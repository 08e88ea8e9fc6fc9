"""Analytics: each account's followers over the chosen window and granularity, drawn on the server
as an SVG line (no chart library, nothing from another host), with its growth figures and the
account's posts of the window (`GET /v1/analytics/followers` and `GET /v1/posts?from=&to=`)."""

from __future__ import annotations

import datetime as dt
from typing import Any

from markupsafe import Markup, escape
from starlette.requests import Request
from starlette.responses import Response

from dashboard import views
from dashboard.forms import account_rows, labels
from dashboard.views import Seat, data_of
from kit import shapes
from kit.errors import ServiceError
from oauth.shell import in_db
from service.analytics import ops as analytics
from service.analytics.shapes import GRANULARITIES, FollowersQuery
from service.posts import ops as posts

PAGE = "/dashboard/analytics"
WIDTH, HEIGHT, PAD = 640, 220, 36
POSTS_SHOWN = 5


def chart(label: str, series: list[dict[str, Any]]) -> Markup:
    """The follower line as an SVG: one point per bucket that has a count, the lowest and highest
    counts on the axis, the first and last dates under it. Its accessible name says what it shows."""
    known = [(n, p) for n, p in enumerate(series) if p["followers"] is not None]
    if not known:
        return Markup('<p class="muted">No follower counts in this window yet: they are taken once a day.</p>')
    low: int = min(p["followers"] for _, p in known)
    high: int = max(p["followers"] for _, p in known)
    span = max(high - low, 1)
    steps = max(len(series) - 1, 1)

    def x(n: int) -> float:
        return PAD + (WIDTH - 2 * PAD) * n / steps

    def y(count: int) -> float:
        return HEIGHT - PAD - (HEIGHT - 2 * PAD) * (count - low) / span

    points = " ".join(f"{x(n):.1f},{y(p['followers']):.1f}" for n, p in known)
    first, last = known[0][1], known[-1][1]
    name = (f"Followers of {label} from {series[0]['date']} to {series[-1]['date']}: "
            f"{first['followers']} to {last['followers']}")
    dots = "".join(f'<circle cx="{x(n):.1f}" cy="{y(p["followers"]):.1f}" r="2.5"><title>{escape(p["date"])}: '
                   f'{p["followers"]}</title></circle>' for n, p in known)
    svg = (f'<svg class="chart" viewBox="0 0 {WIDTH} {HEIGHT}" role="img" aria-label="{escape(name)}" '
           f'preserveAspectRatio="none">'
           f'<line x1="{PAD}" y1="{HEIGHT - PAD}" x2="{WIDTH - PAD}" y2="{HEIGHT - PAD}" class="axis"/>'
           f'<line x1="{PAD}" y1="{PAD}" x2="{PAD}" y2="{HEIGHT - PAD}" class="axis"/>'
           f'<text x="{PAD - 4}" y="{PAD + 4}" text-anchor="end">{high}</text>'
           f'<text x="{PAD - 4}" y="{HEIGHT - PAD}" text-anchor="end">{low}</text>'
           f'<text x="{PAD}" y="{HEIGHT - 8}">{escape(series[0]["date"])}</text>'
           f'<text x="{WIDTH - PAD}" y="{HEIGHT - 8}" text-anchor="end">{escape(series[-1]["date"])}</text>'
           f'<polyline points="{points}" class="line"/>{dots}</svg>')
    return Markup(svg)  # noqa: S704 - every caller-controlled part above is escaped


def _report(where: Seat, query: FollowersQuery) -> dict[str, Any]:
    actor = where.actor()
    known = account_rows(actor, connected=False)
    names = labels(known)
    report = analytics.follower_analytics(actor=actor, **dict(query)).dump()
    start = f"{report['fromDate']}T00:00:00Z"
    end = (dt.date.fromisoformat(report["toDate"]) + dt.timedelta(days=1)).isoformat() + "T00:00:00Z"
    accounts = []
    for item in report["accounts"]:
        label = names.get(item["accountId"], item["platform"])
        shown = data_of(posts.list_posts(actor=actor, account_id=item["accountId"], from_=start, to=end,
                                         limit=POSTS_SHOWN))
        accounts.append({**item, "label": label, "chart": chart(label, item["series"]), "recent": shown})
    return {"report": report, "accounts": accounts, "choices": known}


async def analytics_page(request: Request) -> Response:
    params = request.query_params
    raw = {"fromDate": params.get("from", ""), "toDate": params.get("to", ""),
           "granularity": params.get("granularity", ""), "accountId": params.get("account", "")}
    where = await views.seat(request)
    try:
        query = shapes.parse(FollowersQuery, {k: v for k, v in raw.items() if v})
        data = await in_db(_report, where, query)
    except ServiceError as problem:
        return views.failure(request, problem, PAGE)
    return views.page(request, "analytics.html", where, title="Analytics", nav="analytics", raw=raw,
                      granularities=GRANULARITIES, **data)
