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
`message.failed`) in the same transaction. Other features hook in with `on_conversation_started`
and `on_inbound_message` (sequences enrol and stop there); hooks run in the same transaction too.

Contacts that Meta names only by a scoped id (Instagram, Facebook) keep `contactHandle` and
`contactName` null: the profile lookup is a network call, which has no place in the webhook's
write transaction.
"""

from __future__ import annotations

import datetime as dt
import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from peewee import Case, IntegrityError

from platforms.inbound import InboundEvent
from service import accounts, adapters, clock, events, ids
from service.auth import Actor
from service.contacts import InvalidHandle, normalise_handle, normalise_inbound_handle
from service.errors import Conflict, FieldProblem, NotFound, ValidationFailed
from service.pagination import DEFAULT_LIMIT, Page, paginate
from service.validation import ID, INSTANT, NULLABLE_INSTANT, Int, Obj, Str, record
from storage import hot, hot_inbox
from storage.db import db
from storage.models import Account, Conversation, ConversationCount, Message

log = logging.getLogger("switchboard.inbox")

# The contract's filter takes these six, upper case, and nothing else (422).
PLATFORM_FILTER = ("INSTAGRAM", "WHATSAPP", "TIKTOK", "TELEGRAM", "YOUTUBE", "X")
PLATFORMS = accounts.PLATFORMS
DIRECTIONS = ("inbound", "outbound")
MESSAGE_STATUSES = ("received", "pending", "sending", "sent", "delivered", "read", "failed", "unknown")
SOURCES = ("inbox", "broadcast", "sequence", "automation")
CONVERSATION_STATUSES = ("open",)
MAX_TEXT = 4096
WATERMARK_SLACK = dt.timedelta(seconds=1)
WINDOW_MESSAGE = "The contact's last message is older than the platform's messaging window."

LIST_QUERY = {
    "platform": Str(enum=PLATFORM_FILTER, description="Upper case: INSTAGRAM, WHATSAPP, TIKTOK, TELEGRAM, "
                    "YOUTUBE or X. Anything else (lower case included) → 422."),
    "accountId": ID,
    "profileId": ID,
}
START = Obj(
    name="StartConversation",
    fields={
        "accountId": ID,
        "contactHandle": Str(min_length=1, max_length=255, description=(
            "Case-insensitive, a leading @ dropped; WhatsApp: a phone number, stored in E.164.")),
        "contactName": Str(max_length=255, nullable=True),
        "externalConversationId": Str(min_length=1, max_length=255, description=(
            "The platform's id of the contact's thread, what DMs are addressed to: the scoped user id "
            "(Instagram, Facebook), the chat id (Telegram), the wa_id (WhatsApp).")),
    },
    required=("accountId",),
)
SEND = Obj(name="SendMessage", fields={"text": Str(min_length=1, max_length=MAX_TEXT)}, required=("text",))

RECORD = record(
    "Conversation",
    {
        "id": ID,
        "accountId": ID,
        "platform": Str(enum=PLATFORMS),
        "contactHandle": Str(nullable=True, description="Normalised; null when the platform names the contact "
                             "only by a scoped id."),
        "contactName": Str(nullable=True),
        "externalConversationId": Str(nullable=True),
        "lastMessageAt": NULLABLE_INSTANT,
        "lastInboundAt": Str(format="date-time", nullable=True, description=(
            "The contact's last message: Instagram, Facebook and WhatsApp take free-form replies for 24 h after it.")),
        "unreadCount": Int(minimum=0, description="Inbound messages since the last reply."),
        "status": Str(enum=CONVERSATION_STATUSES),
        "createdAt": INSTANT,
        "updatedAt": INSTANT,
    },
)
MESSAGE = record(
    "Message",
    {
        "id": ID,
        "conversationId": ID,
        "direction": Str(enum=DIRECTIONS),
        "text": Str(nullable=True, description="Null for an inbound message without text (an attachment)."),
        "buttonLabel": Str(nullable=True),
        "buttonUrl": Str(nullable=True),
        "status": Str(enum=MESSAGE_STATUSES),
        "platformMessageId": Str(nullable=True),
        "error": Str(nullable=True),
        "source": Str(enum=SOURCES),
        "createdAt": INSTANT,
        "updatedAt": INSTANT,
    },
)


# -- hook points for other features ------------------------------------------------------------
StartedHook = Callable[[Conversation, str], None]
"""(conversation, how): how is "inbound" (the contact wrote first) or "api"."""
InboundHook = Callable[[Conversation, Message, InboundEvent], None]
"""(conversation, message, event): a contact's message was stored (event.kind tells a story reply)."""

_started_hooks: list[StartedHook] = []
_inbound_hooks: list[InboundHook] = []


def on_conversation_started(fn: StartedHook) -> StartedHook:
    """Run `fn` in the transaction that creates a conversation (sequences' `conversation_started`)."""
    _started_hooks.append(fn)
    return fn


def on_inbound_message(fn: InboundHook) -> InboundHook:
    """Run `fn` in the transaction that stores a contact's message (story replies, stop on reply)."""
    _inbound_hooks.append(fn)
    return fn


def _run_hooks(hooks: list[Any], *args: Any) -> None:
    for hook in hooks:
        try:
            with db.atomic():  # a savepoint: a failing feature does not undo the inbox's own change
                hook(*args)
        except Exception:
            log.exception("inbox hook %s failed", getattr(hook, "__qualname__", hook))


# -- records -----------------------------------------------------------------------------------
def to_record(conversation: Conversation) -> dict[str, Any]:
    return {
        "id": conversation.id,
        "accountId": conversation.account_id,
        "platform": conversation.platform,
        "contactHandle": conversation.contact_handle,
        "contactName": conversation.contact_name,
        "externalConversationId": conversation.external_conversation_id,
        "lastMessageAt": clock.iso(conversation.last_message_at),
        "lastInboundAt": clock.iso(conversation.last_inbound_at),
        "unreadCount": conversation.unread_count,
        "status": conversation.status,
        "createdAt": clock.iso(conversation.created_at),
        "updatedAt": clock.iso(conversation.updated_at),
    }


def message_record(message: Message) -> dict[str, Any]:
    return {
        "id": message.id,
        "conversationId": message.conversation_id,
        "direction": message.direction,
        "text": message.text,
        "buttonLabel": message.button_label,
        "buttonUrl": message.button_url,
        "status": message.status,
        "platformMessageId": message.platform_message_id,
        "error": message.error,
        "source": message.source,
        "createdAt": clock.iso(message.created_at),
        "updatedAt": clock.iso(message.updated_at),
    }


# -- reading -----------------------------------------------------------------------------------
def get_row(*, actor: Actor, conversation_id: str) -> Conversation:
    conversation = Conversation.get_or_none(
        Conversation.id == conversation_id, Conversation.workspace == actor.workspace_id
    )
    if conversation is None:
        raise NotFound("No conversation with that id.")
    actor.require_profile(conversation.profile_id)
    return conversation


def get_conversation(*, actor: Actor, conversation_id: str) -> dict[str, Any]:
    return to_record(get_row(actor=actor, conversation_id=conversation_id))


def list_conversations(
    *,
    actor: Actor,
    platform: str | None = None,
    accountId: str | None = None,
    profileId: str | None = None,
    page: int | None = None,
    limit: int | None = None,
) -> Page:
    """The workspace's conversations, newest `lastMessageAt` first (a conversation without messages
    yet sorts by its creation). `platform` is the upper-case filter of the contract."""
    profile_ids = None if actor.profile_ids is None else tuple(sorted(actor.profile_ids))
    if profileId is not None:
        actor.require_profile(profileId)
        profile_ids = (profileId,)
    if accountId is not None and actor.profile_ids is not None:
        account = Account.get_or_none(Account.id == accountId, Account.workspace == actor.workspace_id)
        if account is not None:
            actor.require_profile(account.profile_id)
    filters = hot_inbox.Filters(
        workspace_id=actor.workspace_id,
        profile_ids=profile_ids,
        account_id=accountId,
        platform=platform.lower() if platform is not None else None,
    )
    page, limit = page or 1, limit or DEFAULT_LIMIT
    total = hot_inbox.total(filters)
    offset = (page - 1) * limit
    rows = hot_inbox.page(filters, limit=limit, offset=offset) if offset < total else []
    return Page([_row_record(row) for row in rows], page, limit, total)


def _row_record(row: tuple[Any, ...]) -> dict[str, Any]:
    """`to_record` of a `hot_inbox.page` row (same fields, same order)."""
    (id_, account_id, platform, handle, name, external_id, last_message_at, last_inbound_at, unread, status,
     created_at, updated_at) = row
    iso = hot_inbox.iso
    return {
        "id": id_,
        "accountId": account_id,
        "platform": platform,
        "contactHandle": handle,
        "contactName": name,
        "externalConversationId": external_id,
        "lastMessageAt": iso(last_message_at),
        "lastInboundAt": iso(last_inbound_at),
        "unreadCount": unread,
        "status": status,
        "createdAt": iso(created_at),
        "updatedAt": iso(updated_at),
    }


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
    return paginate(query, page=page, limit=limit, render=message_record)


# -- starting ----------------------------------------------------------------------------------
@dataclass(frozen=True)
class Started:
    conversation: dict[str, Any]
    created: bool  # False: the contact already had this conversation (200 rather than 201)


def start_conversation(
    *,
    actor: Actor,
    accountId: str,
    contactHandle: str | None = None,
    contactName: str | None = None,
    externalConversationId: str | None = None,
) -> Started:
    """Open the conversation with a contact on an account, or return the one it already has (same
    `externalConversationId`, or same normalised `contactHandle`). Safe under concurrent calls."""
    if contactHandle is None and externalConversationId is None:
        message = "is required when externalConversationId is not given"
        raise ValidationFailed(
            "Give contactHandle or externalConversationId.",
            details=[FieldProblem("contactHandle", message),
                     FieldProblem("externalConversationId", "is required when contactHandle is not given")],
        )
    account = accounts.get_row(actor=actor, account_id=accountId)
    actor.require_write()
    handle = None
    if contactHandle is not None:
        try:
            handle = normalise_handle(account.platform, contactHandle)
        except InvalidHandle as problem:
            raise ValidationFailed.field("contactHandle", str(problem)) from None
    if account.status != "connected":
        raise Conflict("The account is disconnected.")
    conversation, created = _find_or_create(
        account, external_id=externalConversationId, handle=handle, name=contactName, from_contact=False
    )
    if created:
        _announce_started(conversation, "api")
    return Started(to_record(conversation), created)


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
        return query.first()
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
    events.emit(workspace_id=conversation.workspace_id, type="conversation.started", data=to_record(conversation))
    _run_hooks(_started_hooks, conversation, how)


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
    hot.run(_TOUCH_OUTBOUND, (at, at, at, at, clock.now(), conversation_id))


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
        created_at=at, updated_at=moment,
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
    events.emit(workspace_id=account.workspace_id, type="message.received", data=message_record(message))
    _run_hooks(_inbound_hooks, conversation, message, event)


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
    conversation, created = _find_or_create(
        account, external_id=event.contact_id, handle=None, name=None, from_contact=True
    )
    at = _naive_utc(event.occurred_at)
    message = Message.create(
        id=ids.new_id("msg"), conversation=conversation.id, direction="outbound", text=event.text,
        status="sent", platform_message_id=event.platform_message_id, source="inbox",
        created_at=at, updated_at=clock.now(),
    )
    touch_outbound(conversation.id, at)
    if created:
        _announce_started(Conversation.get_by_id(conversation.id), "inbound")
    events.emit(workspace_id=account.workspace_id, type="message.sent", data=message_record(message))


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
        events.emit(workspace_id=account.workspace_id, type="message.failed", data=message_record(row))


# -- permanent deletion of an account ----------------------------------------------------------
def delete_for_account(account_id: str) -> int:
    """Delete an account's conversations and their messages; how many conversations went."""
    threads = Conversation.select(Conversation.id).where(Conversation.account == account_id)
    Message.delete().where(Message.conversation.in_(threads)).execute()
    ConversationCount.delete().where(ConversationCount.account == account_id).execute()
    return int(Conversation.delete().where(Conversation.account == account_id).execute())



# What the inbox does with each kind of platform event; the composition root installs them.
INBOUND_HANDLERS: dict[tuple[str, ...], Any] = {
    ("message", "story_reply", "postback"): contact_wrote,
    ("echo",): reply_written_elsewhere,
    ("delivery", "read", "failed"): receipt,
}
