"""The engine's two kinds of webhook work: the outbox's dispatch and the deliveries it writes.

The life of an event:

1. a change calls `events.emit()` in its own transaction (the outbox row);
2. the dispatch (a `Batch` of the engine: every tick, and at once after a transaction that emitted
   events commits) takes undispatched events and, in one transaction, writes one `WebhookDelivery`
   per enabled endpoint that subscribes to the event's type;
3. a delivery (a `Kind` of the engine) is claimed with a lease, sent (service/webhooks/delivery.py)
   and finished: `DELIVERED`, or `RETRYING` on the configured schedule, or `FAILED` after the last
   attempt (`DELIVERY_POLICY`);
4. the sweep hands out rows whose retry is due, whose task was never run, or whose worker died
   mid-attempt (the lease expired): at least once, whatever happens to a process, so a delivery
   whose worker died keeps its status and is simply handed out again.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

from kit import clock, ids
from kit.settings import Settings
from platforms.base import Rejected
from service.engine import core as engine
from service.engine.outcomes import Policy, Transient
from service.webhooks.delivery import Outcome, _attempt_loaded, _load, attempt
from storage import hot
from storage.db import connection, db
from storage.models import WebhookDelivery, WebhookEndpoint

log = logging.getLogger("switchboard.webhooks")

PENDING = ("QUEUED", "RETRYING")


def lease_seconds(settings: Settings) -> float:
    # An attempt can spend the timeout connecting, sending and waiting for the answer; the lease
    # must outlast it or a second worker would take the row while the first still sends it.
    return 3 * settings.webhook_timeout_seconds + 5


def _delays(settings: Settings) -> tuple[float, ...]:
    return tuple(settings.webhook_retry_delays)


# At least once: a receiver dedupes on the envelope's id. The first attempt and one per delay.
DELIVERY_POLICY = Policy(
    retry_status="RETRYING", failed_status="FAILED", max_attempts=lambda settings: len(_delays(settings)) + 1,
    backoff=_delays, min_delay=0.0, error_column="last_error",
)


def deliver(delivery_id: str) -> str | None:
    """One attempt at one delivery, if it is due and free; returns the status it ends in (None: not ours)."""
    with connection(), db.atomic():
        found = claim(delivery_id)
    if found is None:
        return None
    outcome = attempt(found)
    with connection(), db.atomic():
        return _record(found, outcome)


def deliver_group(delivery_ids: list[str]) -> None:
    """Attempts at several deliveries in turn (the group one task hands out), each made as `deliver`
    makes it, in one write transaction per delivery instead of two: an attempt's outcome is written
    in the transaction that claims the next delivery and reads what it sends.

    Each outcome is still written at once, since the next claim follows the answer straight away.
    One row's fault leaves the others to run: a row whose outcome could not be written is handed out
    again when its lease expires, as after a crash.
    """
    answered: tuple[engine.Claim, Outcome] | None = None
    for delivery_id in delivery_ids:
        try:
            with connection(), db.atomic():
                if answered is not None:
                    _record(*answered)
                found = claim(delivery_id)
                loaded = _load(found) if found is not None else None
            answered = None  # written: committed with the claim
            if found is not None:
                answered = (found, _attempt_loaded(found, loaded))
        except Exception:
            log.exception("webhook delivery %s failed; the sweeper will hand it out again", delivery_id)
    if answered is not None:
        try:
            with connection(), db.atomic():
                _record(*answered)
        except Exception:
            log.exception("webhook delivery %s failed; the sweeper will hand it out again", answered[0].id)


def _record(found: engine.Claim, outcome: Outcome) -> str | None:
    if not outcome.delivered:
        log.info("webhook delivery %s attempt %d failed: %s", found.id, found.attempts, outcome.error)
    return record_outcome(found, outcome)


DELIVERY_WORK = engine.Kind(
    name="webhook_delivery", table="webhook_delivery", ready=PENDING, run=deliver, run_group=deliver_group,
    lease_seconds=lease_seconds, returning=("endpoint_id", "event_id"), policy=DELIVERY_POLICY,
)


def claim(delivery_id: str) -> engine.Claim | None:
    """Take the row for one attempt: None when it is not due, done, or held (see `engine.claim`)."""
    return engine.claim(DELIVERY_WORK, delivery_id)


def record_outcome(found: engine.Claim, outcome: Outcome) -> str | None:
    """Write the attempt's outcome if this worker still holds the row; return the new status."""
    if outcome.delivered:
        moment = clock.now()
        held = engine.finish(found, status="DELIVERED", at=moment, response_status=outcome.response_status,
                             last_error=None, delivered_at=moment)
        return "DELIVERED" if held else None
    error = outcome.error or "The attempt failed."
    failure = Rejected(error) if outcome.final else Transient(error)
    step = engine.fail(found, failure, response_status=outcome.response_status, delivered_at=None)
    return step.status if step is not None else None


def sweep_due(*, limit: int = 500) -> list[str]:
    """Mark up to `limit` deliveries that are due and in no one's hands as nudged; return their ids.

    Runs in the caller's transaction; the caller enqueues after commit.
    """
    return engine.sweep(DELIVERY_WORK, limit=limit).nudged


def nudge_after_commit(delivery_ids: list[str]) -> None:
    engine.nudge_after_commit(DELIVERY_WORK, delivery_ids)


def new_delivery(*, endpoint_id: str, workspace_id: str, event_id: str, event_type: str,
                 moment: Any) -> dict[str, Any]:
    """A delivery row's columns, ready now (marked nudged when a queue will hear of it after commit)."""
    return {
        "id": ids.new_id("whd"), "workspace": workspace_id, "endpoint": endpoint_id, "event": event_id,
        "event_type": event_type, "status": "QUEUED", "attempts": 0, "next_attempt_at": moment,
        "nudged_at": moment if engine.has_nudger() else None, "created_at": moment, "updated_at": moment,
    }


# -- the outbox's dispatch -------------------------------------------------------------------------
@dataclass(frozen=True)
class Dispatched:
    events: int  # events claimed (some may have no subscribed endpoint)
    deliveries: list[str]  # ids of the delivery rows written


_PENDING = "dispatched_at IS NULL"  # the partial index `event_undispatched` (migration 26)


def dispatch_pending(*, limit: int = 500) -> Dispatched:
    """Turn up to `limit` undispatched events into delivery rows.

    Runs in the caller's transaction: the events are marked dispatched and their deliveries written
    together, so a crash in between leaves the events to dispatch again, never half done.
    """
    moment = clock.now()
    claimed = engine.take_batch("event", pending=_PENDING, order="created_at, id",
                                mark={"dispatched_at": moment}, returning=("id", "workspace_id", "type", "created_at"),
                                limit=limit)
    if not claimed:
        return Dispatched(0, [])
    claimed.sort(key=lambda row: (str(row[3]), row[0]))
    workspaces = {row[1] for row in claimed}
    endpoints: dict[str, list[WebhookEndpoint]] = {}
    for endpoint in WebhookEndpoint.select(WebhookEndpoint.id, WebhookEndpoint.workspace, WebhookEndpoint.events).where(
        WebhookEndpoint.workspace.in_(list(workspaces)), WebhookEndpoint.enabled == True  # noqa: E712 - SQL
    ):
        endpoints.setdefault(endpoint.workspace_id, []).append(endpoint)
    rows = [
        new_delivery(endpoint_id=endpoint.id, workspace_id=workspace_id, event_id=event_id,
                     event_type=event_type, moment=moment)
        for event_id, workspace_id, event_type, _ in claimed
        for endpoint in endpoints.get(workspace_id, [])
        if not endpoint.events or event_type in endpoint.events
    ]
    for start in range(0, len(rows), 200):
        # Built by hand and kept: peewee builds a batch's SQL anew each time, which was a tenth of a
        # busy worker's time holding the GIL.
        hot.insert_many(WebhookDelivery, rows[start : start + 200])
    new_ids = [row["id"] for row in rows]
    nudge_after_commit(new_ids)
    return Dispatched(len(claimed), new_ids)


def _dispatch(limit: int) -> int:
    return dispatch_pending(limit=limit).events


DISPATCH_WORK = engine.Batch(name="event_dispatch", run=_dispatch, batch=500, batches_per_tick=8, table="event",
                             pending=_PENDING)
