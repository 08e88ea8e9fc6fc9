"""A pace store (Redis on the scale-out setup) that drops every connection or stops answering is a
pause for the messages that wait on it, never `unknown`: `unknown` says a process died during the
platform call, and no call was made."""

from __future__ import annotations

import pytest

from kit import clock, settings
from service.inbox import pacer
from storage.db import connection
from storage.models import Message
from tests.conftest import bearer
from tests.support.live_server import free_port
from tests.support.sandbox import connect_account
from tests.support.webhook_receiver import wait_for


class UnreachablePace(pacer.RedisPacer):
    """A Redis pace store on a port where nothing listens: every reservation fails to connect."""

    def __init__(self) -> None:
        super().__init__(f"redis://127.0.0.1:{free_port()}/0")
        self.tried = 0

    def reserve(self, account_id: str, interval: float, max_wait: float) -> pacer.Slot:
        self.tried += 1
        return super().reserve(account_id, interval, max_wait)


@pytest.fixture
def pace_store_down(monkeypatch: pytest.MonkeyPatch) -> UnreachablePace:
    down = UnreachablePace()
    monkeypatch.setattr(pacer, "_backend", down)
    return down


def _message(message_id: str) -> Message:
    with connection():
        return Message.get_by_id(message_id)


def test_a_message_waits_out_a_pace_store_outage_and_is_sent_once_after_it(client, tenant, pace_store_down):
    bot = connect_account(client, tenant, "telegram")
    client.post("/sandbox/telegram/inbound-message",
                json={"accountId": bot["id"], "from": {"id": "5001", "name": "Ada"}, "text": "hello"}).raise_for_status()
    (conversation,) = client.get("/v1/conversations", headers=bearer(tenant["apiKey"]),
                                 params={"accountId": bot["id"]}).json()["data"]
    made = client.post(f"/v1/conversations/{conversation['id']}/messages", json={"text": "through the outage"},
                       headers=bearer(tenant["apiKey"]))
    assert made.status_code == 202, made.text  # taken, to be sent when it can be
    assert made.json()["status"] == "pending"
    message_id = made.json()["id"]
    # Tried, and tried again: the message went back each time (each try takes the Redis client's own
    # retries, seconds apart).
    wait_for(lambda: pace_store_down.tried >= 2, timeout=60)

    clock.advance(settings.current().send_lease_seconds + 5)  # long past the lease of any claim
    tried = pace_store_down.tried
    wait_for(lambda: pace_store_down.tried > tried, timeout=60)  # the sweeps since have handed it out again
    assert _message(message_id).status != "unknown"

    pacer._backend = pacer.StoragePacer()  # the store is back
    wait_for(lambda: _message(message_id).status == "sent")
    sent = [row for row in client.get("/sandbox/telegram/sent", params={"accountId": bot["id"]}).json()["data"]
            if row["kind"] == "dm"]
    assert [row["text"] for row in sent] == ["through the outage"]
