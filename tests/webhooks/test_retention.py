"""The event outbox's retention: events past it go with their deliveries, never one still owed to an endpoint."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta

import pytest

from kit import clock
from service.common import events
from service.webhooks import retention
from storage.db import connection, db
from storage.models import Event, WebhookDelivery
from tasks import retention as retention_jobs
from tests.conftest import bearer
from tests.support.webhook_receiver import wait_for

pytestmark = pytest.mark.shared_service

MONTH = 31 * 86400  # past the default retention of 30 days


def _delivered_test_event(client, tenant, receiver) -> dict:
    """A `webhook.test` event delivered to a new endpoint: its delivery as the log shows it."""
    key = bearer(tenant["apiKey"])
    endpoint = client.post("/v1/webhooks", json={"url": receiver.url}, headers=key).json()
    client.post(f"/v1/webhooks/{endpoint['id']}/test", headers=key)
    return wait_for(lambda: [row for row in client.get(f"/v1/webhooks/{endpoint['id']}/deliveries", headers=key)
                             .json()["data"] if row["status"] == "DELIVERED"])[0] | {"webhookId": endpoint["id"]}


def _still_there(event_id: str) -> tuple[bool, int]:
    with connection():
        return (Event.select().where(Event.id == event_id).exists(),
                WebhookDelivery.select().where(WebhookDelivery.event == event_id).count())


def _forget_all() -> None:
    with connection():
        while retention.forget_old_events():
            pass


def test_an_event_past_its_retention_goes_with_its_deliveries_and_leaves_the_log(client, tenant, receiver):
    done = _delivered_test_event(client, tenant, receiver)
    key = bearer(tenant["apiKey"])
    _forget_all()
    assert _still_there(done["eventId"]) == (True, 1)  # fresh: kept

    clock.advance(MONTH)
    _forget_all()

    assert _still_there(done["eventId"]) == (False, 0)
    log = client.get(f"/v1/webhooks/{done['webhookId']}/deliveries", headers=key)
    assert log.status_code == 200
    assert log.json()["data"] == []
    again = client.post(f"/v1/webhooks/deliveries/{done['id']}/redeliver", headers=key)
    assert again.status_code == 404
    assert again.json()["error"]["code"] == "not_found"


def test_an_event_with_a_delivery_still_to_attempt_is_kept_past_its_retention(client, tenant, receiver):
    waiting = _delivered_test_event(client, tenant, receiver)
    # A delivery whose next attempt is still to come (a receiver down for a while): the row as the
    # retry schedule leaves it, its attempt far enough off that no worker makes it during the test.
    with connection(), db.atomic():
        WebhookDelivery.update(status="RETRYING", next_attempt_at=clock.now() + timedelta(days=400)).where(
            WebhookDelivery.id == waiting["id"]).execute()

    clock.advance(MONTH)
    _forget_all()

    assert _still_there(waiting["eventId"]) == (True, 1)


def test_an_event_not_yet_dispatched_is_kept_past_its_retention(tenant):
    clock.advance(MONTH)
    with connection(), db.atomic() as transaction:
        # Written and not yet handed to the endpoints (the dispatcher runs once this commits), as an
        # event is while the workers are down: seen from the transaction that wrote it, then undone.
        event = events.emit(workspace_id=tenant["workspaceId"], type="account.connected", data={"id": "acc_1"})
        retention.forget_old_events()
        assert Event.select().where(Event.id == event.id, Event.dispatched_at.is_null()).exists()
        transaction.rollback()


def test_a_retention_of_zero_keeps_every_event(client, tenant, receiver, monkeypatch):
    done = _delivered_test_event(client, tenant, receiver)
    monkeypatch.setattr(retention.settings, "_settings", replace(retention.settings(), event_retention_days=0))
    clock.advance(10 * 365 * 86400)
    _forget_all()
    assert _still_there(done["eventId"]) == (True, 1)


def test_the_scheduler_drains_a_backlog_a_batch_a_tick_then_looks_once_a_minute(client, tenant, receiver,
                                                                                 monkeypatch):
    made = [_delivered_test_event(client, tenant, receiver)["eventId"] for _ in range(3)]
    monkeypatch.setattr(retention, "BATCH", 2)
    taken: list[int] = []
    job = retention_jobs.Retention(lambda: taken.append(retention.forget_old_events()) or taken[-1])
    clock.advance(MONTH)
    with connection():
        job()
        while job.behind:  # a whole batch taken: the next tick takes another
            assert len(taken) < 10
            job()
        # The live worker's own job may take some of them at the same time: none is left either way.
        assert not Event.select().where(Event.id.in_(made)).exists()
        assert taken[0] == 2  # the first look found a backlog
        looks = len(taken)
        for _ in range(job.every):
            job()
    assert len(taken) == looks + 1  # then one look in a minute of ticks
