"""An account's chores as engine work across processes: a worker killed (SIGKILL) while it asks the
platform for the day's follower count loses nothing; another worker takes the count once the dead
one's lease runs out."""

from __future__ import annotations

import datetime as dt
import signal
from collections.abc import Iterator

import httpx2
import pytest

from kit import clock
from kit.settings import Settings
from storage.db import connection, db
from storage.models import Account, AccountChore, FollowerSnapshot
from switchboard.app import create_app
from tests.support.live_server import live_server
from tests.support.processes import worker_processes
from tests.support.sandbox import connect_account
from tests.support.webhook_receiver import wait_for

LEASE = "3"


@pytest.fixture
def api_only(service: Settings) -> Iterator[httpx2.Client]:
    """The API (and the emulator) with no worker: the chores are left to the test's processes."""
    port = int(service.base_url.rsplit(":", 1)[1])
    with live_server(create_app(service, worker=False), port=port) as url, \
            httpx2.Client(base_url=url, timeout=30) as http:
        yield http


def _chore(chore_id: str) -> AccountChore | None:
    with connection():
        return AccountChore.get_or_none(AccountChore.id == chore_id)


def _snapshots(account_id: str) -> list[tuple[int | None, str]]:
    with connection():
        return [(row.followers, row.state) for row in FollowerSnapshot.select().where(
            FollowerSnapshot.account == account_id)]


def test_a_worker_killed_while_taking_a_snapshot_leaves_it_to_the_next(api_only, tenant, settings, tmp_path):
    page = connect_account(api_only, tenant, "facebook")
    with connection(), db.atomic():  # connected long enough ago to be counted today
        Account.update(connected_at=clock.now() - dt.timedelta(minutes=5)).where(Account.id == page["id"]).execute()
    api_only.post("/sandbox/facebook/latency", json={"milliseconds": 4000}).raise_for_status()
    chore_id = f"snapshot_{page['id']}"

    with worker_processes(settings, 1, tmp_path, SWITCHBOARD_SEND_LEASE_SECONDS=LEASE) as [first]:
        # Claimed: the count is in the platform's hands.
        wait_for(lambda: (row := _chore(chore_id)) is not None and row.claim_token is not None, timeout=30)
        first.send_signal(signal.SIGKILL)
        first.wait(timeout=10)
    held = _chore(chore_id)
    assert held is not None and (held.status, held.attempts) == ("due", 1)
    assert _snapshots(page["id"]) == []

    api_only.post("/sandbox/facebook/latency", json={"milliseconds": 0}).raise_for_status()
    with worker_processes(settings, 1, tmp_path, SWITCHBOARD_SEND_LEASE_SECONDS=LEASE):
        taken = wait_for(lambda: (rows := _snapshots(page["id"])) and rows, timeout=60)
        settled = wait_for(lambda: (row := _chore(chore_id)) is not None and row.status == "idle" and row, timeout=30)
    assert [state for _, state in taken] == ["taken"]
    assert taken[0][0] is not None
    assert (settled.attempts, settled.claim_token) == (2, None)  # the dead worker's attempt, then one more
