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

Features that queued a message learn its outcome through `on_finish` listeners (installed by the
composition root): each runs in the transaction that moves the message to `sent`, `failed` or
`unknown`, so what they keep (a broadcast recipient and its counts) moves with it or not at all. A
`sent` outcome may instead carry a feature's rider statement, which runs with the outcome itself.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import logging
import time
from dataclasses import dataclass
from typing import Any

from kit import clock, ids, settings
from kit.errors import Conflict, FieldProblem, PlatformError, ValidationFailed
from kit.shapes import button_problems
from platforms.base import (
    Button,
    MediaItem,
    PlatformFailure,
    RetryLater,
    SentMessage,
)
from service.accounts import adapters
from service.common import events, idempotency, signals
from service.common.signals import MessageFinished
from service.engine import core as engine
from service.engine.outcomes import Policy
from service.identity.auth import Actor
from service.inbox import pacer
from service.inbox.conversations import WINDOW_MESSAGE, get_row, touch_outbound_statement
from service.inbox.shapes import Message as MessageRecord
from service.inbox.shapes import message_record
from storage.db import connection, db, is_postgres, reading
from storage.hot import columns, from_row, insert_shared
from storage.models import Account, Conversation, Media, Message

log = logging.getLogger("switchboard.outbound")

# A platform that keeps asking to slow down gets this many attempts before the message fails.
MAX_ATTEMPTS = 12
# How long a worker thread sleeps for the account's next slot before handing the row back.
WORKER_MAX_WAIT = 1.0
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


def lease_seconds() -> float:
    return settings.current().send_lease_seconds


LOST_ERROR = ("The process sending this message stopped during the platform call; it may or may not have "
              "arrived, so it is not sent again automatically.")


def _lost(message_ids: list[str]) -> None:
    """The sweeper found these `sending` past their lease: say why they are `unknown`."""
    Message.update(error=LOST_ERROR).where(Message.id.in_(message_ids)).execute()
    log.warning("%d outbound message(s) left unknown by a stopped worker", len(message_ids))
    if signals.message_finished:
        moment = clock.now()
        for row in Message.select(Message.id, Message.source).where(Message.id.in_(message_ids)):
            signals.message_finished.send(MessageFinished(row.id, row.source, "unknown", moment, LOST_ERROR))


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


# -- one attempt -----------------------------------------------------------------------------------
@dataclass(frozen=True)
class _Loaded:
    message: Message
    conversation: Conversation
    account: Account


def _load(found: engine.Claim) -> _Loaded | None:
    """The claimed message (from the claim's own `RETURNING`) with its conversation and account (read
    with the claim, `_JOINED`): one statement a message on PostgreSQL, where a read of each row
    before the claim was three. Each row has only the columns a send reads (`MESSAGE_COLUMNS` and those after it)."""
    message = from_row(Message, [found.columns[name] for name in MESSAGE_COLUMNS], MESSAGE_COLUMNS)
    split = len(CONVERSATION_COLUMNS)
    if found.joined[0] is None or found.joined[split] is None:
        return None
    return _Loaded(message, from_row(Conversation, found.joined[:split], CONVERSATION_COLUMNS),
                   from_row(Account, found.joined[split:], ACCOUNT_COLUMNS))


def send(message_id: str, *, max_wait: float = WORKER_MAX_WAIT) -> None:
    """One attempt at one message, if it is due and free. Call outside any transaction: the pace
    may make it wait (at most `max_wait`, else the row is handed back for later) and the platform
    call may take seconds."""
    with connection():
        owed = _attempt(message_id, max_wait=max_wait, owed=None, chain=False)
    assert owed is None


def send_group(message_ids: list[str]) -> None:
    """`send` for each of a task's messages in turn, one message's fault kept from the rest.

    On PostgreSQL a sent message's outcome (with its conversation's touch, its event and its riders)
    is written by the statement that claims the group's next message (`engine.finish_and_claim`):
    one round trip and one commit a message fewer, each a wait for another process. It is not held
    back: that statement runs as soon as the call has answered, as a `finish` of its own would."""
    chain = is_postgres()
    owed: _SentOutcome | None = None
    with connection():
        for message_id in message_ids:
            try:
                owed = _attempt(message_id, max_wait=WORKER_MAX_WAIT, owed=owed, chain=chain)
            except Exception:  # one message's fault must not drop the rest of the group
                owed = None  # written by then, or written alone after the statement failed (`_take`)
                log.exception("message %s failed; the sweeper will hand it out again", message_id)
        if owed is not None:
            _record_sent(owed)


@dataclass(frozen=True)
class _SentOutcome:
    """A sent message's outcome, to be written with the next claim (`send_group`) or alone."""

    found: engine.Claim
    platform_message_id: str
    at: dt.datetime
    also: tuple[engine.Also, ...]  # the conversation's touch, the `message.sent` event, the riders
    done: MessageFinished


def _attempt(message_id: str, *, max_wait: float, owed: _SentOutcome | None, chain: bool) -> _SentOutcome | None:
    """Claim the message (writing `owed` with the claim), take its pace's slot, call the platform and
    settle the outcome; with `chain`, a sent outcome that can wait for the next claim is returned
    instead of written. In the caller's `connection()`."""
    # The claim comes first: it decides whether the row is due and free, so a duplicate task (a
    # nudge and a sweep for one row) costs one statement, and the message's columns come back with
    # it. Then the account's slot: a duplicate that finds the row claimed takes none, and a slot too
    # far off hands the claim back unused (the row waits, its attempt unspent). On PostgreSQL each
    # statement commits on its own (BEGIN and COMMIT would be two more round trips); on SQLite they
    # share one short write transaction, since a writer outside one would skip the process's
    # turn-taking lock (`SerialisedSqliteDatabase`).
    with contextlib.nullcontext() if is_postgres() else db.atomic():
        found = _take(message_id, owed)
        if found is None:
            return None
        loaded = _load(found)
        if loaded is None:  # its conversation went away in between (deleted with its messages)
            engine.release(found)
            return None
        per_second = adapters.adapter(loaded.account.platform).capabilities.messages_per_second
        slot = pacer.reserve(loaded.account.id, per_second, max_wait=max_wait)
        if not slot.granted:
            engine.release(found, until=clock.now() + dt.timedelta(seconds=slot.wait))
            return None
    if slot.wait > 0:
        time.sleep(slot.wait)
    outcome = _call_platform(loaded)
    if isinstance(outcome, SentMessage) and is_postgres() and not signals.message_finished.listens(
            loaded.message.source, "sent"):
        # No receiver follows this message's sending (an inbox reply; a broadcast's recipient
        # rides along as a statement): the outcome, the conversation's touch, the event and the
        # riders are one statement, atomic by itself, instead of a transaction of four round trips.
        sent = _sent(found, loaded, outcome)
        if chain:
            return sent
        _record_sent(sent)
        return None
    with db.atomic():
        _finish(found, loaded, outcome)
    return None


def _take(message_id: str, owed: _SentOutcome | None) -> engine.Claim | None:
    """The message's claim, with `owed`'s outcome written in the same statement."""
    if owed is None:
        return engine.claim(MESSAGE_WORK, message_id, joined=_JOINED)
    try:
        held, found = engine.finish_and_claim(owed.found, message_id, joined=_JOINED, status="sent", at=owed.at,
                                              also=owed.also, platform_message_id=owed.platform_message_id,
                                              error=None)
    except Exception:
        # The outcome of a message that reached its person is not lost with a statement that failed
        # for the next message's sake: it is written alone, and the next message's fault goes on.
        _record_sent(owed)
        raise
    try:
        _after_sent(owed, held)
    except Exception:  # the claim just made must not be dropped: the tick dispatches the event anyway
        log.exception("message %s: its sent outcome was recorded, its announcement failed", owed.found.id)
    return found


def _call_platform(loaded: _Loaded) -> SentMessage | PlatformFailure | Conflict:
    conversation, message = loaded.conversation, loaded.message
    recipient = conversation.external_conversation_id or conversation.contact_handle or ""
    button = Button(message.button_label, message.button_url) if message.button_label and message.button_url else None
    text = message.text or ""
    template = message.template
    try:
        comment_id = message.comment_id
        if comment_id:
            return adapters.call(loaded.account, lambda adapter, ctx: adapter.private_reply(
                ctx, comment_id=comment_id, text=text, button=button))
        if message.media_ids:
            (item,) = attachments(message.media_ids)  # one a message (`dm_max_media`), checked when queued
            return adapters.call(loaded.account, lambda adapter, ctx: adapter.send_dm_media(
                ctx, recipient=recipient, text=text, media=item, button=button))
        if template:
            return adapters.call(loaded.account, lambda adapter, ctx: adapter.send_template(
                ctx, recipient=recipient, name=template["name"], language=template["language"],
                parameters=list(template.get("parameters") or []),
                header_media_url=template.get("header_media_url"),
                button_parameters=list(template.get("button_parameters") or []),
                header_text=template.get("header_text")))
        return adapters.call(
            loaded.account,
            lambda adapter, ctx: adapter.send_dm(ctx, recipient=recipient, text=text, button=button),
        )
    except PlatformFailure as failure:
        return failure
    except Conflict as conflict:  # disconnected between the pending row and the call
        return conflict


def _finish(found: engine.Claim, loaded: _Loaded, outcome: SentMessage | PlatformFailure | Conflict) -> None:
    message, conversation = loaded.message, loaded.conversation
    if isinstance(outcome, SentMessage):
        _record_sent(_sent(found, loaded, outcome))
        return
    moment = clock.now()
    if isinstance(outcome, RetryLater):
        pacer.pause(loaded.account.id, outcome.delay_seconds)
    step = engine.fail(found, outcome, at=moment)
    if step is None or step.again:
        return
    if step.status == "unknown":
        signals.message_finished.send(MessageFinished(message.id, message.source, "unknown", moment, step.error))
        return
    _announce(message, conversation, "message.failed", status="failed", at=moment, error=step.error)
    signals.message_finished.send(MessageFinished(message.id, message.source, "failed", moment, step.error))


def _sent(found: engine.Claim, loaded: _Loaded, outcome: SentMessage) -> _SentOutcome:
    """A sent outcome as statements: the row's, the conversation's touch, the event and the riders."""
    message, conversation = loaded.message, loaded.conversation
    moment = clock.now()
    done = MessageFinished(message.id, message.source, "sent", moment, None)
    event = _event(message, conversation, "message.sent", status="sent", at=moment,
                   platform_message_id=outcome.platform_message_id, error=None)
    riders = tuple(engine.Also(sql, params) for sql, params in signals.message_finished.riding(done))
    return _SentOutcome(found, outcome.platform_message_id, moment,
                        (touch_outbound_statement(conversation.id, moment), event, *riders), done)


def _record_sent(sent: _SentOutcome) -> None:
    # The claim waited for the disk; the outcome need not (`wait_for_flush`): should the database
    # server lose it in a crash, the row is `sending` again and its lease makes it `unknown`.
    held = engine.finish(sent.found, status="sent", at=sent.at, platform_message_id=sent.platform_message_id,
                         error=None, also=sent.also, wait_for_flush=False)
    _after_sent(sent, held)


def _after_sent(sent: _SentOutcome, held: bool) -> None:
    """Once a sent outcome is written: the outbox hears of its event, the message's listeners of it."""
    if held:
        events.emitted()
        signals.message_finished.send(sent.done)


def _announce(message: Message, conversation: Conversation, event_type: str, *, at: dt.datetime,
              **changes: Any) -> None:
    """The event of an outcome, with the row as `finish` just wrote it (no second read)."""
    events.emit(workspace_id=conversation.workspace_id, type=event_type,
                data=_record(message, at=at, **changes))


def _event(message: Message, conversation: Conversation, event_type: str, *, at: dt.datetime,
           **changes: Any) -> engine.Also:
    """`_announce` as a statement that rides with the outcome (`engine.finish(also=...)`)."""
    sql, params = events.emit_statement(workspace_id=conversation.workspace_id, type=event_type,
                                        data=_record(message, at=at, **changes), at=at)
    return engine.Also(sql, params)


def _record(message: Message, *, at: dt.datetime, **changes: Any) -> dict[str, Any]:
    for name, value in changes.items():
        setattr(message, name, value)
    message.updated_at = at
    return message_record(message)


# At most once: a message reaches a person, so one whose send had no answer is never sent again.
MESSAGE_POLICY = Policy(
    retry_status="pending", failed_status="failed", lost_status="unknown", max_attempts=MAX_ATTEMPTS,
    lost_text="No answer from the platform: {message}. It may or may not have arrived, so it is not sent again.",
)

# The columns a send reads of its message (its record: `_record`), of the message's conversation
# (the recipient, the touch, the event's workspace) and of its account (`adapters.call`: the
# platform, its status and credentials, and what a refresh or the reauth flag writes), and no more:
# on PostgreSQL every column of a result costs its sender ~4,000 instructions (psycopg2 decodes each
# column's name through Python's codec) and a timestamp ~5,000 more, on SQLite a datetime's
# conversion. Another column read in the send path must be added here: it reads None otherwise (in
# tests it raises: `storage.hot.strict_partial_rows`).
MESSAGE_COLUMNS = tuple(name for name in columns(Message)
                        if name not in ("attempts", "next_attempt_at", "claimed_until", "claim_token", "nudged_at"))
CONVERSATION_COLUMNS = ("id", "workspace_id", "profile_id", "account_id", "platform", "contact_handle",
                        "external_conversation_id")
ACCOUNT_COLUMNS = ("id", "workspace_id", "profile_id", "platform", "platform_account_id", "status", "needs_reauth",
                   "credentials")
# The message's conversation and account, read with its claim (`_load`).
_JOINED = engine.Joined(
    columns=", ".join([*(f'c."{name}"' for name in CONVERSATION_COLUMNS),
                       *(f'a."{name}"' for name in ACCOUNT_COLUMNS)]),
    joins=(f'LEFT JOIN "{Conversation._meta.table_name}" AS c ON c."id" = claimed."conversation_id" '
           f'LEFT JOIN "{Account._meta.table_name}" AS a ON a."id" = c."account_id"'),
)

MESSAGE_WORK = engine.Kind(
    name="outbound_message", table="message", ready=("pending",), in_flight="sending", lost="unknown",
    on_lost=_lost, run=send, run_group=send_group, lease_seconds=lease_seconds, policy=MESSAGE_POLICY,
    returning=MESSAGE_COLUMNS,
    due_indexed=True,  # migration 24: a claim of a message is a heap-only update on PostgreSQL
)


# -- the inbox's reply -----------------------------------------------------------------------------
@dataclass(frozen=True)
class Sent:
    record: MessageRecord
    status: int  # 201 sent, 202 pending (or in someone else's hands)


def attachments(media_ids: list[str]) -> list[MediaItem]:
    """The attachments of a message as the platform fetches them (the signed public URLs)."""
    from service.media import ops as media

    rows = {row.id: row for row in Media.select().where(Media.id.in_(media_ids))}
    return [MediaItem(media.public_url(rows[m].id), rows[m].content_type, rows[m].size) for m in media_ids if m in rows]


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
    return settle(message.id)


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
        raise PlatformError(f"The platform refused the message: {message.error}")
    # `pending` (the pace or the platform said wait), `sending` (still in someone's hands) or
    # `unknown`: the workers and the sweeper take it from here.
    status = 201 if message.status in ("sent", "delivered", "read") else 202
    return Sent(MessageRecord.model_validate(message), status)
