"""Inbox polls across processes: a worker killed (SIGKILL) while its poll waits on the platform
leaves nothing half-done (the next worker reads the same comment and stores it once), and a worker
that stops and another that starts later read nothing twice and miss nothing (the cursor is kept)."""

from __future__ import annotations

import signal
from collections.abc import Iterator

import httpx2
import pytest

from kit.settings import Settings
from storage.db import connection
from storage.models import AccountChore, InboundRecord, InboxPoll
from tests.conftest import bearer
from tests.support.processes import api_without_worker, worker_processes
from tests.support.sandbox import connect_account
from tests.support.webhook_receiver import wait_for

FAST = {"SWITCHBOARD_SEND_LEASE_SECONDS": "3", "SWITCHBOARD_INBOX_POLL_SECONDS": "1"}


@pytest.fixture
def api_only(service: Settings) -> Iterator[httpx2.Client]:
    """The API (and the emulator) with no worker: the polls are left to the test's processes."""
    with api_without_worker(service) as http:
        yield http


def _chore(account_id: str) -> AccountChore | None:
    with connection():
        return AccountChore.get_or_none(AccountChore.id == f"inbox_poll_{account_id}")


def _poll(account_id: str) -> InboxPoll | None:
    with connection():
        return InboxPoll.get_or_none(InboxPoll.account == account_id)


def _stored(account_id: str) -> int:
    with connection():
        return InboundRecord.select().where(InboundRecord.account == account_id).count()


def _texts(http: httpx2.Client, tenant: dict[str, str], platform: str) -> list[str]:
    key = bearer(tenant["apiKey"])
    conversations = http.get("/v1/conversations", headers=key, params={"platform": platform}).json()["data"]
    return sorted(m["text"] for c in conversations
                  for m in http.get(f"/v1/conversations/{c['id']}/messages", headers=key).json()["data"])


def _polls_after(account_id: str, count: int) -> None:
    """Wait until `count` more polls of the account have committed."""
    for _ in range(count):
        before = (_poll(account_id) or InboxPoll()).polled_at
        wait_for(lambda: (row := _poll(account_id)) is not None and row.polled_at != before, timeout=30)


def test_a_worker_killed_mid_poll_repeats_nothing_and_loses_nothing(api_only, tenant, settings, tmp_path):
    channel = connect_account(api_only, tenant, "youtube")
    api_only.post("/sandbox/youtube/comment", json={
        "accountId": channel["id"], "mediaId": "v1", "from": {"id": "UCfan", "handle": "@fan"},
        "text": "First!"}).raise_for_status()
    api_only.post("/sandbox/youtube/latency", json={"milliseconds": 4000}).raise_for_status()

    with worker_processes(settings, 1, tmp_path, **FAST) as [first]:
        # Claimed: the read is in the platform's hands, its answer not yet committed.
        wait_for(lambda: (row := _chore(channel["id"])) is not None and row.claim_token is not None, timeout=30)
        first.send_signal(signal.SIGKILL)
        first.wait(timeout=10)
    assert _texts(api_only, tenant, "YOUTUBE") == []
    assert (_poll(channel["id"]) or InboxPoll()).cursor is None

    api_only.post("/sandbox/youtube/latency", json={"milliseconds": 0}).raise_for_status()
    with worker_processes(settings, 1, tmp_path, **FAST):
        wait_for(lambda: _texts(api_only, tenant, "YOUTUBE") == ["First!"], timeout=60)
        _polls_after(channel["id"], 2)
    assert _texts(api_only, tenant, "YOUTUBE") == ["First!"]
    assert _stored(channel["id"]) == 1
    assert (_poll(channel["id"]) or InboxPoll()).cursor is not None


def test_polls_after_a_restart_read_nothing_twice_and_miss_nothing(api_only, tenant, settings, tmp_path):
    x = connect_account(api_only, tenant, "x")
    # Polled: as an X app without Account Activity (connecting subscribed it).
    api_only.post("/sandbox/x/account-activity", json={"accountId": x["id"], "subscribed": False}).raise_for_status()
    channel = connect_account(api_only, tenant, "youtube")

    def dm(text: str) -> None:
        api_only.post("/sandbox/x/inbound-message", json={
            "accountId": x["id"], "from": {"id": "777", "handle": "kim"}, "text": text}).raise_for_status()

    def comment(text: str) -> None:
        api_only.post("/sandbox/youtube/comment", json={
            "accountId": channel["id"], "mediaId": "v2", "from": {"id": "UCkim", "handle": "@kim"},
            "text": text}).raise_for_status()

    dm("one")
    comment("uno")
    with worker_processes(settings, 1, tmp_path, **FAST):
        wait_for(lambda: _texts(api_only, tenant, "X") == ["one"], timeout=60)
        wait_for(lambda: _texts(api_only, tenant, "YOUTUBE") == ["uno"], timeout=60)
    cursors = ((_poll(x["id"]) or InboxPoll()).cursor, (_poll(channel["id"]) or InboxPoll()).cursor)
    assert None not in cursors

    dm("two")  # while no worker runs
    comment("dos")
    with worker_processes(settings, 1, tmp_path, **FAST):
        wait_for(lambda: _texts(api_only, tenant, "X") == ["one", "two"], timeout=60)
        wait_for(lambda: _texts(api_only, tenant, "YOUTUBE") == ["dos", "uno"], timeout=60)
        _polls_after(x["id"], 2)
        _polls_after(channel["id"], 2)
    assert _texts(api_only, tenant, "X") == ["one", "two"]
    assert _texts(api_only, tenant, "YOUTUBE") == ["dos", "uno"]
    assert (_stored(x["id"]), _stored(channel["id"])) == (2, 2)
