"""Contacts' names from the platform, for those the webhook names only by a scoped id.

Instagram and Facebook Messenger send a message with the sender's scoped id alone (an IGSID, a
PSID): the name and username come from the platform's User Profile API, which is a network call and
so has no place in the webhook's transaction (the webhook must answer fast). When such a contact
writes and their profile was never read, or was read more than `REFRESH_AFTER` ago, the hook's
transaction arms the conversation's lookup, a row of the work engine (`LOOKUP_WORK`, table
`contact_lookup`); a worker reads the profile outside any transaction and stores the name and the
handle. It is at least once: reading a profile twice harms nothing. A lookup the platform refuses
leaves the contact as it was, and so does one that still cannot get an answer after
`MAX_ATTEMPTS`: either way it is not tried again until the contact writes after the next long silence.

Telegram and WhatsApp name the contact in the webhook itself (`from.first_name`, `contacts[].profile.name`):
those names are stored as they arrive, with no lookup.
"""

from __future__ import annotations

import datetime as dt
import logging
from typing import Any, Literal

from peewee import IntegrityError

from kit import clock, settings
from platforms import registry
from platforms.base import Indeterminate, PlatformFailure, RetryLater
from platforms.inbound import InboundEvent
from service.accounts import adapters
from service.engine import core as engine
from service.inbox.contacts import normalise_inbound_handle
from storage.db import connection, db
from storage.models import Account, Conversation, Message

log = logging.getLogger("switchboard.inbox")

REFRESH_AFTER = dt.timedelta(days=7)
MAX_ATTEMPTS = 3
BACKOFF_SECONDS = (30.0, 300.0)

Outcome = Literal["named", "unchanged", "later", "refused", "gone"]


def _due(conversation: Conversation) -> bool:
    read_at = conversation.contact_profile_at
    return read_at is None or read_at <= clock.now() - REFRESH_AFTER


def contact_wrote(conversation: Conversation, message: Message, event: InboundEvent) -> None:
    """Receiver of `signals.contact_wrote` (in the hook's transaction): arm the contact's lookup when due."""
    # Only where the platform's webhooks carry no name and it offers a profile lookup (its inbox rules).
    if not registry.declared(conversation.platform).inbox_rules.looks_up_contacts or not (
            conversation.external_conversation_id):
        return
    if not _due(conversation):
        return
    armed = engine.arm(LOOKUP_WORK, [{"id": f"look_{conversation.id}", "conversation_id": conversation.id}])
    engine.nudge_after_commit(LOOKUP_WORK, armed)


def run(lookup_id: str) -> Outcome | None:
    """The engine's run of one armed lookup: None when it was not ours to run."""
    with connection():
        with db.atomic():
            found = engine.claim(LOOKUP_WORK, lookup_id)
            if found is None:
                return None
            conversation = Conversation.get_or_none(Conversation.id == found.columns["conversation_id"])
            account = Account.get_or_none(Account.id == conversation.account_id) if conversation else None
        if conversation is None or account is None or account.status != "connected":
            with db.atomic():
                engine.settle_idle(found)
            return "gone"
        contact_id = str(conversation.external_conversation_id)  # armed only for conversations that have one
        try:
            profile = adapters.call(account, lambda adapter, ctx: adapter.contact_profile(ctx, contact_id=contact_id))
        except (RetryLater, Indeterminate) as failure:
            if found.attempts < MAX_ATTEMPTS:
                wait = failure.delay_seconds if isinstance(failure, RetryLater) else (
                    BACKOFF_SECONDS[min(found.attempts, len(BACKOFF_SECONDS)) - 1])
                with db.atomic():
                    engine.finish(found, status="due", next_attempt_at=clock.now() + dt.timedelta(seconds=wait))
                return "later"
            return _give_up(found, conversation.id, failure)
        except PlatformFailure as failure:
            return _give_up(found, conversation.id, failure)
        with db.atomic():
            if not engine.settle_idle(found):
                return "unchanged"
            return _store(conversation.id, profile)


def _give_up(found: engine.Claim, conversation_id: str, failure: PlatformFailure) -> Outcome:
    log.info("contact profile of conversation %s not read: %s", conversation_id, failure.message)
    with db.atomic():
        if engine.settle_idle(found):
            Conversation.update(contact_profile_at=clock.now()).where(Conversation.id == conversation_id).execute()
    return "refused"


def _store(conversation_id: str, profile: dict[str, Any]) -> Outcome:
    """The profile's name and handle on the conversation (a handle another conversation of the
    account holds is left out: handles identify contacts)."""
    conversation = Conversation.get_or_none(Conversation.id == conversation_id)
    if conversation is None:
        return "gone"
    moment = clock.now()
    changes: dict[Any, Any] = {Conversation.contact_profile_at: moment}
    name = profile.get("name")
    if isinstance(name, str) and name and name != conversation.contact_name:
        changes[Conversation.contact_name] = name[:255]
    handle = normalise_inbound_handle(conversation.platform, profile.get("username"))
    if handle and handle != conversation.contact_handle:
        changes[Conversation.contact_handle] = handle
    named = len(changes) > 1
    if named:
        changes[Conversation.updated_at] = moment
    try:
        with db.atomic():  # a savepoint: a handle taken meanwhile is simply left out
            Conversation.update(changes).where(Conversation.id == conversation_id).execute()
    except IntegrityError:
        changes.pop(Conversation.contact_handle, None)
        Conversation.update(changes).where(Conversation.id == conversation_id).execute()
    return "named" if named else "unchanged"


def lease_seconds() -> float:
    # One platform call, as a message's send.
    return settings.current().send_lease_seconds


LOOKUP_WORK = engine.Kind(
    name="contact_lookup", table="contact_lookup", ready=("due",), idle="idle", run=run,
    lease_seconds=lease_seconds, returning=("conversation_id",), sweep_batch=50, sweep_batches_per_tick=1,
)
