"""Follower analytics: daily snapshots of each account's follower count (taken by the scheduler, or at
once by `switchboard analytics snapshot`), read back as a series per day, week or month."""

from __future__ import annotations

import asyncio
import datetime as dt
import itertools
import json
import re
import subprocess

import httpx2
import pytest

from kit import clock
from service.analytics import ops as analytics
from storage.db import connection
from storage.models import User
from tests.conftest import bearer
from tests.support.oauth_flow import browser_sign_in, hand_made_tokens, mcp_client, structured
from tests.support.processes import service_env, switchboard
from tests.support.sandbox import connect_account
from tests.support.webhook_receiver import wait_for

DAY = 86_400


def _followers(client, account: dict, count: int) -> None:
    answer = client.post(f"/sandbox/{account['platform']}/followers", json={"accountId": account["id"], "followers": count})
    assert answer.status_code == 200, answer.text


def _take_days(client, account: dict, counts: dict[int, int]) -> dt.date:
    """For each day offset (ascending) from today: the clock moves to that day, the platform reports
    the count, and the day's snapshot is taken. Returns the first day."""
    first = clock.now().date()
    at = 0
    for offset, count in sorted(counts.items()):
        clock.advance((offset - at) * DAY)
        at = offset
        _followers(client, account, count)
        [snapshot] = analytics.take_now(account_ids=[account["id"]])
        assert (snapshot.outcome, snapshot.followers) == ("taken", count)
    return first


def _analytics(client, tenant, **query) -> httpx2.Response:
    return client.get("/v1/analytics/followers", headers=bearer(tenant["apiKey"]), params=query)


def _one(client, tenant, **query) -> dict:
    answer = _analytics(client, tenant, **query)
    assert answer.status_code == 200, answer.text
    [account] = answer.json()["accounts"]
    return account


def _day(first: dt.date, offset: int) -> str:
    return (first + dt.timedelta(days=offset)).isoformat()


def test_daily_series_shows_each_days_count_its_change_and_the_windows_growth(live):
    tenant = live.tenant()
    account = connect_account(live.client, tenant, "instagram")
    first = _take_days(live.client, account, {0: 1000, 1: 1010, 2: 1005, 3: 1050})

    # Two days before the account's first count: no snapshot, so null (never a guess).
    body = _analytics(live.client, tenant, accountId=account["id"], fromDate=_day(first, -2),
                      toDate=_day(first, 3)).json()
    assert (body["fromDate"], body["toDate"], body["granularity"], body["source"]) == (
        _day(first, -2), _day(first, 3), "day", "all")
    [series] = body["accounts"]
    assert series["accountId"] == account["id"]
    assert series["platform"] == "instagram"
    assert series["series"] == [
        {"date": _day(first, -2), "followers": None, "change": None},
        {"date": _day(first, -1), "followers": None, "change": None},
        {"date": _day(first, 0), "followers": 1000, "change": None},
        {"date": _day(first, 1), "followers": 1010, "change": 10},
        {"date": _day(first, 2), "followers": 1005, "change": -5},
        {"date": _day(first, 3), "followers": 1050, "change": 45},
    ]
    assert (series["currentFollowers"], series["growth"], series["growthPercent"]) == (1050, 50, 5.0)
    assert series["posts"] == {"count": 0, "likes": 0, "comments": 0, "shares": 0}

    # The defaults: the last 30 days up to today (the clock's today), one point a day.
    default = _one(live.client, tenant)
    assert len(default["series"]) == 31
    assert default["series"][-1] == {"date": _day(first, 3), "followers": 1050, "change": 45}
    assert default["series"][0]["date"] == _day(first, 3 - 30)

    # A window inside the history: growth runs from its own first count.
    inner = _one(live.client, tenant, fromDate=_day(first, 1), toDate=_day(first, 2))
    assert (inner["currentFollowers"], inner["growth"], inner["growthPercent"]) == (1005, -5, -0.5)


def test_a_retake_the_same_day_updates_that_days_count(live):
    tenant = live.tenant()
    account = connect_account(live.client, tenant, "youtube")
    first = _take_days(live.client, account, {0: 300})
    _take_days(live.client, account, {0: 333})
    series = _one(live.client, tenant, fromDate=_day(first, 0), toDate=_day(first, 0))["series"]
    assert series == [{"date": _day(first, 0), "followers": 333, "change": None}]


def test_weekly_points_are_mondays_with_the_last_count_of_each_week_in_the_window(live):
    tenant = live.tenant()
    account = connect_account(live.client, tenant, "x")
    first = _take_days(live.client, account, {n: 100 + 10 * n for n in range(15)})
    monday = first - dt.timedelta(days=first.weekday())
    to_date = first + dt.timedelta(days=14)
    body = _one(live.client, tenant, granularity="week", fromDate=first.isoformat(), toDate=to_date.isoformat())

    mondays = [monday + dt.timedelta(weeks=n) for n in range(4) if monday + dt.timedelta(weeks=n) <= to_date]
    assert [point["date"] for point in body["series"]] == [m.isoformat() for m in mondays]
    # Each week's last day within the window: Sunday, or the window's last day.
    last_days = [min(m + dt.timedelta(days=6), to_date) for m in mondays]
    expected = [100 + 10 * (day - first).days for day in last_days]
    assert [point["followers"] for point in body["series"]] == expected
    assert [point["change"] for point in body["series"]] == [None] + [b - a for a, b in itertools.pairwise(expected)]
    assert (body["currentFollowers"], body["growth"], body["growthPercent"]) == (240, 140, 140.0)


def test_monthly_points_are_first_days_with_the_last_count_of_each_month(live):
    tenant = live.tenant()
    account = connect_account(live.client, tenant, "tiktok")
    offsets = list(range(0, 70, 6))  # snapshots every sixth day over ten weeks: three months at least
    first = _take_days(live.client, account, {n: 1000 + n for n in offsets})
    to_date = first + dt.timedelta(days=69)
    body = _one(live.client, tenant, granularity="month", fromDate=first.isoformat(), toDate=to_date.isoformat())

    months = sorted({(first + dt.timedelta(days=n)).replace(day=1) for n in range(70)})
    assert [point["date"] for point in body["series"]] == [m.isoformat() for m in months]
    taken = {first + dt.timedelta(days=n): 1000 + n for n in offsets}
    in_month = [[count for day, count in sorted(taken.items()) if day.replace(day=1) == month] for month in months]
    expected = [counts[-1] if counts else None for counts in in_month]
    assert [point["followers"] for point in body["series"]] == expected
    if expected[-1] is None:  # the window's last days fall in a month without a snapshot: null, no change
        assert body["series"][-1] == {"date": months[-1].isoformat(), "followers": None, "change": None}
    known = [count for count in expected if count is not None]
    assert [point["change"] for point in body["series"] if point["followers"] is not None] == [None] + [
        b - a for a, b in itertools.pairwise(known)]
    assert (body["currentFollowers"], body["growth"]) == (1066, 66)
    assert body["growthPercent"] == 6.6


def test_growth_percent_is_null_when_the_window_starts_at_zero(live):
    tenant = live.tenant()
    account = connect_account(live.client, tenant, "facebook")
    first = _take_days(live.client, account, {0: 0, 1: 25})
    body = _one(live.client, tenant, fromDate=_day(first, 0), toDate=_day(first, 1))
    assert (body["currentFollowers"], body["growth"], body["growthPercent"]) == (25, 25, None)


def test_the_scheduler_takes_each_connected_accounts_count_once_a_day_by_itself(live):
    tenant = live.tenant()
    account = connect_account(live.client, tenant, "instagram")
    # LinkedIn shares the count only with apps granted member analytics, which this one does not ask for.
    refusing = connect_account(live.client, tenant, "linkedin")
    _followers(live.client, account, 500)
    clock.advance(DAY)  # a new day: the tick job claims it and a worker asks the platform
    today = clock.now().date().isoformat()

    def todays_point():
        point = _one(live.client, tenant, accountId=account["id"], fromDate=today, toDate=today)["series"][0]
        return point["followers"] == 500 and point

    wait_for(todays_point, timeout=10)
    refused = _one(live.client, tenant, accountId=refusing["id"], fromDate=today, toDate=today)
    assert refused["series"] == [{"date": today, "followers": None, "change": None}]
    assert refused["currentFollowers"] is None and refused["growth"] is None

    # Once a day: a later change of the count waits for the next day (or a snapshot asked for).
    _followers(live.client, account, 900)
    clock.advance(3600)
    assert _one(live.client, tenant, accountId=account["id"], fromDate=today, toDate=today)["currentFollowers"] == 500


@pytest.mark.parametrize(("query", "field"), [
    ({"fromDate": "2026-03-10", "toDate": "2026-03-09"}, "fromDate"),
    ({"fromDate": "2025-01-01", "toDate": "2026-01-02"}, "fromDate"),  # 367 days
    ({"fromDate": "2026-02-30"}, "fromDate"),
    ({"toDate": "10/03/2026"}, "toDate"),
    ({"toDate": "2026-03-10T00:00:00Z"}, "toDate"),
    ({"granularity": "year"}, "granularity"),
    ({"platform": "INSTAGRAM"}, "platform"),
    ({"source": "everything"}, "source"),
])
def test_a_bad_query_is_422_naming_the_field(live, query, field):
    tenant = live.tenant()
    answer = _analytics(live.client, tenant, **query)
    assert answer.status_code == 422, answer.text
    error = answer.json()["error"]
    assert error["code"] == "validation_failed"
    assert [detail["field"] for detail in error["details"]] == [field]


def test_a_window_of_exactly_366_days_is_accepted(live):
    tenant = live.tenant()
    connect_account(live.client, tenant, "x")
    body = _one(live.client, tenant, fromDate="2024-01-01", toDate="2024-12-31")  # a leap year
    assert len(body["series"]) == 366


def test_filters_and_tenancy(live):
    tenant, other = live.tenant(), live.tenant()
    ig = connect_account(live.client, tenant, "instagram")
    tt = connect_account(live.client, tenant, "tiktok")
    theirs = connect_account(live.client, other, "instagram")

    listed = _analytics(live.client, tenant).json()["accounts"]
    assert [a["accountId"] for a in listed] == [ig["id"], tt["id"]]
    assert [a["accountId"] for a in _analytics(live.client, tenant, platform="tiktok").json()["accounts"]] == [tt["id"]]
    assert _analytics(live.client, tenant, profileId=tenant["profileId"]).json()["accounts"] == listed
    # Another workspace's account is not found; its profile filters out everything, as on /v1/accounts.
    missing = _analytics(live.client, tenant, accountId=theirs["id"])
    assert missing.status_code == 404 and missing.json()["error"]["code"] == "not_found"
    assert _analytics(live.client, tenant, profileId=other["profileId"]).json()["accounts"] == []
    assert [a["accountId"] for a in _analytics(live.client, other).json()["accounts"]] == [theirs["id"]]

    # A key limited to a second profile sees only that profile's accounts; a read key may read.
    auth = bearer(tenant["apiKey"])
    second = live.client.post("/v1/profiles", headers=auth, json={"name": "Second brand"}).json()
    yt = connect_account(live.client, {**tenant, "profileId": second["id"]}, "youtube")
    limited = live.client.post("/v1/api-keys", headers=auth, json={
        "name": "second only", "scope": "profiles", "profileIds": [second["id"]], "permission": "read"}).json()
    as_limited = {"apiKey": limited["key"]}
    assert [a["accountId"] for a in _analytics(live.client, as_limited).json()["accounts"]] == [yt["id"]]
    assert _analytics(live.client, as_limited, accountId=ig["id"]).status_code == 403
    assert _analytics(live.client, as_limited, profileId=tenant["profileId"]).status_code == 403
    assert live.client.get("/v1/analytics/followers").status_code == 401


def test_switchboard_analytics_snapshot_takes_every_account_now_and_skips_refusals(live):
    tenant = live.tenant()
    account = connect_account(live.client, tenant, "instagram")
    refusing = connect_account(live.client, tenant, "meta_ads")  # an ad account has no followers
    _followers(live.client, account, 4321)
    env = service_env(live.settings)

    ran = subprocess.run(switchboard("analytics", "snapshot", "--json"), env=env, capture_output=True, text=True,
                         timeout=60)
    assert ran.returncode == 0, ran.stderr
    answer = json.loads(ran.stdout)
    assert answer["date"] == clock.now().date().isoformat()
    mine = {s["accountId"]: s for s in answer["snapshots"] if s["accountId"] in (account["id"], refusing["id"])}
    assert (mine[account["id"]]["outcome"], mine[account["id"]]["followers"]) == ("taken", 4321)
    assert mine[refusing["id"]]["outcome"] == "refused"
    assert mine[refusing["id"]]["reason"]
    assert _one(live.client, tenant, accountId=account["id"])["currentFollowers"] == 4321

    _followers(live.client, account, 4400)
    said = subprocess.run(switchboard("analytics", "snapshot"), env=env, capture_output=True, text=True, timeout=60)
    assert said.returncode == 0, said.stderr
    assert f"{account['id']}  instagram  4400 followers" in said.stdout
    assert "skipped" in said.stdout.splitlines()[-1]
    assert _one(live.client, tenant, accountId=account["id"])["currentFollowers"] == 4400  # the same day: updated


def test_an_assistant_reads_follower_analytics_through_mcp(live):
    tenant = live.tenant()
    account = connect_account(live.client, tenant, "youtube")
    first = _take_days(live.client, account, {0: 70, 1: 77})
    with connection():
        email = User.get_by_id(tenant["userId"]).email
    with httpx2.Client(base_url=live.url, timeout=30) as browser:
        browser_sign_in(browser, email, "correct horse")
        _, tokens = hand_made_tokens(browser, workspace_id=tenant["workspaceId"], scope="read")

    async def scenario() -> tuple:
        async with mcp_client(live.url, Authorization=f"Bearer {tokens['access_token']}") as client:
            tools = {tool.name: tool for tool in (await client.list_tools()).tools}
            ok = await client.call_tool("get_follower_analytics", {
                "accountId": account["id"], "fromDate": _day(first, 0), "toDate": _day(first, 1)})
            bad = await client.call_tool("get_follower_analytics", {"granularity": "hour"})
            return tools["get_follower_analytics"], ok, bad

    tool, ok, bad = asyncio.run(scenario())
    assert tool.annotations.read_only_hint is True
    assert ok.is_error is False
    [series] = structured(ok)["accounts"]
    assert series["series"] == [{"date": _day(first, 0), "followers": 70, "change": None},
                                {"date": _day(first, 1), "followers": 77, "change": 7}]
    assert (series["growth"], series["growthPercent"]) == (7, 10.0)
    assert bad.is_error is True
    assert structured(bad)["error"]["code"] == "validation_failed"
    assert structured(bad)["error"]["details"][0]["field"] == "granularity"


def test_an_account_deleted_for_good_takes_its_snapshots_with_it(live):
    tenant = live.tenant()
    account = connect_account(live.client, tenant, "instagram")
    _take_days(live.client, account, {0: 10, 1: 11})
    auth = bearer(tenant["apiKey"])
    assert live.client.post(f"/v1/accounts/{account['id']}/disconnect", headers=auth).status_code == 200
    # A disconnected account keeps its history.
    assert _one(live.client, tenant, accountId=account["id"])["currentFollowers"] == 11
    deleted = live.client.delete(f"/v1/accounts/{account['id']}/permanent", headers=auth)
    assert deleted.status_code == 200, deleted.text
    assert _analytics(live.client, tenant, accountId=account["id"]).status_code == 404
    assert _analytics(live.client, tenant).json()["accounts"] == []


def test_the_dashboard_shows_each_accounts_followers(live):
    tenant = live.tenant()
    account = connect_account(live.client, tenant, "instagram")
    _take_days(live.client, account, {0: 1200, 1: 1234})
    with connection():
        email = User.get_by_id(tenant["userId"]).email
    with httpx2.Client(base_url=live.url, timeout=30) as browser:
        browser_sign_in(browser, email, "correct horse")
        page = browser.get("/dashboard")
    assert page.status_code == 200
    assert re.search(r"Instagram · [^<]+</td>\s*<td>.*?</td>\s*<td>1234</td>", page.text, re.S)
    assert 'aria-label="Follower trend of Instagram · ' in page.text
    assert account["id"] not in page.text  # named, never by its id
