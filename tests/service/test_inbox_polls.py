"""The inbox poll as a kind of the engine: however many workers sweep and take tasks at once, an
account is read once per interval (the chore is armed when its own time has come, and claimed by
one worker)."""

from __future__ import annotations

from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

import httpx2
import pytest

from kit import clock
from kit.settings import Settings
from platforms.youtube.rules import POLL_UNITS
from service.engine import core as engine
from service.inbox import inbound, polling
from service.inbox import work as inbox_work
from storage.db import connection, db
from storage.models import InboundRecord, InboxPoll
from tests.conftest import bearer
from tests.support.processes import api_without_worker
from tests.support.sandbox import connect_account


@pytest.fixture
def api_only(service: Settings, monkeypatch: pytest.MonkeyPatch) -> Iterator[httpx2.Client]:
    """The API and the emulator, no worker; nothing is enqueued: the test drives each step."""
    with api_without_worker(service) as http:
        monkeypatch.setattr(engine, "_nudger", None)
        yield http


def _sweep() -> list[str]:
    with connection(), db.atomic():
        return engine.sweep(inbox_work.POLL_WORK).nudged


def _units(account_id: str) -> int:
    with connection():
        row = InboxPoll.get_or_none(InboxPoll.account == account_id)
        return row.quota_units if row is not None else 0


def test_an_account_is_polled_once_an_interval_whatever_the_number_of_workers(api_only, tenant):
    channel = connect_account(api_only, tenant, "youtube")
    chore = f"inbox_poll_{channel['id']}"
    assert _sweep() == []  # connected just now: first read an interval later
    clock.advance(polling.interval().total_seconds() + 1)

    with ThreadPoolExecutor(3) as pool:  # three workers' ticks at once
        swept = [ids for ids in pool.map(lambda _: _sweep(), range(3))]
    assert sorted(chore_id for ids in swept for chore_id in ids) == [chore]

    with ThreadPoolExecutor(2) as pool:  # the task twice (a duplicate nudge): one worker reads
        outcomes = list(pool.map(polling.run, [chore, chore]))
    assert sorted(outcomes, key=str) == [None, "read"]
    assert _units(channel["id"]) == POLL_UNITS == 1  # one page read: 1 unit (Google's quota table)

    assert _sweep() == []  # idle until its next interval
    assert polling.run(chore) is None
    # Its next poll is at its own instant of the interval, at least half an interval on.
    clock.advance(polling.interval().total_seconds() * 1.5 + 1)
    assert _sweep() == [chore]
    assert polling.run(chore) == "read"
    assert _units(channel["id"]) == 2 * POLL_UNITS


def test_accounts_polled_together_are_next_polled_spread_over_the_interval(service):
    """10,000 accounts armed in the same second (a first start) poll again each at its own instant of
    the interval, not all in one second of it: about as many in every tenth of the interval."""
    moment = clock.now()
    seconds = polling.interval().total_seconds()
    dues = [polling.next_poll(f"acc_{n:026d}", moment) for n in range(10_000)]
    offsets = [(due - moment).total_seconds() for due in dues]
    assert min(offsets) >= seconds / 2 and max(offsets) < seconds * 1.5  # about an interval on
    tenths = [0] * 10
    for due in dues:
        tenths[int((due - polling._EPOCH).total_seconds() % seconds / seconds * 10)] += 1
    assert min(tenths) > 800 and max(tenths) < 1200  # 1,000 each, give or take
    # An account keeps its instant: its polls an interval apart.
    again = polling.next_poll("acc_00000000000000000000000001", dues[1])
    assert (again - dues[1]).total_seconds() == pytest.approx(seconds)


def _comments(http: httpx2.Client, tenant: dict[str, str]) -> list[str]:
    key = bearer(tenant["apiKey"])
    threads = http.get("/v1/conversations", headers=key, params={"platform": "YOUTUBE"}).json()["data"]
    return [m["text"] for c in threads for m in http.get(f"/v1/conversations/{c['id']}/messages", headers=key).json()["data"]]


def _records(account_id: str) -> int:
    with connection():
        return InboundRecord.select().where(InboundRecord.account == account_id).count()


def test_inbound_records_go_after_a_month_and_a_comment_read_again_later_shows_once(api_only, tenant):
    """The newest comment of a quiet channel is read again by every poll (the cursor's own second). Its
    inbound record, the key that stores it once, goes after `inbound.RETENTION`; a poll after that still
    takes it for the old comment it is."""
    channel = connect_account(api_only, tenant, "youtube")
    chore = f"inbox_poll_{channel['id']}"
    api_only.post("/sandbox/youtube/comment", json={
        "accountId": channel["id"], "mediaId": "v1", "from": {"id": "UCfan", "handle": "@fan"},
        "text": "First!"}).raise_for_status()
    clock.advance(polling.interval().total_seconds() + 1)
    assert _sweep() == [chore]
    assert polling.run(chore) == "read"
    assert (_comments(api_only, tenant), _records(channel["id"])) == (["First!"], 1)

    clock.advance(inbound.RETENTION.total_seconds() - 86400)  # a day short of the retention: kept
    with connection():
        assert inbound.forget_old() == 0
    clock.advance(86400 + 60)
    with connection():
        assert inbound.forget_old() == 1
    assert _records(channel["id"]) == 0

    assert _sweep() == [chore]
    assert polling.run(chore) == "read"  # the same comment on the page, at the cursor
    assert (_comments(api_only, tenant), _records(channel["id"])) == (["First!"], 0)
