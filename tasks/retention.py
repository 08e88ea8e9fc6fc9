"""The scheduler's retention jobs beyond the event outbox's (tasks/webhooks.py), each the same way: a
look a minute, and a batch every tick while a look finds a whole one, so that a backlog (an
upgrade, a retention shortened) drains at up to a thousand rows a second and a steady stream of
any rate is kept up with.

- inbound records past `inbound.RETENTION` (service/inbox/inbound.py);
- audit rows past `SWITCHBOARD_AUDIT_RETENTION_DAYS` (service/identity/audit_log.py). Once a minute a
  batch of 1,000 in the housekeeping, this job kept up with at most 1,000 audit rows a minute.
"""

from __future__ import annotations

from service.identity import audit_log
from service.inbox import inbound
from tasks.webhooks import Retention

_inbound = Retention(inbound.forget_old, batch=lambda: inbound.BATCH)
_audit = Retention(audit_log.forget_old, batch=lambda: audit_log.BATCH)


def forget_old_inbound_records() -> None:
    _inbound()


def forget_old_audit_entries() -> None:
    _audit()
