"""An account's past follower counts, read once after it is connected, over real HTTP to the
sandbox: 90 days for every sandbox account that has followers; Instagram's insights, a LinkedIn
organization's follower statistics and YouTube's subscriber count read from the platform (the
emulator's own daily gains show through exactly where the platform gave them); and, outside the
sandbox, only what the platform gives."""

from __future__ import annotations

import dataclasses
import datetime as dt
import itertools
from typing import Any

import pytest

from kit import clock
from platforms.emulator_kit.state import Account as EmulatedAccount
from platforms.emulator_kit.state import followers_gained
from service.analytics import history
from storage.db import connection
from storage.models import Account
from tests.conftest import bearer
from tests.support.sandbox import connect_account
from tests.support.webhook_receiver import wait_for

pytestmark = pytest.mark.shared_service


@pytest.fixture(scope="module")
def live_overrides() -> dict[str, Any]:
    return {"follower_backfill": True}


def _series(client: Any, tenant: dict[str, str], account_id: str) -> list[dict[str, Any]]:
    today = clock.now().date()
    answer = client.get("/v1/analytics/followers", headers=bearer(tenant["apiKey"]), params={
        "accountId": account_id, "fromDate": (today - dt.timedelta(days=89)).isoformat(), "toDate": today.isoformat()})
    assert answer.status_code == 200, answer.text
    (found,) = answer.json()["accounts"]
    return list(found["series"])


def _counted(client: Any, tenant: dict[str, str], account_id: str) -> list[int]:
    return [point["followers"] for point in _series(client, tenant, account_id) if point["followers"] is not None]


def _gains(platform: str, platform_id: str, days: range) -> list[int]:
    """What the emulator says the account gained on each of those days back from today (oldest first)."""
    emulated = EmulatedAccount(platform, platform_id, "", "")
    today = clock.now().date()
    return [followers_gained(emulated, today - dt.timedelta(days=back)) for back in days]


def test_every_sandbox_account_comes_with_90_days_and_instagram_backfills_its_insights(client, tenant):
    x = connect_account(client, tenant, "x")
    instagram = connect_account(client, tenant, "instagram")
    client.post("/sandbox/instagram/followers", json={"accountId": instagram["id"], "followers": 2500})
    assert _counted(client, tenant, instagram["id"]) == []  # nothing before the history is read
    clock.advance(61)  # a minute after connecting
    # The history chores are armed by a read of every account made at most once a minute (by the
    # service's clock) while it finds nothing: within a minute of real time whatever came before.
    wait_for(lambda: len(_counted(client, tenant, x["id"])) == 90 and len(_counted(client, tenant, instagram["id"])) == 90,
             timeout=90)

    line = _counted(client, tenant, x["id"])
    assert line == sorted(line) and line[0] > 0  # a line that grows, not zeros
    counts = _counted(client, tenant, instagram["id"])
    assert counts[-1] == 2500
    # The 30 days Instagram's insights give: each day's change is what the emulator says was gained.
    changes = [later - earlier for earlier, later in itertools.pairwise(counts[-30:])]
    assert changes == [*_gains("instagram", instagram["platformAccountId"], range(28, 0, -1)), 0]


def test_a_linkedin_organization_backfills_90_days_of_its_follower_statistics(client, tenant):
    h = bearer(tenant["apiKey"])
    start = client.get("/v1/connect/linkedin", headers=h,
                       params={"profileId": tenant["profileId"], "product": "organizations"})
    consent = client.get(start.json()["authUrl"])
    account = client.get(consent.headers["location"]).json()  # the organization it administers
    assert account["displayName"].startswith("Sandbox Organization"), account
    client.post("/sandbox/linkedin/followers", json={"accountId": account["id"], "followers": 900})
    clock.advance(61)
    wait_for(lambda: len(_counted(client, tenant, account["id"])) == 90, timeout=90)

    counts = _counted(client, tenant, account["id"])
    assert counts[-1] == 900
    changes = [later - earlier for earlier, later in itertools.pairwise(counts)]
    assert changes == [*_gains("linkedin", account["platformAccountId"], range(88, 0, -1)), 0]


def test_youtubes_count_on_the_day_of_connection_is_the_lines_last_point(client, tenant):
    channel = connect_account(client, tenant, "youtube")
    client.post("/sandbox/youtube/followers", json={"accountId": channel["id"], "followers": 321})
    clock.advance(61)
    wait_for(lambda: len(_counted(client, tenant, channel["id"])) == 90, timeout=90)
    assert _counted(client, tenant, channel["id"])[-1] == 321


def test_outside_the_sandbox_only_what_the_platform_gives_is_kept(client, tenant, live):
    instagram = connect_account(client, tenant, "instagram")
    x = connect_account(client, tenant, "x")
    client.post("/sandbox/instagram/followers", json={"accountId": instagram["id"], "followers": 700})
    history.settings.configure(dataclasses.replace(live.settings, sandbox=False))
    try:
        with connection():
            rows = {row.id: row for row in Account.select().where(Account.id.in_([instagram["id"], x["id"]]))}
        given = history.read(rows[instagram["id"]])
        assert history.read(rows[x["id"]]) == []  # X gives no past counts
    finally:
        history.settings.configure(live.settings)
    today = clock.now().date()
    assert [p.day for p in given] == [today - dt.timedelta(days=back) for back in range(29, -1, -1)]
    assert given[-1].followers == 700
    assert history.write(instagram["id"], given) == 30
    assert history.write(instagram["id"], given) == 0  # a day that has a count keeps it
    assert len(_counted(client, tenant, instagram["id"])) == 30
