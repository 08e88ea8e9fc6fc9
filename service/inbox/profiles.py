"""Contacts' names from the platform, for those the webhook names only by a scoped id.

Instagram and Facebook Messenger send a message with the sender's scoped id alone (an IGSID, a
PSID): the name and username come from the platform's User Profile API, which is a network call and
so has no place in the webhook's transaction (the webhook must answer fast). When such a contact
writes and their profile was never read, or was read more than `REFRESH_AFTER` ago, the hook's
transaction arms the conversation's lookup, a row of the work engine (`work.LOOKUP_WORK`, table
`contact_lookup`); a worker reads the profile outside any transaction and stores the name and the
handle. It is at least once: reading a profile twice harms nothing. A lookup the platform refuses
leaves the contact as it was, and so does one that still cannot get an answer after its attempts
(`work.LOOKUP_POLICY`): either way it is not tried again until the contact writes after the next
long silence.

Telegram and WhatsApp name the contact in the webhook itself (`from.first_name`, `contacts[].profile.name`):
those names are stored as they arrive, with no lookup.
"""

from __future__ import annotations

import datetime as dt

from kit import clock
from platforms import registry
from platforms.inbound import InboundEvent
from service.engine import core as engine
from service.inbox.work import LOOKUP_WORK
from storage.models import Conversation, Message

REFRESH_AFTER = dt.timedelta(days=7)


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


