"""The queue's side of follower snapshots: a tick job that claims the accounts whose count for today
is still to be taken, and a task per account that asks its platform.

A task lost with its consumer leaves a `claimed` row, claimed again an hour later.
"""

from __future__ import annotations

from service.analytics import ops as analytics
from storage.db import db
from tasks.queue import huey


@huey.task()
def take_snapshot(account_id: str) -> None:
    analytics.take_claimed(account_id)


def snapshot_due() -> None:
    """Tick job: hand out the accounts due for today's follower count (a batch a tick)."""
    with db.atomic():
        ids = analytics.claim_due()
    for account_id in ids:
        take_snapshot(account_id)
