"""Webhook work for the queue: the dispatcher and the sweeper run every tick, one task per delivery attempt.

The rows in `webhook_delivery` are the truth; a task only says "look at this row now". A task lost
with its consumer, enqueued twice, or run after the row was done does no harm: `deliver` claims the
row with a conditional UPDATE and does nothing when it cannot.
"""

from __future__ import annotations

from service import webhooks
from storage.db import db
from tasks.queue import huey
from tasks.scheduler import every_tick

BATCH = 500


@huey.task()
def deliver(delivery_id: str) -> None:
    webhooks.deliver(delivery_id)


def enqueue(delivery_ids: list[str]) -> None:
    for delivery_id in delivery_ids:
        deliver(delivery_id)


webhooks.set_nudger(enqueue)


@every_tick
def dispatch_events() -> None:
    """Fan new outbox events out to their endpoints' delivery rows, in batches until none is left."""
    while True:
        with db.atomic():
            done = webhooks.dispatch_pending(limit=BATCH)
        if done.events < BATCH:
            return


@every_tick
def sweep_deliveries() -> None:
    """Re-enqueue deliveries whose retry is due, whose task was lost, or whose worker died mid-attempt."""
    while True:
        with db.atomic():
            found = webhooks.sweep_due(limit=BATCH)
        if len(found) < BATCH:
            return
