"""Credentials that lapse for good are renewed before they do.

Most platforms hand out short-lived tokens with a refresh token, renewed when a call is refused
(`adapters.call`). Instagram's and Facebook's 60-day tokens are different: once lapsed they cannot
be refreshed, and the account must be connected again by a person. So every account says in the
clear when its credentials lapse (`credentials_expire_at`), and once a day at most per account,
from a week before, a worker refreshes them. A platform that refuses flags the account
`needsReauth`; one that cannot answer now is tried again the next day (a week leaves seven tries).
"""

from __future__ import annotations

import datetime as dt
import logging
from typing import Literal

from platforms.base import PLATFORMS, PlatformFailure, ReauthRequired, Rejected
from service.accounts import adapters
from service.kit import clock
from storage.db import connection, db, is_postgres
from storage.hot import by_id
from storage.models import Account

log = logging.getLogger("switchboard.renewals")

RENEW_WITHIN = dt.timedelta(days=7)
RETRY_AFTER = dt.timedelta(days=1)
BATCH = 20

Outcome = Literal["renewed", "not_due", "reauth_needed", "later", "gone"]


def _lapsing_platforms() -> list[str]:
    return [name for name in PLATFORMS if adapters.adapter(name).lapsing_credentials]


def claim_due(limit: int = BATCH) -> list[str]:
    """Take up to `limit` accounts to renew now, in the caller's transaction: connected, lapsing
    within a week (or never looked at since they were connected before lapses were recorded), and
    not tried in the last day. Marking them tried is the claim, so workers never share one."""
    moment = clock.now()
    due = (
        (Account.status == "connected")
        & (Account.platform.in_(_lapsing_platforms()))
        & (
            (Account.credentials_expire_at <= moment + RENEW_WITHIN)
            | (Account.credentials_expire_at.is_null() & Account.credentials_checked_at.is_null())
        )
        & (Account.credentials_checked_at.is_null() | (Account.credentials_checked_at <= moment - RETRY_AFTER))
    )
    candidates = Account.select(Account.id).where(due).order_by(Account.credentials_expire_at).limit(limit)
    if is_postgres():
        candidates = candidates.for_update(skip_locked=True)
    ids = [row.id for row in candidates]
    if not ids:
        return []
    Account.update(credentials_checked_at=moment).where(Account.id.in_(ids), due).execute()
    return ids


def renew(account_id: str) -> Outcome:
    """Refresh one account's credentials if they lapse within the week. Outside any transaction:
    it calls the platform."""
    with connection():
        account = by_id(Account, account_id)
        if account is None or account.status != "connected" or account.credentials is None:
            return "gone"
        credentials = adapters.context(account).credentials
        lapses = adapters.lapses_at(account.platform, credentials)
        if lapses is None or lapses > clock.now() + RENEW_WITHIN:
            # Connected before lapses were recorded, or renewed elsewhere meanwhile: just note when.
            with db.atomic():
                Account.update(credentials_expire_at=lapses).where(Account.id == account.id).execute()
            return "not_due"
        try:
            fresh = adapters.adapter(account.platform).refresh_credentials(adapters.context(account))
        except (ReauthRequired, Rejected):
            adapters.flag_reauth(account)
            return "reauth_needed"
        except PlatformFailure:
            log.info("renewing account %s: the platform did not answer; tried again tomorrow", account.id)
            return "later"
        adapters.store_credentials(account, fresh)
        return "renewed"
