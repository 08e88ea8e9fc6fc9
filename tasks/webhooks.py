"""Webhook work for the queue: the dispatcher that turns outbox events into delivery rows.

Deliveries themselves are rows of the work engine (`tasks/engine.py` runs them). The dispatcher
runs every tick, and at once after a transaction that emitted events commits (`events_committed`).
"""

from __future__ import annotations

import time

from service.webhooks import ops as webhooks
from storage.db import connection, db
from tasks.queue import huey

BATCH = 500
BATCHES_PER_TICK = 8  # bounded: a burst of events must not starve the tick's other jobs

NUDGE_INTERVAL = 0.05  # seconds; at most one immediate dispatch request per process in this interval
_last_nudge = 0.0


@huey.task()
def dispatch_now() -> None:
    with connection():
        dispatch_events()


def events_committed() -> None:
    global _last_nudge
    moment = time.monotonic()
    if moment - _last_nudge >= NUDGE_INTERVAL:
        _last_nudge = moment
        dispatch_now()


def dispatch_events() -> None:
    """Fan new outbox events out to their endpoints' delivery rows, a few batches at most per call."""
    for _ in range(BATCHES_PER_TICK):
        with db.atomic():
            done = webhooks.dispatch_pending(limit=BATCH)
        if done.events < BATCH:
            return
