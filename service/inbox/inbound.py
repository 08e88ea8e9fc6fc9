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
from platforms import inbound as platform_inbound
from platforms.inbound import InboundEvent
from service.accounts import adapters
from service.common import signals
from service.inbox import polls
from storage.models import Account, InboundRecord

log = logging.getLogger("switchboard.inbound")

def verify_challenge(params: Mapping[str, str]) -> str:
    """Meta's subscription check: the challenge to echo, or 403."""
    challenge = platform_inbound.verify_meta_challenge(params, adapters.config().meta_verify_token)
    if challenge is None:
        raise Forbidden("The verify token does not match.")
    return challenge


def x_crc(params: Mapping[str, str]) -> dict[str, str]:
    """X's challenge-response check of `/hooks/x`: the `response_token`, or 403."""
    answer = platform_inbound.x_crc_response(params, adapters.config().x_consumer_secret)
    if answer is None:
        raise Forbidden("No crc_token, or no X consumer secret is configured.")
    return answer


def verify(platform: str, headers: Mapping[str, str], raw_body: bytes, query: Mapping[str, str]) -> None:
    config = adapters.config()
    # A WhatsApp number connected with another Meta app's token has that app's webhooks, signed
    # with its own secret (`SWITCHBOARD_META_APP_SECRETS`).
    app_secrets = [config.meta_app_secret, *config.meta_app_secrets.values()] if platform == "whatsapp" else [
        config.meta_app_secret]
    if not any(platform_inbound.verify_signature(
        platform, headers, raw_body, app_secret=secret,
        instagram_app_secret=config.instagram_app_secret,
        telegram_secret_for=config.telegram_secret, query=query, x_consumer_secret=config.x_consumer_secret,
        tiktok_client_secret=config.oauth_clients["tiktok"].client_secret if "tiktok" in config.oauth_clients else "",
    ) for secret in app_secrets):
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
    try:
        events = platform_inbound.parse(platform, payload, query=query)
    except (KeyError, TypeError, ValueError, AttributeError):
        raise BadRequest("The webhook payload could not be read.") from None
    stored = 0
    heard: set[str] = set()
    for event in events:
        accounts = Account.select().where(
            Account.platform == platform,
            Account.platform_account_id == event.platform_account_id,
            Account.status == "connected",
        )
        for account in accounts:
            heard.add(account.id)
            stored += store_events(account, [event])
    if platform == "x" and heard:
        # X's DM events come by this webhook now: its poll rests while it keeps coming (`polling`).
        polls.webhook_heard(sorted(heard))
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
