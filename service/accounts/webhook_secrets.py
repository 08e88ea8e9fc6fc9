"""Webhook secrets that derive from the service's own key (Telegram's `secret_token` of each bot).

After a key rotation the platform still sends the secret the older key derived; it is accepted
while that key is listed (`PlatformConfig.telegram_older_secret_seeds`). `renew()` sets each such
webhook again with the newest key's secret, so the older key can be dropped without a bot going
unheard. `switchboard secrets rotate` runs it after re-encrypting the stored secrets."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field

from kit.errors import ServiceError
from platforms import registry
from platforms.base import PlatformFailure
from service.accounts import adapters
from storage.db import connection
from storage.models import Account

log = logging.getLogger("switchboard.accounts")

KEYED = registry.platforms_where(lambda adapter: adapter.webhook_secret_from_service_key)


@dataclass
class Renewed:
    renewed: int = 0
    failed: list[str] = field(default_factory=list)  # the ids of the accounts whose platform refused


def renew() -> Renewed:
    """Set the webhook of every connected account of a platform in `KEYED` again (its secret now the
    newest key's). One platform call per account, outside any transaction; a refusal is counted and
    the rest go on."""
    result = Renewed()
    with connection():
        accounts = list(Account.select().where(Account.platform.in_(KEYED), Account.status == "connected")
                        .order_by(Account.id))
    for account in accounts:
        try:
            adapters.call(account, lambda adapter, ctx: adapter.subscribe_webhooks(ctx))
        except (PlatformFailure, ServiceError) as failure:
            log.warning("account %s: its webhook could not be set again (%s)", account.id, type(failure).__name__)
            result.failed.append(account.id)
        else:
            result.renewed += 1
    return result
