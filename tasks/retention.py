"""The scheduler's retention jobs, each the same way (`Retention`): a look a minute, and a batch every
tick while a look finds a whole one, so that a backlog (the first days after an upgrade, or a
retention shortened) drains at up to a thousand rows a second without one tick holding up the other
jobs, and a steady stream of any rate is kept up with.

- events past their retention, with their deliveries (service/webhooks/retention.py);
- inbound records past `inbound.RETENTION` (service/inbox/inbound.py);
- audit rows past `SWITCHBOARD_AUDIT_RETENTION_DAYS` (service/identity/audit_log.py). Once a minute a
  batch of 1,000 in the housekeeping, this job kept up with at most 1,000 audit rows a minute.
"""

from __future__ import annotations

from collections.abc import Callable

from service.identity import audit_log
from service.inbox import inbound
from service.webhooks import retention as event_retention


class Retention:
    def __init__(self, forget: Callable[[], int], every: int = 60, batch: Callable[[], int] | None = None) -> None:
        self.forget = forget  # deletes a batch, returns how many
        self.every = every  # ticks between looks when nothing is behind
        self.batch = batch or (lambda: event_retention.BATCH)  # a whole batch deleted: more are behind it
        self.ticks = 0
        self.behind = False

    def __call__(self) -> None:
        self.ticks += 1
        if self.behind or self.ticks % self.every == 1:
            self.behind = self.forget() == self.batch()


_events = Retention(event_retention.forget_old_events)
_inbound = Retention(inbound.forget_old, batch=lambda: inbound.BATCH)
_audit = Retention(audit_log.forget_old, batch=lambda: audit_log.BATCH)


def forget_old_events() -> None:
    _events()


def forget_old_inbound_records() -> None:
    _inbound()


def forget_old_audit_entries() -> None:
    _audit()
