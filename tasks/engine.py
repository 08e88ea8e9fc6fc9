"""The work engine's side of the queue: one task that runs rows, and the sweeper's tick job.

A task carries a kind and a few row ids; it only says "look at these rows now". A task lost with
its consumer, enqueued twice, or run after its rows were done does no harm: each row is claimed
with a conditional UPDATE (service/engine.py) and the sweeper re-enqueues what is due.
"""

from __future__ import annotations

import logging

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


def sweep() -> None:
    """Re-enqueue due rows of every kind and settle expired leases (a few batches per kind per tick)."""
    engine.sweep_all()
