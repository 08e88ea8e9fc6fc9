"""Platform events arriving at /hooks: verified, stored once per account, handed to the features.

The features' receivers of `signals.platform_event` (connected by the composition root) run in the
transaction that stores the event, once per new event: a duplicate delivery finds the row already there and
runs nothing. Handlers only write rows; work that calls a platform (an automation's DM)
is left to tasks.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import logging
from collections.abc import Mapping
from typing import Any

from kit import clock, ids
from kit.errors import BadRequest, Forbidden
from platforms.inbound import InboundEvent
from service.accounts import adapters
from service.common import signals
from service.inbox import polls
from storage.db import db
from storage.models import Account, InboundRecord

log = logging.getLogger("switchboard.inbound")

# An inbound record is the key that stores a platform event once however often it comes. Platforms
# deliver an event again for days at most (WhatsApp retries a webhook for up to 7 days, Meta's others
# and Telegram's updates for a day or so), and a poll reads again only what is at or after its cursor
# and the replies of recently active threads; a poll takes nothing older than `REREAD_HORIZON` from a
# page read again (`polling`). So a record can go once the event is older than anything that could
# still come again as new: `RETENTION`, a day past the horizon (a platform's clock a little ahead of
# ours), and the table stays bounded by the last month's events.
REREAD_HORIZON = dt.timedelta(days=30)
RETENTION = REREAD_HORIZON + dt.timedelta(days=1)
BATCH = 1000


def answer_check(platform: str, params: Mapping[str, str]) -> str | dict[str, str]:
    """The platform's GET subscription check of `/hooks/{platform}` (Meta's `hub.challenge` to echo as
    text, X's CRC `response_token` as JSON), or 403."""
    adapter = adapters.adapter(platform)
    answer = adapter.webhook_check(params)
    if answer is None:
        raise Forbidden(adapter.webhook_check_refused)
    return answer


def verify(platform: str, headers: Mapping[str, str], raw_body: bytes, query: Mapping[str, str]) -> None:
    if not adapters.adapter(platform).verify_webhook(headers, raw_body, query):
        raise Forbidden("The webhook signature is missing or wrong.")


def _jsonable(event: InboundEvent) -> dict[str, Any]:
    out = dataclasses.asdict(event)
    for key, value in out.items():
        if isinstance(value, dt.datetime):
            out[key] = value.isoformat()
        elif isinstance(value, tuple):
            out[key] = list(value)
    return out


def receive(platform: str, payload: Any, query: Mapping[str, str]) -> int:
    """Store each new event once per connected account it concerns and run the handlers.
    Returns how many new events were stored. Call inside a write transaction."""
    adapter = adapters.adapter(platform)
    try:
        events = adapter.parse_webhook(payload, query) if isinstance(payload, dict) else []
    except (KeyError, TypeError, ValueError, AttributeError):
        raise BadRequest("The webhook payload could not be read.") from None
    stored = 0
    heard: set[str] = set()
    for event in events:
        # By its id, or by its id under a separate grant (TikTok messaging's webhooks name that one).
        named = ((Account.platform_account_id == event.platform_account_id)
                 | (Account.grant_account_id == event.platform_account_id))
        accounts = Account.select().where(named, Account.status == "connected").filter(platform=platform)
        for account in accounts:
            heard.add(account.id)
            stored += store_events(account, [event])
    if adapter.inbox_rules.rests_while_webhook_heard and heard:
        # The messages come by this webhook now: the poll rests while it keeps coming (`polling`).
        polls.webhook_heard(platform, sorted(heard))
    return stored


def store_events(account: Account, events: list[InboundEvent]) -> int:
    """Store each event once for the account (a webhook's, or a poll's page) and run the handlers
    of the new ones; how many were new. Call inside a write transaction."""
    stored = 0
    for event in events:
        inserted = list(
            InboundRecord.insert(
                id=ids.new_id("inb"), account=account.id, platform=account.platform, kind=event.kind,
                dedupe_key=event.dedupe_key[:255], event=_jsonable(event), received_at=clock.now(),
            )
            .on_conflict_ignore()
            .returning(InboundRecord.id)
            .execute()
        )
        if not inserted:  # delivered (or read) before: already handled
            continue
        stored += 1
        signals.platform_event.send(account, event)  # each receiver in a savepoint of its own
        InboundRecord.update(processed_at=clock.now()).where(
            InboundRecord.account == account.id, InboundRecord.dedupe_key == event.dedupe_key[:255]
        ).execute()
    return stored


def forget_old(*, limit: int | None = None) -> int:
    """Delete up to `limit` (default `BATCH`) inbound records handled more than `RETENTION` ago (the
    oldest first, on the `processed_at` index); how many went."""
    doomed = (InboundRecord.select(InboundRecord.id).where(InboundRecord.processed_at < clock.now() - RETENTION)
              .order_by(InboundRecord.processed_at).limit(limit or BATCH))
    with db.atomic():
        return int(InboundRecord.delete().where(InboundRecord.id.in_(doomed)).execute())
