"""Credentials that lapse for good are renewed before they do.

Most platforms hand out short-lived tokens with a refresh token, renewed when a call is refused
(`adapters.call`). Instagram's and Facebook's 60-day tokens are different: once lapsed they cannot
be refreshed, and the account must be connected again by a person. So every account says in the
clear when its credentials lapse (`credentials_expire_at`), and once a day at most per account,
from a week before, a worker refreshes them. A platform that refuses flags the account
`needsReauth`; one that cannot answer now is tried again the next day (a week leaves seven tries).

The renewal is a kind of the engine (`RENEWAL_WORK`) whose rows are the accounts' `renewal` chores
(`AccountChore`): each sweep arms the chores of the accounts due (`_due`), and the engine claims,
leases and sweeps them like any other work. It is at least once: refreshing a token twice gives a
second fresh token and harms nothing, so a worker that died mid-renewal leaves its chore to be
handed out again once its lease runs out (before, a lost task cost the account a day).
"""

from __future__ import annotations

import datetime as dt
import functools
import logging
from typing import Literal

from kit import clock
from kit.settings import Settings
from platforms.base import PLATFORMS, PlatformFailure, ReauthRequired, Rejected
from service.accounts import adapters
from service.engine import core as engine
from service.engine.outcomes import Policy
from storage.db import connection, db
from storage.hot import by_id, run_fixed
from storage.models import Account

log = logging.getLogger("switchboard.renewals")

RENEW_WITHIN = dt.timedelta(days=7)
RETRY_AFTER = dt.timedelta(days=1)
BATCH = 20

Outcome = Literal["renewed", "not_due", "failed", "gone"]


def _lapsing_platforms() -> list[str]:
    return [name for name in PLATFORMS if adapters.adapter(name).lapsing_credentials]


@functools.cache
def _due_sql(platforms: tuple[str, ...], *, unknown: bool) -> str:
    """Written out: it runs on every scheduler tick, and building it with peewee (two queries, their
    expressions and their SQL) cost more CPU than the database's own work on it. The accounts whose
    lapse is known are a search of the `credentials_expire_at` index up to a week ahead; those whose
    lapse was never recorded (`unknown`: connected before lapses were) are a read of every account."""
    listed = ", ".join(f"'{name}'" for name in platforms) or "NULL"
    lapse = ("credentials_expire_at IS NULL AND credentials_checked_at IS NULL" if unknown
             else "credentials_expire_at <= ?")
    return ("SELECT id FROM account WHERE " + lapse + " AND status = 'connected' AND platform IN (" + listed + ")"  # noqa: S608
            " AND (credentials_checked_at IS NULL OR credentials_checked_at <= ?)"
            " AND id NOT IN (SELECT account_id FROM account_chore WHERE chore = 'renewal' AND status != 'idle')"
            " ORDER BY credentials_expire_at LIMIT ?")


UNKNOWN_EVERY = 60.0  # seconds: accounts whose lapse was never recorded are looked for at most this often


def _due(limit: int = BATCH) -> list[dict[str, str]]:
    """The renewal chores to arm now: connected accounts lapsing within a week (or never looked at
    since they were connected before lapses were recorded), not tried in the last day, whose chore
    is not armed already."""
    moment = clock.now()
    platforms = tuple(_lapsing_platforms())
    ids = [row[0] for row in run_fixed(_due_sql(platforms, unknown=False),
                                       (moment + RENEW_WITHIN, moment - RETRY_AFTER, limit)).fetchall()]
    if len(ids) < limit:
        ids += engine.seldom("credential_renewal:unknown", UNKNOWN_EVERY, lambda: [row[0] for row in run_fixed(
            _due_sql(platforms, unknown=True), (moment - RETRY_AFTER, limit - len(ids))).fetchall()])
    return [{"id": f"renewal_{account_id}", "account_id": account_id, "chore": "renewal"} for account_id in ids]


def run(chore_id: str) -> Outcome | None:
    """The engine's run of one armed renewal: claim it, mark the account tried today (the daily
    limit), renew outside any transaction, and put the chore back to idle. None: not ours."""
    with connection():
        with db.atomic():
            found = engine.claim(RENEWAL_WORK, chore_id)
            if found is None:
                return None
            account_id = found.columns["account_id"]
            Account.update(credentials_checked_at=clock.now()).where(Account.id == account_id).execute()
        try:
            outcome = renew(account_id)
        except PlatformFailure as failure:
            with db.atomic():
                engine.fail(found, failure)  # back to idle (RENEWAL_POLICY): armed again once due
            return "failed"
        with db.atomic():
            engine.settle_idle(found)
    return outcome


def renew(account_id: str) -> Outcome:
    """Refresh one account's credentials if they lapse within the week. Outside any transaction:
    it calls the platform. A platform's failure is raised, after a refusal flagged the account."""
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
            adapters.flag_reauth(account)  # a person must connect it again, while the token still works
            raise
        except PlatformFailure:
            log.info("renewing account %s: the platform did not answer; tried again tomorrow", account.id)
            raise
        adapters.store_credentials(account, fresh)
        return "renewed"



def lease_seconds(settings: Settings) -> float:
    # One platform call, as a message's send.
    return settings.send_lease_seconds


# A chore: whatever an attempt's failure, the chore goes back to idle (`fail`), and a sweep arms it
# again once the account is due (tried again the next day; a refusal has flagged the account by then).
RENEWAL_POLICY = Policy(retry_status="due", failed_status="idle", max_attempts=1, error_column=None)

RENEWAL_WORK = engine.Kind(
    name="credential_renewal", table="account_chore", scope="chore = 'renewal'", ready=("due",), idle="idle",
    arm=_due, run=run, lease_seconds=lease_seconds, policy=RENEWAL_POLICY, returning=("account_id",),
    sweep_batch=BATCH, sweep_batches_per_tick=1,
)
