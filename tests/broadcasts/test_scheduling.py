"""The one scheduler starts a scheduled broadcast on the first tick after its time, read in its time
zone across DST changes; the service's clock is moved forward (`clock.advance`) instead of waiting."""

from __future__ import annotations

import datetime as dt
import time

from kit import clock
from tests.conftest import bearer
from tests.support.sandbox import connect_account
from tests.support.webhook_receiver import wait_for

NEW_YORK = "America/New_York"


def _bot(live, tenant):
    bot = connect_account(live.client, tenant, "telegram")
    wrote = live.client.post("/sandbox/telegram/inbound-message",
                             json={"accountId": bot["id"], "from": {"id": "8101", "name": "Eli"}, "text": "hi"})
    assert wrote.status_code == 200
    return bot


def _create(live, tenant, bot, **schedule):
    answer = live.client.post("/v1/broadcasts", headers=bearer(tenant["apiKey"]),
                              json={"accountId": bot["id"], "name": "Spring", "text": "Clocks moved", **schedule})
    assert answer.status_code == 201, answer.text
    return answer.json()


def _status(live, tenant, broadcast_id):
    return live.client.get(f"/v1/broadcasts/{broadcast_id}", headers=bearer(tenant["apiKey"])).json()


def test_wall_times_in_a_dst_gap_move_forward_and_in_an_overlap_take_the_first(live):
    tenant = live.tenant()
    bot = _bot(live, tenant)
    gap = _create(live, tenant, bot, scheduledFor="2027-03-14T02:30:00", timezone=NEW_YORK)
    overlap = _create(live, tenant, bot, scheduledFor="2027-11-07T01:30:00", timezone=NEW_YORK)
    offset = _create(live, tenant, bot, scheduledFor="2027-03-14T09:00:00+01:00", timezone=NEW_YORK)
    assert gap["scheduledFor"] == "2027-03-14T07:30:00Z"  # 03:30 EDT
    assert overlap["scheduledFor"] == "2027-11-07T05:30:00Z"  # the first 01:30, still EDT
    assert offset["scheduledFor"] == "2027-03-14T08:00:00Z"  # an offset wins over the zone
    assert gap["timezone"] == NEW_YORK and gap["status"] == "scheduled"


def test_a_broadcast_scheduled_across_a_dst_change_starts_at_the_right_instant(live):
    tenant = live.tenant()
    bot = _bot(live, tenant)
    # Created in November (EST, UTC-5) for 9:00 in March, after clocks spring forward (EDT, UTC-4).
    created = _create(live, tenant, bot, scheduledFor="2027-03-14T09:00:00", timezone=NEW_YORK)
    due = dt.datetime(2027, 3, 14, 13, 0, 0)
    assert created["scheduledFor"] == "2027-03-14T13:00:00Z"

    clock.advance((due - clock.now()).total_seconds() - 2)
    time.sleep(0.6)  # three scheduler ticks two seconds before its time: nothing may start
    assert _status(live, tenant, created["id"])["status"] == "scheduled"

    clock.advance(2)
    started_at = time.monotonic()
    wait_for(lambda: _status(live, tenant, created["id"])["status"] != "scheduled", timeout=5, interval=0.02)
    assert time.monotonic() - started_at <= live.settings.scheduler_tick_seconds + 1
    done = wait_for(lambda: (b := _status(live, tenant, created["id"]))["status"] == "completed" and b)
    assert "2027-03-14T13:00:00Z" <= done["startedAt"] <= "2027-03-14T13:00:02Z"
    sent = live.client.get("/sandbox/telegram/sent", params={"accountId": bot["id"]}).json()["data"]
    assert [row["text"] for row in sent] == ["Clocks moved"]


def test_send_now_starts_within_a_tick(live):
    tenant = live.tenant()
    bot = _bot(live, tenant)
    started_at = time.monotonic()
    created = _create(live, tenant, bot, sendNow=True)
    wait_for(lambda: live.client.get("/sandbox/telegram/sent", params={"accountId": bot["id"]}).json()["data"],
             timeout=5, interval=0.02)
    assert time.monotonic() - started_at <= live.settings.scheduler_tick_seconds + 1
    assert created["sendNow"] is True and created["scheduledFor"] is None


def test_a_broadcast_whose_account_was_disconnected_before_its_time_fails_and_says_so(live):
    tenant = live.tenant()
    bot = _bot(live, tenant)
    soon = (dt.datetime.now(dt.UTC) + dt.timedelta(minutes=5)).strftime("%Y-%m-%dT%H:%M:%SZ")
    created = _create(live, tenant, bot, scheduledFor=soon)
    assert live.client.post(f"/v1/accounts/{bot['id']}/disconnect", headers=bearer(tenant["apiKey"])).status_code == 200
    clock.advance(5 * 60 + 1)
    failed = wait_for(lambda: (b := _status(live, tenant, created["id"]))["status"] == "failed" and b, timeout=5)
    assert "disconnected" in failed["error"] and failed["completedAt"] is not None
    assert live.client.get("/sandbox/telegram/sent", params={"accountId": bot["id"]}).json()["data"] == []
