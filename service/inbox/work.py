"""The inbox's kinds of work for the engine: outbound messages (`MESSAGE_WORK`), contacts' profile
lookups (`LOOKUP_WORK`) and inbox polls (`POLL_WORK`), each with its outcome policy.

What the engine runs for a message lives here: claim it (with its conversation and account), take
the account's pace's slot, call the platform outside any transaction, and settle the outcome by
`MESSAGE_POLICY` (the life of a message is drawn in outbound.py, which queues them). A profile
lookup reads a contact's name from the platform (armed by profiles.py when a contact writes); a poll
reads an inbox that no webhook brings (polling.py).
"""

from __future__ import annotations

import contextlib
import datetime as dt
import logging
import time
from dataclasses import dataclass
from typing import Any, Literal

from peewee import IntegrityError

from kit import clock
from kit.errors import Conflict
from kit.settings import Settings
from platforms.base import Button, MediaItem, PlatformFailure, RetryLater, SentMessage
from service.accounts import adapters
from service.common import events, signals
from service.common.signals import MessageFinished
from service.engine import core as engine
from service.engine.outcomes import Policy
from service.inbox import pacer, polling
from service.inbox.contacts import normalise_inbound_handle
from service.inbox.conversations import touch_outbound_statement
from service.inbox.shapes import message_record
from service.media import ops as media
from storage.db import connection, db, is_postgres
from storage.hot import columns, from_row
from storage.models import Account, Conversation, Media, Message
from storage.requests import outcome_written

log = logging.getLogger("switchboard.outbound")

# A platform that keeps asking to slow down gets this many attempts before the message fails.
MAX_ATTEMPTS = 12
# How long a worker thread sleeps for the account's next slot before handing the row back.
WORKER_MAX_WAIT = 1.0


def lease_seconds(settings: Settings) -> float:
    # One platform call (a few for a media message); past it, a `sending` row becomes `unknown`.
    return settings.send_lease_seconds


# How long a message waits when the pace store (Redis) could not give it a slot.
PACE_UNAVAILABLE_DELAY = dt.timedelta(seconds=2)


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


# -- one message's attempt ---------------------------------------------------------------------------
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
            outcome_written(lambda: _record_sent(owed))


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
        try:
            slot = pacer.reserve(loaded.account.id, per_second, max_wait=max_wait)
        except Exception:
            # No slot (Redis dropped or stalled): the platform was not called, so the claim goes back
            # unused and the message waits. Kept, the claim ran out its lease with the worker alive
            # and the message became `unknown` ("stopped during the platform call") unsent.
            engine.release(found, until=clock.now() + PACE_UNAVAILABLE_DELAY)
            log.warning("message %s: no pace slot (the pace store is unreachable); it waits", message_id,
                        exc_info=True)
            return None
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
        outcome_written(lambda: _record_sent(sent))
        return None

    def write() -> None:
        with db.atomic():
            _finish(found, loaded, outcome)

    # The platform answered: its answer is written even through a database restart, or the lease
    # would make the message `unknown` though this worker knows what became of it.
    outcome_written(write)
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
        outcome_written(lambda: _record_sent(owed))
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
        try:
            pacer.pause(loaded.account.id, outcome.delay_seconds)
        except Exception:  # the pace store is unreachable: the outcome must still be written
            log.warning("account %s: its pause could not be recorded", loaded.account.id, exc_info=True)
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


def attachments(media_ids: list[str]) -> list[MediaItem]:
    """The attachments of a message as the platform fetches them (the signed public URLs)."""
    rows = {row.id: row for row in Media.select().where(Media.id.in_(media_ids))}
    return [MediaItem(media.public_url(rows[m].id), rows[m].content_type, rows[m].size) for m in media_ids if m in rows]


# -- contacts' profiles -------------------------------------------------------------------------
# A lookup that cannot get an answer is tried this many times, waiting these seconds between; a
# refusal, or the last attempt, leaves the contact as it was until they write after a long silence.
LOOKUP_MAX_ATTEMPTS = 3
LOOKUP_BACKOFF_SECONDS = (30.0, 300.0)
log_lookups = logging.getLogger("switchboard.inbox")

LookupOutcome = Literal["named", "unchanged", "later", "refused", "gone"]


def look_up(lookup_id: str) -> LookupOutcome | None:
    """The engine's run of one armed lookup: None when it was not ours to run. A failure goes as
    `LOOKUP_POLICY` says; one that ends the lookup leaves the contact as it was, not looked up again
    until they write after the next long silence."""
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
        except (PlatformFailure, Conflict) as failure:
            with db.atomic():
                step = engine.fail(found, failure)
                if step is None or step.again:
                    return "later" if step is not None else "unchanged"
                Conversation.update(contact_profile_at=clock.now()).where(Conversation.id == conversation.id).execute()
            log_lookups.info("contact profile of conversation %s not read: %s", conversation.id, failure.message)
            return "refused"
        with db.atomic():
            if not engine.settle_idle(found):
                return "unchanged"
            return _store(conversation.id, profile)


def _store(conversation_id: str, profile: dict[str, Any]) -> LookupOutcome:
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


# At least once: reading a profile twice harms nothing. A lookup that cannot get an answer waits and
# tries again; the last attempt, or a refusal, puts the chore back to idle.
LOOKUP_POLICY = Policy(retry_status="due", failed_status="idle", max_attempts=LOOKUP_MAX_ATTEMPTS,
                       backoff=LOOKUP_BACKOFF_SECONDS, error_column=None)

LOOKUP_WORK = engine.Kind(
    name="contact_lookup", table="contact_lookup", ready=("due",), idle="idle", run=look_up,
    lease_seconds=lambda settings: settings.send_lease_seconds,  # one platform call, as a message's send
    policy=LOOKUP_POLICY, returning=("conversation_id",), sweep_batch=50, sweep_batches_per_tick=1,
)


# -- inbox polls (what a poll does: polling.py) ----------------------------------------------------
# A chore: whatever a read's failure, the chore goes back to idle and is due again after an interval
# (or after the platform's asked delay, when longer); a refused credential has flagged the account.
POLL_POLICY = Policy(retry_status="due", failed_status="idle", max_attempts=1, error_column=None,
                     idle_after=lambda settings: settings.inbox_poll_seconds)

POLL_WORK = engine.Kind(
    name=polling.POLL, table="account_chore", scope="chore = 'inbox_poll'", ready=("due",), idle="idle",
    arm=polling._due, arm_when_due=True, run=polling.run,
    lease_seconds=lambda settings: settings.send_lease_seconds,  # a few platform calls, as a message's send
    policy=POLL_POLICY, returning=("account_id",), sweep_batch=polling.BATCH, sweep_batches_per_tick=5,
)
