"""Outbound direct messages: work rows of the engine, sent to a person at most once.

A message is stored `pending` in the transaction of whatever wants it sent (an inbox reply; later a
broadcast recipient, a sequence step, an automation's DM). From there:

    pending ──(the account's pace gives a slot; one conditional UPDATE claims it)──> sending
    sending ──> sent     the platform's id recorded; a row with an id is never sent again
            ──> failed   the platform refused (its reason kept); refused credentials flag the account
            ──> pending  the platform asked to slow down (`RetryLater`): the account's pace pauses for
                         everyone and the row waits for its next attempt; never `failed` for that
            ──> unknown  the request went out and no answer came, or the process died during the
                         call (the lease expired while `sending`): it may have arrived, so it is
                         never sent again automatically; a person decides

A message may be a private reply (a comment automation's DM): it carries the `comment_id` it answers
and goes through the platform's private-reply call, addressed by that comment rather than by the
contact, within the platform's days for it instead of the 24 h window; one per comment.

A late answer still counts: a call that outlives its lease and then succeeds moves `unknown` to
`sent`. Events (`message.sent`, `message.failed`) are written in the transaction of the change.
This module queues messages and answers the inbox's reply; what the engine runs for one (claim,
pace, call, outcome by `MESSAGE_POLICY`) is in work.py.

Features that queued a message learn its outcome through `on_finish` listeners (installed by the
composition root): each runs in the transaction that moves the message to `sent`, `failed` or
`unknown`, so what they keep (a broadcast recipient and its counts) moves with it or not at all. A
`sent` outcome may instead carry a feature's rider statement, which runs with the outcome itself.
"""

from __future__ import annotations

import datetime as dt
import logging
import time
from dataclasses import dataclass
from typing import Any

from kit import clock, ids
from kit.errors import Conflict, FieldProblem, PlatformError, ValidationFailed
from kit.shapes import button_problems
from platforms.base import (
    Button,
)
from service.accounts import adapters
from service.common import audit, idempotency
from service.engine import core as engine
from service.identity.auth import Actor
from service.inbox import saved_replies
from service.inbox.conversations import WINDOW_MESSAGE, get_row
from service.inbox.shapes import Message as MessageRecord
from service.inbox.work import MESSAGE_WORK, send
from storage.db import connection, db, reading
from storage.hot import insert_shared
from storage.models import Account, Conversation, Media, Message

log = logging.getLogger("switchboard.outbound")

# How long an API request waits for its message: for the pace's slot, and for the send of a
# message that another worker holds.
API_MAX_WAIT = 2.0
API_SETTLE_SECONDS = 5.0
SETTLE_POLL = 0.05


def within_window(conversation: Conversation, *, at: dt.datetime | None = None) -> bool:
    """False when the platform has a messaging window (Meta's 24 h) and the contact's last message
    is older than it, or the contact never wrote: free-form messages would be refused."""
    hours = adapters.adapter(conversation.platform).capabilities.messaging_window_hours
    if hours is None:
        return True
    if conversation.last_inbound_at is None:
        return False
    return (at or clock.now()) - conversation.last_inbound_at < dt.timedelta(hours=hours)


# Instagram and Facebook take one private reply per comment, within 7 days of the comment.
PRIVATE_REPLY_WINDOW = dt.timedelta(days=7)
PRIVATE_REPLY_WINDOW_MESSAGE = "The comment is older than the 7 days in which the platform takes a private reply."


def _check_sendable(account: Account, *, text: str | None, template: dict[str, Any] | None) -> None:
    """What refuses a message to any contact of the account: a disconnected account (`Conflict`), a
    platform without DMs, text over its limit, a template where there are none (`ValidationFailed`)."""
    if account.status != "connected":
        raise Conflict("The account is disconnected.")
    if (text is None) == (template is None):
        raise ValidationFailed("Give text, or a template.", details=[
            FieldProblem("text", "give text or template, not both" if text else "is required without template")])
    capabilities = adapters.adapter(account.platform).capabilities
    if not capabilities.dm:
        raise ValidationFailed(f"{account.platform} has no direct messages.")
    if adapters.grant_states(account).get("messaging", "connected") != "connected":
        # TikTok: messaging is a separate grant, connected as a second step (its publishing works without).
        raise Conflict(f"The {account.platform} account's messaging grant is not connected: connect it with "
                       f"GET /v1/connect/{account.platform}/{account.id}/grants/messaging.",
                       code="messaging_grant_required")
    if template is not None:
        if not capabilities.templates:
            raise ValidationFailed.field("template", f"only WhatsApp has message templates, not {account.platform}")
    else:
        assert text is not None
        if capabilities.dm_text_limit is not None and len(text) > capabilities.dm_text_limit:
            raise ValidationFailed.field("text", f"must be at most {capabilities.dm_text_limit} characters on "
                                                 f"{account.platform}")


def queue_outbound(
    conversation: Conversation,
    account: Account,
    *,
    text: str | None = None,
    template: dict[str, Any] | None = None,
    button: Button | None = None,
    source: str = "inbox",
    nudge: bool = True,
    comment_id: str | None = None,
    comment_at: dt.datetime | None = None,
    media_ids: list[str] | None = None,
) -> Message:
    """Check that the platform would take the message now and store it `pending`, in the caller's
    transaction; the engine sends it once that commits. Disconnected account → `Conflict`; no DMs
    on the platform, text over its limit or outside its messaging window → `ValidationFailed`.

    `nudge=False` when the caller sends it itself at once (`settle`). Either way the row is marked as
    in hand (`nudged_at`), so the sweeper leaves it alone for a lease unless its task or caller is
    lost: a backlog still waiting in the queue after a tick would otherwise be handed out twice.

    `comment_id` makes it a private reply to that comment (made at `comment_at`): the platform must
    take private replies, and the comment's 7 days replace the messaging window. A second private
    reply to the same comment breaks the message table's unique index (`IntegrityError`).
    """
    _check_sendable(account, text=text, template=template)
    if template is None:
        capabilities = adapters.adapter(account.platform).capabilities
        if comment_id is not None:
            if not capabilities.private_replies:
                raise ValidationFailed(f"{account.platform} has no private replies to comments.")
            if comment_at is not None and clock.now() - comment_at >= PRIVATE_REPLY_WINDOW:
                raise ValidationFailed(PRIVATE_REPLY_WINDOW_MESSAGE, code="outside_messaging_window")
        # Outside the window only an approved template reaches the contact.
        elif not within_window(conversation):
            raise ValidationFailed(WINDOW_MESSAGE, code="outside_messaging_window")
    moment = clock.now()
    message = Message.create(
        id=ids.new_id("msg"), conversation=conversation.id, direction="outbound", text=text, template=template,
        button_label=button.label if button else None, button_url=button.url if button else None,
        status="pending", source=source, comment_id=comment_id, media_ids=media_ids or None, attempts=0,
        next_attempt_at=moment,
        nudged_at=moment, created_at=moment, updated_at=moment,
    )
    if nudge:
        engine.nudge_after_commit(MESSAGE_WORK, [message.id])
    return message


def queue_outbound_many(
    conversations: list[Conversation], account: Account, *, text: str | None, button: Button | None = None,
    source: str, at: dt.datetime | None = None, template: dict[str, Any] | None = None,
) -> list[str]:
    """`queue_outbound` of one text to many conversations of one account (a broadcast's chunk): the
    same checks, the account's once, and one INSERT. Every conversation must be within the window
    (the caller checks with `within_window` first). The rows are marked as in hand: the caller
    nudges their ids after commit, in groups (`engine.nudge_after_commit`), never one task each."""
    _check_sendable(account, text=text, template=template)
    moment = at or clock.now()  # the moment the caller checked the window at
    # A template reaches contacts outside the window; text does not.
    if template is None and not all(within_window(conversation, at=moment) for conversation in conversations):
        raise ValidationFailed(WINDOW_MESSAGE, code="outside_messaging_window")
    message_ids = [ids.new_id("msg") for _ in conversations]
    # One statement with the shared values converted once: peewee's `insert_many` built its SQL value
    # by value, more CPU than the database's own work for the chunk.
    insert_shared(Message, {
        "direction": "outbound", "text": text, "template": template,
        "button_label": button.label if button else None, "button_url": button.url if button else None,
        "status": "pending", "source": source, "attempts": 0, "next_attempt_at": moment,
        "nudged_at": moment, "created_at": moment, "updated_at": moment,
    }, ("id", "conversation"), [(message_id, conversation.id)
                                for message_id, conversation in zip(message_ids, conversations, strict=True)])
    return message_ids


# -- the inbox's reply -----------------------------------------------------------------------------
@dataclass(frozen=True)
class Sent:
    record: MessageRecord
    status: int  # 201 sent, 202 pending (or in someone else's hands)


def _check_extras(actor: Actor, account: Account, *, text: str | None, template: Any, button: Button | None,
                  media_ids: list[str]) -> None:
    """A reply's button and attachments, by the platform's capabilities (422 naming the field)."""
    problems = button_problems(button.label if button else None, button.url if button else None)
    if template is not None and (button is not None or media_ids):
        problems.append(FieldProblem("template", "a template message takes no button or attachments"))
    capabilities = adapters.adapter(account.platform).capabilities
    if media_ids:
        kinds = capabilities.dm_media
        found = {row.id: row for row in Media.select().where(
            Media.id.in_(media_ids), Media.workspace == actor.workspace_id, Media.status == "complete")}
        if not kinds:
            problems.append(FieldProblem("mediaIds", f"{account.platform} direct messages take no attachments "
                                                     "here (Telegram and WhatsApp do)"))
        elif len(media_ids) > capabilities.dm_max_media:
            problems.append(FieldProblem("mediaIds", f"a {account.platform} message carries at most "
                                                     f"{capabilities.dm_max_media} attachment(s)"))
        for index, media_id in enumerate(media_ids):
            row = found.get(media_id)
            if row is None:
                problems.append(FieldProblem(f"mediaIds[{index}]", "is not a completed media of this workspace"))
            elif kinds and row.content_type.split("/")[0] not in kinds:
                problems.append(FieldProblem(f"mediaIds[{index}]", f"{account.platform} takes "
                                             f"{' and '.join(kinds)} attachments, not {row.content_type}"))
        limit = capabilities.dm_caption_limit
        if kinds and limit is not None and text is not None and len(text) > limit:
            problems.append(FieldProblem("text", f"must be at most {limit} characters as the caption of an "
                                                 f"attachment on {account.platform}"))
    if problems:
        raise ValidationFailed("Some fields are not valid.", details=problems)


def send_message(
    *, actor: Actor, conversation_id: str, text: str | None = None, template: Any = None,
    button_label: str | None = None, button_url: str | None = None, media_ids: list[str] | None = None,
    saved_reply_id: str | None = None,
) -> Sent:
    """Reply to a contact from the inbox, and wait a little for the platform's answer.

    201 with the sent message and its `platformMessageId`; 202 `pending` when the platform asked to
    slow down (the worker sends it later, `message.sent` or `message.failed` follows); the platform
    refused → 502 and the message stays `failed`. A disconnected account → 409; outside the
    platform's messaging window → 422 `outside_messaging_window` before any call. Runs its own
    transactions (it waits on the platform). Under an `Idempotency-Key`, the message is tied to the
    key in the transaction that creates it: a retry finds it (`settle`) instead of sending another.
    """
    with db.atomic():
        conversation = get_row(actor=actor, conversation_id=conversation_id)
        actor.require_write()
        account = Account.get_by_id(conversation.account_id)
        if saved_reply_id is not None:
            if text is not None or template is not None:
                raise ValidationFailed.field("savedReplyId", "give a saved reply or text, not both")
            text = saved_replies.render(actor=actor, reply_id=saved_reply_id, conversation=conversation,
                                        account=account)
        if template is not None and not isinstance(template, dict):
            template = template.model_dump()  # the request's shape: name, language, parameters
        if (button_label is None) != (button_url is None):
            raise ValidationFailed("Some fields are not valid.", details=button_problems(button_label, button_url))
        button = Button(button_label, button_url) if button_label and button_url else None
        media_ids = list(media_ids or [])
        _check_extras(actor, account, text=text, template=template, button=button, media_ids=media_ids)
        message = queue_outbound(conversation, account, text=text, template=template, button=button, source="inbox",
                                 nudge=False, media_ids=media_ids)
        idempotency.attach(message.id)
        audit.record(actor, "message.sent", target=("message", message.id),
                     details={"conversationId": conversation.id})
    return settle(message.id)


def _grant_lapsed(message: Message) -> bool:
    """Whether the message failed because its account's messaging grant lapsed (TikTok's): the
    person connects that grant again, nothing is wrong with the platform."""
    with connection(), reading():
        account = Account.select().join(Conversation, on=(Conversation.account == Account.id)).where(
            Conversation.id == message.conversation_id).get_or_none()
    return account is not None and adapters.grant_states(account).get("messaging") == "lapsed"


def settle(message_id: str) -> Sent:
    """Send the message now if it is free and due, else wait a few seconds for whoever holds it;
    answer with where it stands."""
    send(message_id, max_wait=API_MAX_WAIT)
    deadline = time.monotonic() + API_SETTLE_SECONDS
    while True:
        with connection(), reading():
            message = Message.get_by_id(message_id)
        if message.status != "sending" or time.monotonic() >= deadline:
            break
        time.sleep(SETTLE_POLL)
    if message.status == "failed":
        if _grant_lapsed(message):
            raise Conflict(f"The message failed: {message.error}.", code="messaging_grant_required")
        raise PlatformError(f"The platform refused the message: {message.error}")
    # `pending` (the pace or the platform said wait), `sending` (still in someone's hands) or
    # `unknown`: the workers and the sweeper take it from here.
    status = 201 if message.status in ("sent", "delivered", "read") else 202
    return Sent(MessageRecord.model_validate(message), status)
