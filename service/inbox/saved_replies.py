"""Saved replies: texts a team keeps for reuse, with variables filled in when one is sent.

`{{contact.name}}`, `{{contact.handle}}` and `{{account.name}}` are filled from the conversation
the reply goes to (an unknown name falls back to the handle, then to nothing); anything else in
braces is left as written. Members and above keep them; every role reads them.
"""

from __future__ import annotations

import re

from kit import clock, ids
from kit.errors import NotFound
from kit.pagination import Page, paginate
from kit.shapes import LEFT_OUT
from service.common import audit
from service.identity.auth import Actor
from service.inbox.shapes import SavedReply as SavedReplyRecord
from service.inbox.shapes import SavedReplyDeleted
from storage.models import Account, Conversation, SavedReply

VARIABLE = re.compile(r"\{\{\s*(contact\.name|contact\.handle|account\.name)\s*\}\}")


def get_row(*, actor: Actor, reply_id: str) -> SavedReply:
    row = SavedReply.get_or_none(SavedReply.id == reply_id, SavedReply.workspace == actor.workspace_id)
    if row is None:
        raise NotFound("No saved reply with that id.")
    return row


def list_replies(*, actor: Actor, page: int | None = None, limit: int | None = None) -> Page:
    query = SavedReply.select().where(SavedReply.workspace == actor.workspace_id).order_by(SavedReply.name,
                                                                                           SavedReply.id)
    return paginate(query, page=page, limit=limit, record=SavedReplyRecord)


def get(*, actor: Actor, reply_id: str) -> SavedReplyRecord:
    return SavedReplyRecord.model_validate(get_row(actor=actor, reply_id=reply_id))


def create(*, actor: Actor, name: str, text: str) -> SavedReplyRecord:
    actor.require_write()
    moment = clock.now()
    row = SavedReply.create(id=ids.new_id("rep"), workspace=actor.workspace_id, name=name, text=text,
                            created_by=actor.user_id, created_at=moment, updated_at=moment)
    audit.record(actor, "saved_reply.created", target=("saved_reply", row.id))
    return SavedReplyRecord.model_validate(row)


def update(*, actor: Actor, reply_id: str, name: str = LEFT_OUT, text: str = LEFT_OUT) -> SavedReplyRecord:
    row = get_row(actor=actor, reply_id=reply_id)
    actor.require_write()
    if name is not LEFT_OUT:
        row.name = name
    if text is not LEFT_OUT:
        row.text = text
    row.updated_at = clock.now()
    row.save()
    audit.record(actor, "saved_reply.updated", target=("saved_reply", row.id))
    return SavedReplyRecord.model_validate(row)


def delete(*, actor: Actor, reply_id: str) -> SavedReplyDeleted:
    row = get_row(actor=actor, reply_id=reply_id)
    actor.require_write()
    row.delete_instance()
    audit.record(actor, "saved_reply.deleted", target=("saved_reply", row.id))
    return SavedReplyDeleted(id=row.id, deleted=True)


def fill(text: str, conversation: Conversation, account: Account) -> str:
    """The text with its variables filled for this conversation."""
    values = {
        "contact.name": conversation.contact_name or conversation.contact_handle or "",
        "contact.handle": conversation.contact_handle or "",
        "account.name": account.display_name or account.username or "",
    }
    return VARIABLE.sub(lambda match: values[match.group(1)], text)


def render(*, actor: Actor, reply_id: str, conversation: Conversation, account: Account) -> str:
    return fill(get_row(actor=actor, reply_id=reply_id).text, conversation, account)
