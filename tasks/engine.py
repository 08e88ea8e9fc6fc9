"""The work engine's side of the queue: one task that runs rows, one that runs a batch kind, and
the sweeper's tick job.

A task carries a kind and a few row ids; it only says "look at these rows now". A task lost with
its consumer, enqueued twice, or run after its rows were done does no harm: each row is claimed
with a conditional UPDATE (service/engine/core.py) and the sweeper re-enqueues what is due. A batch
kind's task takes whatever is pending when it runs; a lost one leaves it to the next tick.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

from service.engine import core as engine
from storage.db import connection
from tasks.queue import huey

log = logging.getLogger("switchboard.engine")

# Rows are handed out in small groups: a queue round trip per row cost as much CPU as the row's
# work itself. Groups stay small and spread (at most MAX_GROUP rows, at least SPREAD tasks when there
# are enough rows) so a few rows still run in parallel and one slow platform holds few.
MAX_GROUP = 10
SPREAD = 16


@huey.task()
def run_work(kind_name: str, item_ids: list[str]) -> None:
    with connection():
        run_group = engine.runs_groups(kind_name)
        if run_group is not None:
            run_group(item_ids)
            return
        for item_id in item_ids:
            try:
                engine.run_one(kind_name, item_id)
            except Exception:  # one row's fault must not drop the rest of the group
                log.exception("%s %s failed; the sweeper will hand it out again", kind_name, item_id)


def enqueue(kind_name: str, item_ids: list[str]) -> None:
    size = max(1, min(MAX_GROUP, len(item_ids) // SPREAD))
    for start in range(0, len(item_ids), size):
        run_work(kind_name, item_ids[start : start + size])


@huey.task()
def run_batches(batch_name: str) -> None:
    with connection():
        engine.run_batches(batch_name)


NUDGE_INTERVAL = 0.05  # seconds; at most one immediate batch task per kind and process in this interval
_last_nudge: dict[str, float] = {}


def batch_nudger(batch_name: str) -> Callable[[], None]:
    """Enqueue the batch kind's task now, unless this process did within NUDGE_INTERVAL: for a
    transaction that made work for it (events committed), so it need not wait for the tick."""

    def nudge() -> None:
        moment = time.monotonic()
        if moment - _last_nudge.get(batch_name, 0.0) >= NUDGE_INTERVAL:
            _last_nudge[batch_name] = moment
            run_batches(batch_name)

    return nudge


def sweep() -> None:
    """Run a few batches of every batch kind, re-enqueue due rows of every kind and settle expired
    leases (a few batches per kind per tick)."""
    engine.sweep_all()
