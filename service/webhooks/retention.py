"""How long the event outbox keeps what it sent: `SWITCHBOARD_EVENT_RETENTION_DAYS` (default 30).

Every event a change makes stays a row, and every endpoint it went to a delivery: without an end,
both tables grow with every message ever sent. An event goes once it is older than the retention,
its dispatch is done and none of its deliveries is still waiting for an attempt (`QUEUED` or
`RETRYING`: the retry schedule spans hours, the retention days); its deliveries go with it (their
foreign key cascades), and with them their rows in the delivery log and their redelivery.

Events are found by their ids, which begin with the millisecond they were made (`ids.first_at`):
the primary key reads the oldest first, and no index on `created_at` is paid for by every insert.
"""

from __future__ import annotations

from kit import clock, ids
from service.common.configured import Configured
from storage.db import db
from storage.hot import run

settings = Configured(__name__)  # handed in by the composition root (wire)

BATCH = 1000

_FORGET = (
    "DELETE FROM event WHERE id IN (SELECT id FROM event WHERE id < ? AND dispatched_at IS NOT NULL "
    "AND NOT EXISTS (SELECT 1 FROM webhook_delivery WHERE webhook_delivery.event_id = event.id "
    "AND webhook_delivery.status IN ('QUEUED', 'RETRYING')) ORDER BY id LIMIT ?)"
)


def forget_old_events(*, limit: int | None = None) -> int:
    """Delete up to `limit` (default `BATCH`) events past the retention, with their deliveries, in
    one transaction; returns how many events went (0 when the retention is 0: kept for ever)."""
    days = settings().event_retention_days
    if days <= 0:
        return 0
    before = ids.first_at("evt", clock.epoch() - days * 86400)
    with db.atomic():
        return int(run(_FORGET, (before, limit or BATCH)).rowcount)
