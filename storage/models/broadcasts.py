"""Broadcasts and their recipients."""

from __future__ import annotations

from peewee import BooleanField, CharField, DateTimeField, ForeignKeyField, IntegerField, TextField

from kit.clock import now
from storage.models.accounts import Account
from storage.models.base import BaseModel, JSONField, WorkModel
from storage.models.identity import Profile, Workspace


class Broadcast(WorkModel):
    """One message to many conversations of one account, and the engine row that starts it.

    `scheduled` with a due `next_attempt_at` is the scheduler's work: the engine claims it, moves it
    to `sending` and fans the audience out into recipients in bounded chunks (`fanout_cursor`: the
    last conversation id done, so a worker that dies mid fan-out is taken over from there). Counts
    are read from the recipients, never kept here: a counter on this row would be written by every
    finishing message and serialise them all on one row lock.
    """

    id = CharField(primary_key=True, max_length=40)
    workspace = ForeignKeyField(Workspace, on_delete="CASCADE", index=False)
    workspace_id: str  # the foreign key column, for type checkers
    profile = ForeignKeyField(Profile, on_delete="CASCADE", index=False)
    profile_id: str  # the foreign key column, for type checkers
    account = ForeignKeyField(Account, on_delete="CASCADE", index=False)
    account_id: str  # the foreign key column, for type checkers
    name = CharField(max_length=200)
    text = TextField()
    button_label = CharField(max_length=255, null=True)  # kept whole; the adapters cut it to 20
    button_url = TextField(null=True)
    # A WhatsApp template sent instead of `text` (which is then ""): {name, language, parameters}.
    template = JSONField(null=True)
    active_within_days = IntegerField(null=True)
    conversation_ids = JSONField(null=True)
    scheduled_for = DateTimeField(null=True)  # naive UTC
    timezone = CharField(max_length=64, null=True)
    send_now = BooleanField(default=False)
    # draft | scheduled | sending | completed | cancelled | failed
    status = CharField(max_length=16)
    fanned_out = BooleanField(default=False)
    fanout_cursor = CharField(max_length=40, null=True)
    error = TextField(null=True)  # why a broadcast `failed`
    started_at = DateTimeField(null=True)
    completed_at = DateTimeField(null=True)
    created_at = DateTimeField(default=now)
    updated_at = DateTimeField(default=now)

    class Meta:
        indexes = (
            (("workspace", "created_at", "id"), False),
            (("account", "created_at", "id"), False),
        )


class BroadcastRecipient(BaseModel):
    """One conversation of a broadcast's audience and where its message stands. No foreign keys to
    the conversation or the message: both may go (an account's deletion, a cancelled message) and
    the log of who was targeted stays."""

    id = CharField(primary_key=True, max_length=40)
    broadcast = ForeignKeyField(Broadcast, on_delete="CASCADE", index=False)
    broadcast_id: str  # the foreign key column, for type checkers
    conversation_id = CharField(max_length=40)
    message_id = CharField(max_length=40, null=True, unique=True)
    status = CharField(max_length=16)  # pending | sent | failed | skipped | unknown
    reason = TextField(null=True)
    sent_at = DateTimeField(null=True)
    created_at = DateTimeField(default=now)
    updated_at = DateTimeField(default=now)

    class Meta:
        indexes = (
            (("broadcast", "conversation_id"), True),
            (("broadcast", "status"), False),  # the counts, and "is anyone still pending"
        )
