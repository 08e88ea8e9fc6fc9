"""Webhook work for the queue: the dispatcher and the sweeper run every tick, one task per delivery attempt.

The rows in `webhook_delivery` are the truth; a task only says "look at this row now". A task lost
with its consumer, enqueued twice, or run after the row was done does no harm: `deliver` claims the
row with a conditional UPDATE and does nothing when it cannot.
"""

from __future__ import annotations

import time

from service import events, webhooks
from storage.db import connection, db
from tasks.queue import huey
from tasks.scheduler import every_tick

BATCH = 500


# Rows are handed out in small groups: a queue round trip per row cost as much CPU as the row's
# HTTP call. Groups stay small and spread (at most MAX_GROUP rows, at least SPREAD tasks when there
# are enough rows) so a few deliveries still go out in parallel and one slow endpoint holds few.
MAX_GROUP = 10
SPREAD = 16


@huey.task()
def deliver(delivery_ids: list[str]) -> None:
    for delivery_id in delivery_ids:
        webhooks.deliver(delivery_id)


def enqueue(delivery_ids: list[str]) -> None:
    size = max(1, min(MAX_GROUP, len(delivery_ids) // SPREAD))
    for start in range(0, len(delivery_ids), size):
        deliver(delivery_ids[start : start + size])


webhooks.set_nudger(enqueue)

NUDGE_INTERVAL = 0.05  # seconds; at most one immediate dispatch request per process in this interval
_last_nudge = 0.0


@huey.task()
def dispatch_now() -> None:
    with connection():
        dispatch_events()


def _events_committed() -> None:
    global _last_nudge
    moment = time.monotonic()
    if moment - _last_nudge >= NUDGE_INTERVAL:
        _last_nudge = moment
        dispatch_now()


events.on_committed(_events_committed)


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
