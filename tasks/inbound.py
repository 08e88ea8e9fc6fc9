"""The scheduler's job for the inbound records: those past their retention go (service/inbox/inbound.py),
a look a minute and a batch every tick while a look finds a whole one (as the event outbox's)."""

from __future__ import annotations

from service.inbox import inbound
from tasks.webhooks import Retention

_job = Retention(inbound.forget_old, batch=lambda: inbound.BATCH)


def forget_old_records() -> None:
    _job()
