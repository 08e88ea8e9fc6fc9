"""The work engine's side of the queue: one task that runs rows, one that runs a batch kind, and
the sweeper's tick job.

A task carries a kind and a few row ids; it only says "look at these rows now". A task lost with
its consumer, enqueued twice, or run after its rows were done does no harm: each row is claimed
with a conditional UPDATE (service/engine/core.py) and the sweeper re-enqueues what is due. A batch
kind's task takes whatever is pending when it runs; a lost one leaves it to the next tick.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from datetime import timedelta
from typing import Any

from kit import clock
from service.engine import core as engine
from storage.db import connection, db, is_postgres
from storage.hot import run_fixed, stamp
from tasks.queue import huey

log = logging.getLogger("switchboard.engine")

# Rows are handed out in small groups: a queue round trip per row cost as much CPU as the row's
# work itself. Groups stay small and spread (at most MAX_GROUP rows, at least SPREAD tasks when there
# are enough rows) so a few rows still run in parallel and one slow platform holds few.
MAX_GROUP = 10
SPREAD = 16


# Rows handed to this process's tasks (a duplicate task's rows too), for the worker's last log line:
# how evenly several workers shared the work.
rows_run = 0
_counting = threading.Lock()


@huey.task()
def run_work(kind_name: str, item_ids: list[str]) -> None:
    global rows_run
    with _counting:
        rows_run += len(item_ids)
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


def groups(item_ids: list[str]) -> list[list[str]]:
    """The rows as `enqueue` hands them out: one task's rows each."""
    size = max(1, min(MAX_GROUP, len(item_ids) // SPREAD))
    return [item_ids[start : start + size] for start in range(0, len(item_ids), size)]


def enqueue(kind_name: str, item_ids: list[str]) -> None:
    for group in groups(item_ids):
        run_work(kind_name, group)


batch_tasks = 0  # batch kinds' tasks this process ran, and the items they took
batch_items = 0


@huey.task()
def run_batches(batch_name: str) -> None:
    global batch_tasks, batch_items
    with connection():
        taken = engine.run_batches(batch_name)
    with _counting:
        batch_tasks += 1
        batch_items += taken


NUDGE_INTERVAL = 0.05  # seconds; at most one immediate batch task per kind and process in this interval
_last_nudge: dict[str, float] = {}


def batch_nudger(batch_name: str) -> Callable[[], None]:
    """Enqueue the batch kind's task now, unless this process did within NUDGE_INTERVAL: for a
    transaction that made work for it (events committed), so it need not wait for the tick."""

    def nudge() -> None:
        moment = time.monotonic()
        if moment - _last_nudge.get(batch_name, 0.0) >= NUDGE_INTERVAL:
            _last_nudge[batch_name] = moment
            try:
                run_batches(batch_name)
            except Exception:  # the queue is unreachable: the tick runs the batches anyway
                log.warning("the queue did not take the %s task; the tick will run it", batch_name, exc_info=True)

    return nudge


def _probe_sql(kinds: tuple[engine.Kind, ...], batches: tuple[engine.Batch, ...] = ()) -> str:
    """One statement asking, for every kind at once, whether its table has a row that the sweep
    would hand out or settle now: a column per kind, with the parameters `_probe_params` gives; then
    a column per batch kind that says where its items wait, whether it has any."""
    columns = []
    for kind in kinds:
        # The sweep's own conditions (service/engine/core.py: `sweep`), read without taking anything.
        # Each condition in an EXISTS of its own: an index serves each (a row due by its time, a
        # lease run out by its status), where one OR of both left either database a table scan.
        column = f"EXISTS (SELECT 1 FROM {kind.table} WHERE {kind.due})"  # noqa: S608 - names from code
        if is_postgres():
            # PostgreSQL prices an EXISTS by its first row, from statistics that take status and time
            # apart: half the targets queued, half the instants past, so a quarter "due" and a table
            # scan that should meet one at once (it reads every future post instead, 344 buffers
            # of 12,120 targets). Ordered by the time and limited, it searches the index.
            column = (f"(SELECT 1 FROM {kind.table} WHERE {kind.due} "  # noqa: S608 - names from code
                      "ORDER BY next_attempt_at LIMIT 1) IS NOT NULL")
        if kind.in_flight and kind.lost:
            column = f"({column} OR EXISTS (SELECT 1 FROM {kind.table} WHERE {kind.expired}))"  # noqa: S608
        columns.append(column)
    columns += [f"EXISTS (SELECT 1 FROM {work.table} WHERE {work.pending})" for work in batches]  # noqa: S608
    return "SELECT " + ", ".join(columns)


# The probe's instants as the database takes them, converted once per distinct lease (a tick asks
# some 50 instants of a dozen kinds, and converting each on SQLite cost more than the statement).
def _probe_params(kinds: tuple[engine.Kind, ...]) -> tuple[Any, ...]:
    moment = clock.now()
    now = stamp(moment)
    stale: dict[float, Any] = {}
    params: list[Any] = []
    for kind in kinds:
        lease = kind.lease()
        if lease not in stale:
            stale[lease] = stamp(moment - timedelta(seconds=lease))
        params += [now, now, stale[lease]]
        if kind.in_flight and kind.lost:
            params.append(now)
    return tuple(params)


_probes: dict[tuple[str, ...], str] = {}


def _due_now() -> tuple[list[engine.Kind], list[engine.Batch]]:
    """The kinds a sweep would find work of now, and the batch kinds with items waiting: one read
    for them all. An armed kind (a chore) falls due by other tables' rows, so its own `arm` query
    (a read) is asked too. A batch kind that does not say where its items wait is always run."""
    kinds = tuple(kind for kind in engine.kinds() if kind.sweep_batches_per_tick)  # a kind never swept: not asked
    batches = tuple(work for work in engine.batches() if work.pending)
    always = [work for work in engine.batches() if not work.pending]
    if not kinds and not batches:
        return [], always
    key = (*(kind.name for kind in kinds), "|", *(work.name for work in batches))
    statement = _probes.get(key)
    if statement is None:
        statement = _probes[key] = _probe_sql(kinds, batches)
    found = run_fixed(statement, _probe_params(kinds)).fetchone()
    waiting = always + [work for work, due in zip(batches, found[len(kinds):], strict=True) if due]
    return [kind for kind, due in zip(kinds, found[: len(kinds)], strict=True)
            if due or engine.arm_rows(kind)], waiting


def _kinds_due() -> list[engine.Kind]:
    return _due_now()[0]


def sweep() -> None:
    """Run a few batches of every batch kind, re-enqueue due rows of every kind and settle expired
    leases (a few batches per kind per tick).

    A tick that finds nothing is the common case, and it ran every kind's sweep in a transaction of
    its own (BEGIN, an UPDATE or two that changed nothing, COMMIT) in whichever worker held the turn:
    a kind is swept only when one read says it has something to sweep. A row that falls due just
    after that read is swept on the next tick, as it would be had it fallen due after the sweep."""
    kinds, waiting = _due_now()
    for work in waiting:
        engine.run_batches(work.name)
    for kind in kinds:
        for _ in range(kind.sweep_batches_per_tick):
            with db.atomic():
                swept = engine.sweep(kind)
            if len(swept.nudged) < kind.sweep_batch and len(swept.lost) < kind.sweep_batch:
                break
