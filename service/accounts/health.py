"""Account health: accounts that need reconnecting now, or whose token the platform says will lapse
within 7 days. Shown on the dashboard's first page, and mailed to the workspace's owners and admins
once (when SMTP is configured) by the scheduler's job; a reconnect clears the mark.
"""

from __future__ import annotations

import datetime as dt
import logging
import time
from typing import Any

from kit import clock, mail
from service.identity.auth import Actor
from storage.db import db
from storage.models import Account, Membership, User, Workspace

log = logging.getLogger("switchboard.accounts")
WARN_BEFORE = dt.timedelta(days=7)
BATCH = 50


def _attention(moment: dt.datetime) -> Any:
    return (Account.status == "connected") & (
        (Account.needs_reauth == True) | (Account.credentials_expire_at <= moment + WARN_BEFORE))  # noqa: E712


def _why(account: Account, moment: dt.datetime) -> str:
    if account.needs_reauth or account.credentials_expire_at is None:
        return "needs reconnecting: the platform no longer accepts its sign-in"
    days = max(0, (account.credentials_expire_at - moment).days)
    return f"needs reconnecting within {days} day{'s' if days != 1 else ''}: the platform's token lapses then"


def needing_attention(*, actor: Actor) -> list[dict[str, Any]]:
    """The workspace's accounts to reconnect (the actor's profiles only), soonest first."""
    moment = clock.now()
    rows = Account.select().where(Account.workspace == actor.workspace_id, _attention(moment))
    return sorted(({"id": a.id, "platform": a.platform, "name": a.display_name or a.username or a.platform_account_id,
                    "reason": _why(a, moment), "needsReauth": bool(a.needs_reauth),
                    "expiresAt": clock.iso(a.credentials_expire_at)}
                   for a in rows if actor.sees_profile(a.profile_id)),
                  key=lambda item: (not item["needsReauth"], item["expiresAt"] or ""))


def notify() -> int:
    """Mail the owners and admins of each account that newly needs attention, once; how many
    accounts were told of. Claims each account in a short transaction, then mails outside it."""
    if not mail.configured():
        return 0
    moment = clock.now()
    candidates = [a.id for a in Account.select(Account.id).where(_attention(moment),
                                                                 Account.health_notified_at.is_null()).limit(BATCH)]
    told = 0
    for account_id in candidates:
        with db.atomic():
            claimed = Account.update(health_notified_at=moment).where(
                Account.id == account_id, Account.health_notified_at.is_null()).execute()
            if not claimed:
                continue
            account = Account.get_by_id(account_id)
            workspace = Workspace.get_by_id(account.workspace_id)
            people = [u.email for u in User.select(User.email).join(Membership).where(
                Membership.workspace == account.workspace_id, Membership.role.in_(["owner", "admin"]))]
        name = account.display_name or account.username or account.platform_account_id
        for address in people:
            mail.send(to=address, subject=f"Reconnect {name} ({account.platform}) in {workspace.name}",
                      text=(f"The {account.platform} account {name} in the workspace {workspace.name} "
                            f"{_why(account, moment)}.\n\nOpen Accounts in Switchboard and choose Reconnect, "
                            "or posts and messages on it will fail.\n"))
        told += 1
    return told


_last_look = 0.0
LOOK_EVERY_SECONDS = 60.0


def notify_job() -> None:
    """The scheduler's job: a look a minute is soon enough for a mail."""
    global _last_look
    if time.monotonic() - _last_look >= LOOK_EVERY_SECONDS:
        _last_look = time.monotonic()
        notify()
