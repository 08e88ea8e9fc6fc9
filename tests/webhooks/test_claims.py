"""The outbox's claims under concurrency: several workers never dispatch an event or take a delivery twice."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta

from kit import clock
from service.common import events
from service.engine import core as engine
from service.identity.auth import Actor
from service.webhooks import delivery, work
from service.webhooks import ops as webhooks
from storage.db import connection, db
from storage.models import WebhookDelivery


def _actor(tenant):
    return Actor(workspace_id=tenant["workspaceId"], permission="read-write", profile_ids=None,
                 credential_id="test")


def _endpoints(tenant, count):
    with connection(), db.atomic():
        return [webhooks.create(actor=_actor(tenant), url=f"https://localhost:9/{n}") for n in range(count)]


def _emit(tenant, count):
    with connection(), db.atomic():
        return [events.emit(workspace_id=tenant["workspaceId"], type="message.received", data={"n": n}).id
                for n in range(count)]


def _in_threads(fn, threads=8):
    barrier = threading.Barrier(threads)

    def run(_):
        barrier.wait()
        with connection():
            return fn()

    with ThreadPoolExecutor(threads) as pool:
        return list(pool.map(run, range(threads)))


def test_concurrent_dispatchers_write_one_delivery_per_event_and_endpoint(service, tenant, monkeypatch):
    monkeypatch.setattr(engine, "_nudger", None)  # nothing sends: this is about rows only
    endpoints = _endpoints(tenant, 2)
    emitted = _emit(tenant, 300)
    # Many small batches interleave between threads.
    _in_threads(lambda: engine.run_batches(work.DISPATCH_WORK.name, limit=25))

    with connection():
        pairs = [(row.event_id, row.endpoint_id) for row in WebhookDelivery.select()]
    assert len(pairs) == 600
    assert set(pairs) == {(event_id, endpoint.id) for event_id in emitted for endpoint in endpoints}


def test_only_one_of_many_workers_claims_a_delivery(service, tenant, monkeypatch):
    monkeypatch.setattr(engine, "_nudger", None)
    _endpoints(tenant, 1)
    _emit(tenant, 1)
    with connection(), db.atomic():
        delivery_id = work.dispatch_pending().deliveries[0]

    def try_claim():
        with db.atomic():
            return work.claim(delivery_id)

    claims = [found for found in _in_threads(try_claim) if found is not None]
    assert len(claims) == 1
    assert claims[0].attempts == 1


def test_the_sweeper_hands_out_expired_claims_and_leaves_live_ones(service, tenant, monkeypatch):
    monkeypatch.setattr(engine, "_nudger", None)
    _endpoints(tenant, 1)
    _emit(tenant, 2)
    with connection(), db.atomic():
        live_id, dead_id = work.dispatch_pending().deliveries
        work.claim(live_id)
        work.claim(dead_id)
        # The worker holding this one died: its lease ran out.
        WebhookDelivery.update(claimed_until=clock.now() - timedelta(seconds=1)).where(
            WebhookDelivery.id == dead_id).execute()
    with connection(), db.atomic():
        swept = work.sweep_due()
    with connection(), db.atomic():
        swept_again = work.sweep_due()
    assert swept == [dead_id]
    assert swept_again == []  # nudged once; not again while its task waits in the queue


def test_an_outcome_from_a_worker_that_lost_its_lease_is_ignored(service, tenant, monkeypatch):
    monkeypatch.setattr(engine, "_nudger", None)
    _endpoints(tenant, 1)
    _emit(tenant, 1)
    with connection(), db.atomic():
        delivery_id = work.dispatch_pending().deliveries[0]
        slow = work.claim(delivery_id)
        WebhookDelivery.update(claimed_until=clock.now() - timedelta(seconds=1)).where(
            WebhookDelivery.id == delivery_id).execute()
        fresh = work.claim(delivery_id)
    with connection(), db.atomic():
        ignored = work.record_outcome(slow, delivery.Outcome(False, 500, "HTTP 500."))
        kept = work.record_outcome(fresh, delivery.Outcome(True, 200))
    assert ignored is None
    assert kept == "DELIVERED"
    with connection():
        row = WebhookDelivery.get_by_id(delivery_id)
    assert (row.status, row.attempts, row.response_status) == ("DELIVERED", 2, 200)


def test_a_group_records_each_outcome_and_one_rows_fault_leaves_the_rest(service, tenant, receiver, monkeypatch):
    # One task's group: each attempt's outcome is written with the next claim, and a row whose attempt
    # breaks stays claimed (handed out again when its lease expires) while the rest go on.
    monkeypatch.setattr(engine, "_nudger", None)
    with connection(), db.atomic():
        webhooks.create(actor=_actor(tenant), url=receiver.url + "/hook")
    _emit(tenant, 5)
    with connection(), db.atomic():
        ids = work.dispatch_pending().deliveries
    broken = ids[2]
    attempt = work._attempt_loaded

    def breaks_once(found, loaded):
        if found.id == broken:
            raise RuntimeError("a fault of our own")
        return attempt(found, loaded)

    monkeypatch.setattr(work, "_attempt_loaded", breaks_once)
    with connection():
        work.deliver_group(ids)
        rows = {row.id: row for row in WebhookDelivery.select()}
    assert sorted(hit.headers["x-service-delivery"] for hit in receiver.snapshot()) == sorted(set(ids) - {broken})
    assert {row.id: (row.status, row.attempts) for row in rows.values() if row.id != broken} == {
        delivery_id: ("DELIVERED", 1) for delivery_id in ids if delivery_id != broken}
    assert (rows[broken].status, rows[broken].claim_token is not None) == ("QUEUED", True)

    monkeypatch.setattr(work, "_attempt_loaded", attempt)
    clock.advance(work.DELIVERY_WORK.lease() + 1)
    with connection(), db.atomic():
        assert work.sweep_due() == [broken]
    with connection():
        work.deliver_group([broken])
        assert (WebhookDelivery.get_by_id(broken).status, WebhookDelivery.get_by_id(broken).attempts) == ("DELIVERED", 2)
    assert len(receiver.snapshot()) == 5
