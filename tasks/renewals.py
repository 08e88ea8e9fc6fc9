"""The queue's side of credential renewal: a tick job that claims due accounts, a task per account.

A task lost with its consumer costs a day: the account is tried again once its daily mark has
aged, well inside the week before its credentials lapse.
"""

from __future__ import annotations

from service.accounts import renewals
from storage.db import db
from tasks.queue import huey


@huey.task()
def renew(account_id: str) -> None:
    renewals.renew(account_id)


def renew_due() -> None:
    """Tick job: hand out the accounts whose credentials lapse within the week (a batch a tick)."""
    with db.atomic():
        ids = renewals.claim_due()
    for account_id in ids:
        renew(account_id)
