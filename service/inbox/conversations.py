"""The inbox: conversations with contacts and their direct messages, for `/v1` and the MCP tools.

A conversation is one contact on one connected account, never two: the per-account unique indexes
on the platform's thread id (`externalConversationId`) and on the normalised handle make concurrent
starts and webhooks meet at the database rather than in a read-then-write race.

What changes a conversation:
- `start_conversation` (the API): fetch semantics, `created` tells 201 from 200.
- a contact's DM arriving at `/hooks` (the `INBOUND_HANDLERS` below, in the hook's transaction):
  the conversation is created or found, the message stored once (the inbound record dedupes),
  `unreadCount`, `lastInboundAt` (the messaging window) and `lastMessageAt` move.
- a reply: `service/outbound.py` stores it and the work engine sends it. A reply written in the
  platform's own inbox comes back as an echo and is stored as an outbound message; receipts move
  statuses forward only.

Every change writes its event (`conversation.started`, `message.received`, `message.sent`,
`message.failed`) in the same transaction. Other features react to `signals.conversation_started`
and `signals.contact_wrote` (sequences enrol and stop there), in the same transaction too.

Contacts that Meta names only by a scoped id (Instagram, Facebook) arrive with `contactHandle` and
`contactName` null: the profile lookup is a network call, which has no place in the webhook's
write transaction, so the engine's `contact_lookup` kind fills them in afterwards
(service/inbox/profiles.py).
"""

from __future__ import annotations

import datetime as dt
import logging
import re
from dataclasses import dataclass
from typing import Any, cast

from peewee import Case, IntegrityError

from kit import clock, ids
from kit.errors import Conflict, FieldProblem, NotFound, ValidationFailed
from kit.pagination import Page, paginate, records, window
from platforms.inbound import InboundEvent
from service.accounts import adapters
from service.accounts import ops as accounts
from service.common import audit, events, signals
from service.engine.core import Also
from service.identity.auth import Actor
from service.inbox.contacts import InvalidHandle, normalise_handle, normalise_inbound_handle
from service.inbox.shapes import Conversation as ConversationRecord
from service.inbox.shapes import Message as MessageRecord
from storage import hot, hot_inbox
from storage.db import db
from storage.models import Account, Conversation, ConversationCount, Message

log = logging.getLogger("switchboard.inbox")

WATERMARK_SLACK = dt.timedelta(seconds=1)
WINDOW_MESSAGE = "The contact's last message is older than the platform's messaging window."


# -- reading -----------------------------------------------------------------------------------
def get_row(*, actor: Actor, conversation_id: str) -> Conversation:
    conversation = Conversation.get_or_none(
        Conversation.id == conversation_id, Conversation.workspace == actor.workspace_id
    )
    if conversation is None:
        raise NotFound("No conversation with that id.")
    actor.require_profile(conversation.profile_id)
    return conversation


def get_conversation(*, actor: Actor, conversation_id: str) -> ConversationRecord:
    return ConversationRecord.model_validate(get_row(actor=actor, conversation_id=conversation_id))


def recent_activity(*, workspace_id: str, limit: int) -> list[tuple[str, str, int, Any]]:
    """(id, profile id, unread count, updated at) of the workspace's most recently active
    conversations: what a watcher of the inbox compares from one look to the next."""
    query = (Conversation.select(Conversation.id, Conversation.profile, Conversation.unread_count,
                                 Conversation.updated_at)
             .where(Conversation.workspace == workspace_id)
             .order_by(Conversation.activity_at.desc(), Conversation.id.desc())
             .limit(limit))
    return [(row.id, row.profile_id, row.unread_count, row.updated_at) for row in query]


def list_conversations(
    *,
    actor: Actor,
    platform: str | None = None,
    account_id: str | None = None,
    profile_id: str | None = None,
    page: int | None = None,
    limit: int | None = None,
    unread: bool = False,
    status: str | None = None,
    assignee_id: str | None = None,
    label: str | None = None,
    q: str | None = None,
) -> Page:
    """The workspace's conversations, newest `lastMessageAt` first (a conversation without messages
    yet sorts by its creation). `platform` is the upper-case filter of the contract; `unread` keeps
    those with inbound messages nobody has answered or marked read (the dashboard's filter); the
    shared inbox filters by `status`, `assignee_id` (`none`: unassigned) and `label`, and `q`
    searches contacts and messages (`search_words`)."""
    profile_ids = None if actor.profile_ids is None else tuple(sorted(actor.profile_ids))
    if profile_id is not None:
        actor.require_profile(profile_id)
        profile_ids = (profile_id,)
    if account_id is not None and actor.profile_ids is not None:
        account = Account.get_or_none(Account.id == account_id, Account.workspace == actor.workspace_id)
        if account is not None:
            actor.require_profile(account.profile_id)
    filters = hot_inbox.Filters(
        workspace_id=actor.workspace_id,
        profile_ids=profile_ids,
        account_id=account_id,
        platform=platform.lower() if platform is not None else None,
        unread=unread,
        status=status,
        assignee_id=assignee_id,
        label=label,
        words=search_words(q) if q is not None else None,
    )
    page, limit, offset = window(page, limit)
    if filters.words is not None:
        rows, total = hot_inbox.searched(filters, limit=limit, offset=offset)
    else:
        total = hot_inbox.total(filters)
        rows = hot_inbox.page(filters, limit=limit, offset=offset) if offset < total else []
    columns = hot_inbox.COLUMNS  # the record's fields, in the order of the row
    found = records(ConversationRecord, [dict(zip(columns, row, strict=True)) for row in rows])
    return Page(ConversationRecord, found, page, limit, total)


_WORD = re.compile(r"[^\W_]+")
MAX_SEARCH_WORDS = 8


def search_words(q: str) -> tuple[str, ...]:
    """The words of a search, as both databases' tokenizers cut text (letters and digits; the rest
    separates words), at most eight: each must be a word of the conversation, in the contact's name
    or handle or in any of its messages, the last the start of one (as a person types) from its
    second character (`hot_inbox.begun`). No word at all finds nothing."""
    return tuple(_WORD.findall(q))[:MAX_SEARCH_WORDS]


def get_messages(
    *, actor: Actor, conversation_id: str, page: int | None = None, limit: int | None = None
) -> Page:
    """A conversation's messages, oldest first."""
    conversation = get_row(actor=actor, conversation_id=conversation_id)
    query = (
        Message.select()
        .where(Message.conversation == conversation.id)
        .order_by(Message.created_at, Message.id)
    )
    return paginate(query, page=page, limit=limit, record=MessageRecord)


def mark_read(*, actor: Actor, conversation_id: str) -> ConversationRecord:
    """Someone has read the conversation: its unread count starts again from zero (as a reply does)."""
    conversation = get_row(actor=actor, conversation_id=conversation_id)
    actor.require_write()
    if conversation.unread_count:
        Conversation.update(unread_count=0, updated_at=clock.now()).where(Conversation.id == conversation.id).execute()
        conversation = Conversation.get_by_id(conversation.id)
    return ConversationRecord.model_validate(conversation)


# -- starting ----------------------------------------------------------------------------------
@dataclass(frozen=True)
class Started:
    conversation: ConversationRecord
    created: bool  # False: the contact already had this conversation (200 rather than 201)


def start_conversation(
    *,
    actor: Actor,
    account_id: str,
    contact_handle: str | None = None,
    contact_name: str | None = None,
    external_conversation_id: str | None = None,
) -> Started:
    """Open the conversation with a contact on an account, or return the one it already has (same
    `externalConversationId`, or same normalised `contactHandle`). Safe under concurrent calls."""
    if contact_handle is None and external_conversation_id is None:
        message = "is required when externalConversationId is not given"
        raise ValidationFailed(
            "Give contactHandle or externalConversationId.",
            details=[FieldProblem("contactHandle", message),
                     FieldProblem("externalConversationId", "is required when contactHandle is not given")],
        )
    account = accounts.get_row(actor=actor, account_id=account_id)
    actor.require_write()
    handle = None
    if contact_handle is not None:
        try:
            handle = normalise_handle(account.platform, contact_handle)
        except InvalidHandle as problem:
            raise ValidationFailed.field("contactHandle", str(problem)) from None
    if account.status != "connected":
        raise Conflict("The account is disconnected.")
    conversation, created = _find_or_create(
        account, external_id=external_conversation_id, handle=handle, name=contact_name, from_contact=False
    )
    if created:
        _announce_started(conversation, "api")
        audit.record(actor, "conversation.started", target=("conversation", conversation.id))
    return Started(ConversationRecord.model_validate(conversation), created)


def _find(account_id: str, *, external_id: str | None, handle: str | None, from_contact: bool) -> Conversation | None:
    if external_id is not None:
        found = Conversation.get_or_none(
            Conversation.account == account_id, Conversation.external_conversation_id == external_id
        )
        if found is not None:
            return found
    if handle is not None:
        query = Conversation.select().where(Conversation.account == account_id, Conversation.contact_handle == handle)
        if from_contact:
            # A platform's message carries the contact's id: a handle only identifies a conversation
            # that has no id yet (started through the API by handle), never another contact's.
            query = query.where(Conversation.external_conversation_id.is_null())
        return cast(Conversation | None, query.first())
    return None


def _find_or_create(
    account: Account, *, external_id: str | None, handle: str | None, name: str | None, from_contact: bool
) -> tuple[Conversation, bool]:
    """The contact's conversation, created when missing; `True` when this call created it.

    The insert yields on conflict (`INSERT ... ON CONFLICT DO NOTHING`), so of several concurrent
    calls exactly one creates and the others read the winner's row.
    """
    existing = _find(account.id, external_id=external_id, handle=handle, from_contact=from_contact)
    if existing is not None:
        _complete(existing, external_id=external_id, handle=handle, name=name, rename=from_contact)
        return existing, False
    if handle is not None and from_contact and _handle_taken(account.id, handle):
        handle = None  # another conversation holds this handle (it changed hands): keep the id only
    moment = clock.now()
    new_id = ids.new_id("conv")
    inserted = list(
        Conversation.insert(
            id=new_id, workspace=account.workspace_id, profile=account.profile_id, account=account.id,
            platform=account.platform, contact_handle=handle, contact_name=name,
            external_conversation_id=external_id, activity_at=moment, unread_count=0, status="open",
            created_at=moment, updated_at=moment,
        )
        .on_conflict_ignore()
        .returning(Conversation.id)
        .execute()
    )
    if not inserted:  # a concurrent call created it first and has committed
        winner = _find(account.id, external_id=external_id, handle=handle, from_contact=from_contact)
        if winner is None and from_contact and handle is not None:
            # The handle went to another contact's conversation meanwhile: keep the id only.
            return _find_or_create(account, external_id=external_id, handle=None, name=name, from_contact=True)
        if winner is None:
            raise Conflict("The conversation changed while it was being started; try again.")
        return winner, False
    ConversationCount.insert(
        account=account.id, workspace=account.workspace_id, profile=account.profile_id, platform=account.platform,
        total=1,
    ).on_conflict(
        conflict_target=[ConversationCount.account], update={ConversationCount.total: ConversationCount.total + 1}
    ).execute()
    return Conversation.get_by_id(new_id), True


def _handle_taken(account_id: str, handle: str) -> bool:
    return (
        Conversation.select()
        .where(Conversation.account == account_id, Conversation.contact_handle == handle)
        .exists()
    )


def _complete(
    conversation: Conversation, *, external_id: str | None, handle: str | None, name: str | None, rename: bool
) -> None:
    """Fill what the conversation did not know yet (its platform id, handle or name). The name the
    platform sends replaces the stored one (`rename`); a caller's only fills a missing one."""
    changes: dict[Any, Any] = {}
    if external_id is not None and conversation.external_conversation_id is None:
        changes[Conversation.external_conversation_id] = external_id
    if handle is not None and conversation.contact_handle is None:
        changes[Conversation.contact_handle] = handle
    if name and name != conversation.contact_name and (rename or conversation.contact_name is None):
        changes[Conversation.contact_name] = name
    if not changes:
        return
    changes[Conversation.updated_at] = clock.now()
    try:
        with db.atomic():  # a savepoint: a key another row took meanwhile is simply not filled in
            Conversation.update(changes).where(Conversation.id == conversation.id).execute()
    except IntegrityError:
        return
    for field, value in changes.items():
        setattr(conversation, field.name, value)


def _announce_started(conversation: Conversation, how: str) -> None:
    events.emit(workspace_id=conversation.workspace_id, type="conversation.started",
                data=ConversationRecord.model_validate(conversation).dump())
    signals.conversation_started.send(conversation, how)


# -- inbound -----------------------------------------------------------------------------------
def _naive_utc(moment: dt.datetime) -> dt.datetime:
    if moment.tzinfo is not None:
        return moment.astimezone(dt.UTC).replace(tzinfo=None)
    return moment


def _later(column: Any, moment: dt.datetime) -> Case:
    """`column` moved to `moment` unless it is already later (webhooks arrive out of order)."""
    return Case(None, [((column.is_null()) | (column < moment), moment)], column)


# Written out: every outbound message runs it, and building it with peewee costs more than running it.
_TOUCH_OUTBOUND = (
    "UPDATE conversation SET "
    "last_message_at = CASE WHEN last_message_at IS NULL OR last_message_at < ? THEN ? ELSE last_message_at END, "
    "activity_at = CASE WHEN last_message_at IS NULL OR last_message_at < ? THEN ? ELSE last_message_at END, "
    "unread_count = 0, updated_at = ? WHERE id = ?"
)


def touch_outbound(conversation_id: str, at: dt.datetime) -> None:
    # A reply means someone read the conversation: its unread count starts again from zero.
    stamp = hot.stamp(at)  # four uses, one conversion
    hot.run(_TOUCH_OUTBOUND, (stamp, stamp, stamp, stamp, clock.now(), conversation_id))


def touch_outbound_statement(conversation_id: str, at: dt.datetime) -> Also:
    """`touch_outbound` as a statement that goes with a message's outcome (`engine.finish(also=...)`)."""
    stamp = hot.stamp(at)  # four uses, one conversion
    return Also(_TOUCH_OUTBOUND, (stamp, stamp, stamp, stamp, clock.now(), conversation_id))


def contact_wrote(account: Account, event: InboundEvent) -> None:
    if not event.contact_id:
        return
    conversation, created = _find_or_create(
        account,
        external_id=event.contact_id,
        handle=normalise_inbound_handle(account.platform, event.contact_handle),
        name=event.contact_name,
        from_contact=True,
    )
    at = _naive_utc(event.occurred_at)
    moment = clock.now()
    message = Message.create(
        id=ids.new_id("msg"), conversation=conversation.id, direction="inbound", text=event.text,
        status="received", platform_message_id=event.platform_message_id, source="inbox",
        attachments=list(event.attachments) or None, created_at=at, updated_at=moment,
    )
    Conversation.update(
        {
            Conversation.last_inbound_at: _later(Conversation.last_inbound_at, at),
            Conversation.last_message_at: _later(Conversation.last_message_at, at),
            Conversation.activity_at: _later(Conversation.last_message_at, at),
            Conversation.unread_count: Conversation.unread_count + 1,
            Conversation.updated_at: moment,
        }
    ).where(Conversation.id == conversation.id).execute()
    conversation = Conversation.get_by_id(conversation.id)
    if created:
        _announce_started(conversation, "inbound")
    events.emit(workspace_id=account.workspace_id, type="message.received",
                data=MessageRecord.model_validate(message).dump())
    signals.contact_wrote.send(conversation, message, event)


def conversation_with_commenter(account: Account, event: InboundEvent) -> Conversation:
    """The conversation with a comment's author, found or made as for their DMs (same platform id):
    a comment automation's private reply is stored there, and their answer will arrive there."""
    conversation, created = _find_or_create(
        account,
        external_id=event.contact_id,
        handle=normalise_inbound_handle(account.platform, event.contact_handle),
        name=event.contact_name,
        from_contact=True,
    )
    if created:
        _announce_started(conversation, "comment")
    return conversation


def _our_app(platform: str, app_id: str | None) -> bool:
    client = adapters.config().oauth_clients.get(platform)
    return app_id is not None and client is not None and app_id == client.client_id


def reply_written_elsewhere(account: Account, event: InboundEvent) -> None:
    """A message the account sent: ours come back too (the send path records them), others were
    written in the platform's own inbox and are stored as outbound messages."""
    if not event.contact_id or not event.platform_message_id or _our_app(account.platform, event.app_id):
        return
    known = (
        Message.select(Message.id)
        .join(Conversation)
        .where(Conversation.account == account.id, Message.platform_message_id == event.platform_message_id)
        .exists()
    )
    if known:
        return
    if _ours_in_flight(account.id, event) is not None:
        return
    conversation, created = _find_or_create(
        account, external_id=event.contact_id, handle=None, name=None, from_contact=True
    )
    at = _naive_utc(event.occurred_at)
    message = Message.create(
        id=ids.new_id("msg"), conversation=conversation.id, direction="outbound", text=event.text,
        status="sent", platform_message_id=event.platform_message_id, source="inbox",
        attachments=list(event.attachments) or None, created_at=at, updated_at=clock.now(),
    )
    touch_outbound(conversation.id, at)
    if created:
        _announce_started(Conversation.get_by_id(conversation.id), "inbound")
    events.emit(workspace_id=account.workspace_id, type="message.sent",
                data=MessageRecord.model_validate(message).dump())


def message_changed(account: Account, event: InboundEvent) -> None:
    """A reaction, edit or deletion lands on the message it names: never a new message, no unread
    count, nothing for sequences or automations. One the inbox does not hold (older than the account's
    connection) changes nothing."""
    if not event.target_message_id:
        return
    message = (
        Message.select()
        .join(Conversation)
        .where(Conversation.account == account.id, Message.platform_message_id == event.target_message_id,
               # a platform's ids may be unique per chat only: read within the contact's conversation
               (Conversation.external_conversation_id == event.contact_id) if event.contact_id else True)
        .first()
    )
    if message is None:
        return
    moment = clock.now()
    if event.kind == "reaction":
        by = event.contact_id or ""
        kept = [item for item in message.reactions or [] if isinstance(item, dict) and item.get("by") != by]
        if event.reaction:  # an empty emoji takes the reaction back
            kept.append({"emoji": event.reaction, "by": by})
        message.reactions = kept or None
    elif event.kind == "edit":
        message.text, message.edited_at = event.text, _naive_utc(event.occurred_at)
        message.attachments = list(event.attachments) or message.attachments
    else:
        message.deleted_at = _naive_utc(event.occurred_at)
    message.updated_at = moment
    message.save()


def _ours_in_flight(account_id: str, event: InboundEvent) -> Message | None:
    """A message of ours the platform lists before our send's answer was recorded (X's DM events and
    YouTube's threads, read by polling, carry no app id): the same text, sent by us without an id yet."""
    return cast(Message | None, (
        Message.select(Message.id, Message.status)
        .join(Conversation)
        .where(Conversation.account == account_id, Conversation.external_conversation_id == event.contact_id,
               Message.direction == "outbound", Message.status.in_(("pending", "sending", "unknown")),
               Message.platform_message_id.is_null(), Message.text == event.text)
        .order_by(Message.created_at)
        .first()
    ))


# A receipt moves a message forward only: from the statuses listed to the receipt's status.
_FORWARD = {
    "delivery": ("delivered", ("sent",)),
    "read": ("read", ("sent", "delivered")),
    "failed": ("failed", ("sent",)),
}


def receipt(account: Account, event: InboundEvent) -> None:
    status, before = _FORWARD[event.kind]
    query = (
        Message.select(Message.id)
        .join(Conversation)
        .where(Conversation.account == account.id, Message.direction == "outbound", Message.status.in_(before))
    )
    if event.message_ids:
        query = query.where(Message.platform_message_id.in_(list(event.message_ids)))
    elif event.watermark is not None and event.contact_id:
        # Facebook's read receipt names no message: everything sent to the contact up to the mark.
        # The mark is the platform's clock, our rows are stamped by ours before the call: a little
        # slack absorbs the skew (and marks that come in whole seconds).
        query = query.where(
            Conversation.external_conversation_id == event.contact_id,
            Message.created_at <= _naive_utc(event.watermark) + WATERMARK_SLACK,
        )
    else:
        return
    moment = clock.now()
    if status != "failed":
        Message.update(status=status, updated_at=moment).where(Message.id.in_(query)).execute()
        return
    reason = event.text or "The platform reported that the message was not delivered."
    for row in Message.select().where(Message.id.in_(query)):
        Message.update(status="failed", error=reason, updated_at=moment).where(
            Message.id == row.id, Message.status.in_(before)
        ).execute()
        row.status, row.error, row.updated_at = "failed", reason, moment
        events.emit(workspace_id=account.workspace_id, type="message.failed",
                    data=MessageRecord.model_validate(row).dump())
        signals.message_failed_later.send(row, reason)


# -- permanent deletion of an account ----------------------------------------------------------
def delete_for_account(account_id: str) -> int:
    """Delete an account's conversations and their messages; how many conversations went."""
    threads = Conversation.select(Conversation.id).where(Conversation.account == account_id)
    Message.delete().where(Message.conversation.in_(threads)).execute()
    ConversationCount.delete().where(ConversationCount.account == account_id).execute()
    return int(Conversation.delete().where(Conversation.account == account_id).execute())



# What the inbox does with each kind of platform event (`signals.platform_event`); the composition
# root connects them.
INBOUND_HANDLERS: dict[tuple[str, ...], Any] = {
    ("message", "story_reply", "postback"): contact_wrote,
    ("echo",): reply_written_elsewhere,
    ("reaction", "edit", "delete"): message_changed,
    ("delivery", "read", "failed"): receipt,
}
