"""The shared inbox: a conversation's status (open, resolved, snoozed until a time), its assignee,
its labels and its internal notes, for a team answering one inbox together.

Every change writes `conversation.updated` and an audit row in its own transaction. A contact's
message opens a resolved or snoozed conversation again (`reopen_on_inbound`, in the inbound
hook's transaction), and a snooze ends by itself at its time (`wake_snoozed`, the scheduler's job).
Notes are for the team: nothing of them is ever sent to the contact.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from peewee import fn

from kit import clock, ids
from kit.errors import ValidationFailed
from kit.pagination import Page, paginate
from kit.shapes import LEFT_OUT
from service.common import audit, events
from service.identity.auth import Actor
from service.inbox.conversations import get_row
from service.inbox.shapes import Conversation as ConversationRecord
from service.inbox.shapes import Note as NoteRecord
from storage.db import db
from storage.hot import run_fixed
from storage.models import Conversation, ConversationLabel, ConversationNote, Membership, Message

WAKE_BATCH = 500


def _instant(value: str) -> dt.datetime:
    try:
        parsed = dt.datetime.fromisoformat(value.replace("Z", "+00:00"))
        if parsed.tzinfo is None:
            raise ValueError(value)
        return parsed.astimezone(dt.UTC).replace(tzinfo=None)
    except (ValueError, OverflowError):
        raise ValidationFailed.field("snoozedUntil", "must be an ISO 8601 instant with Z or an offset "
                                                     "(2026-12-01T09:00:00Z)") from None


def _assignee(conversation: Conversation, user_id: str) -> str:
    """A member of the workspace who may see the conversation's profile."""
    membership = Membership.get_or_none(Membership.workspace == conversation.workspace_id,
                                        Membership.user == user_id)
    limited = membership is not None and membership.role in ("member", "viewer") and membership.profile_ids is not None
    if membership is None or (limited and conversation.profile_id not in membership.profile_ids):
        raise ValidationFailed.field("assigneeId", "must be a member of the workspace who may see this "
                                                   "conversation's profile")
    return user_id


def _announce(conversation: Conversation, actor: Actor | None, changed: dict[str, Any]) -> ConversationRecord:
    record = ConversationRecord.model_validate(conversation)
    events.emit(workspace_id=conversation.workspace_id, type="conversation.updated", data=record.dump())
    audit.record(actor, "conversation.updated", workspace_id=conversation.workspace_id,
                 target=("conversation", conversation.id), details=changed)
    return record


def update(*, actor: Actor, conversation_id: str, status: str | None = LEFT_OUT, snoozed_until: str | None = LEFT_OUT,
           assignee_id: str | None = LEFT_OUT, labels: list[str] | None = LEFT_OUT) -> ConversationRecord:
    """Change what is given, and only that (an update's arguments left out are `LEFT_OUT`)."""
    conversation = get_row(actor=actor, conversation_id=conversation_id)
    actor.require_write()
    changed: dict[str, Any] = {}
    if snoozed_until is not LEFT_OUT and snoozed_until is not None and status is LEFT_OUT:
        status = "snoozed"
    if status is not LEFT_OUT and status is not None:
        if status == "snoozed":
            if snoozed_until is LEFT_OUT or snoozed_until is None:
                raise ValidationFailed.field("snoozedUntil", "is needed to snooze a conversation")
            until = _instant(snoozed_until)
            if until <= clock.now():
                raise ValidationFailed.field("snoozedUntil", "must be in the future")
            conversation.snoozed_until = until
        else:
            if snoozed_until not in (LEFT_OUT, None):
                raise ValidationFailed.field("snoozedUntil", "goes only with status snoozed")
            conversation.snoozed_until = None
        conversation.status = status
        changed["status"] = status
    if assignee_id is not LEFT_OUT:
        conversation.assignee_id = None if assignee_id is None else _assignee(conversation, assignee_id)
        changed["assigneeId"] = conversation.assignee_id
    if labels is not LEFT_OUT:
        wanted = list(dict.fromkeys(labels or []))
        ConversationLabel.delete().where(ConversationLabel.conversation == conversation.id).execute()
        if wanted:
            ConversationLabel.insert_many([{"conversation": conversation.id, "workspace_id": conversation.workspace_id,
                                            "label": label} for label in wanted]).execute()
        conversation.labels = wanted
        changed["labels"] = wanted
    if not changed:
        return ConversationRecord.model_validate(conversation)
    conversation.updated_at = clock.now()
    conversation.save()
    return _announce(conversation, actor, changed)


def reopen_on_inbound(conversation: Conversation, *_: Any) -> None:
    """A contact wrote (`signals.contact_wrote`): a resolved or snoozed conversation is open again,
    in the inbound hook's transaction."""
    if conversation.status == "open":
        return
    reopened = Conversation.update(status="open", snoozed_until=None, updated_at=clock.now()).where(
        Conversation.id == conversation.id, Conversation.status != "open").execute()
    if reopened:
        _announce(Conversation.get_by_id(conversation.id), None, {"status": "open", "reason": "inbound_message"})


# Written out: it runs every tick, and building it with peewee cost more than the index's search.
_SNOOZE_ENDED = "SELECT id FROM conversation WHERE status = 'snoozed' AND snoozed_until <= ? LIMIT ?"


def wake_snoozed(*, limit: int = WAKE_BATCH) -> int:
    """Open the snoozed conversations whose time has come (a scheduler job); how many woke. Looks
    first without a write transaction (a tick that finds none takes no lock), then opens each in one."""
    moment = clock.now()
    due = [row[0] for row in run_fixed(_SNOOZE_ENDED, (moment, limit)).fetchall()]
    if not due:
        return 0
    woke = 0
    with db.atomic():
        for conversation_id in due:
            if Conversation.update(status="open", snoozed_until=None, updated_at=moment).where(
                    Conversation.id == conversation_id, Conversation.status == "snoozed",
                    Conversation.snoozed_until <= moment).execute():
                woke += 1
                _announce(Conversation.get_by_id(conversation_id), None, {"status": "open", "reason": "snooze_ended"})
    return woke


# --- notes ----------------------------------------------------------------------------------------


def add_note(*, actor: Actor, conversation_id: str, text: str) -> NoteRecord:
    conversation = get_row(actor=actor, conversation_id=conversation_id)
    actor.require_write()
    note = ConversationNote.create(id=ids.new_id("note"), conversation=conversation.id,
                                   workspace_id=conversation.workspace_id, author_id=actor.user_id, text=text,
                                   created_at=clock.now())
    audit.record(actor, "note.added", target=("conversation", conversation.id), details={"noteId": note.id})
    return NoteRecord.model_validate(note)


def list_notes(*, actor: Actor, conversation_id: str, page: int | None = None, limit: int | None = None) -> Page:
    """Oldest first, as a thread reads."""
    conversation = get_row(actor=actor, conversation_id=conversation_id)
    query = (ConversationNote.select().where(ConversationNote.conversation == conversation.id)
             .order_by(ConversationNote.created_at, ConversationNote.id))
    return paginate(query, page=page, limit=limit, record=NoteRecord)



def end_snoozes() -> None:
    """The scheduler's job: `wake_snoozed` each tick."""
    wake_snoozed()


def previews(*, actor: Actor, conversation_ids: list[str]) -> dict[str, str]:
    """The last message's text of each conversation (the inbox list's preview), in one query:
    message ids begin with their millisecond, so the greatest id of a conversation is its last."""
    if not conversation_ids:
        return {}
    last = (Message.select(fn.MAX(Message.id)).where(Message.conversation.in_(conversation_ids))
            .group_by(Message.conversation))
    rows = (Message.select(Message.conversation, Message.text).join(Conversation)
            .where(Message.id.in_(last), Conversation.workspace == actor.workspace_id))
    return {row.conversation_id: row.text or "" for row in rows}
