"""Sequences and the enrolments of conversations in them."""

from __future__ import annotations

from peewee import BooleanField, CharField, DateTimeField, ForeignKeyField, IntegerField

from kit.clock import now
from storage.models.accounts import Account
from storage.models.base import BaseModel, JSONField, WorkModel
from storage.models.identity import Profile, Workspace
from storage.models.inbox import Conversation


class Sequence(BaseModel):
    """Timed follow-up messages into which conversations are enrolled."""

    id = CharField(primary_key=True, max_length=40)
    workspace = ForeignKeyField(Workspace, on_delete="CASCADE", index=False)
    workspace_id: str  # the foreign key column, for type checkers
    profile = ForeignKeyField(Profile, on_delete="CASCADE", index=False)
    profile_id: str  # the foreign key column, for type checkers
    account = ForeignKeyField(Account, on_delete="CASCADE", index=True)
    account_id: str  # the foreign key column, for type checkers
    name = CharField(max_length=255)
    trigger = CharField(max_length=32)  # conversation_started | comment_automation | story_reply | manual
    automation_id = CharField(max_length=40, null=True)
    keywords = JSONField(default=list)
    match_type = CharField(max_length=16, default="contains")
    stop_on_reply = BooleanField(default=False)
    steps = JSONField()  # [{delayMinutes, text, buttonLabel, buttonUrl}]
    status = CharField(max_length=16, default="active")  # active | paused
    deleted_at = DateTimeField(null=True)  # deleted: gone from the API, its enrolments cancelled
    created_at = DateTimeField(default=now)
    updated_at = DateTimeField(default=now)

    class Meta:
        indexes = ((("workspace", "created_at", "id"), False),)


class Enrollment(WorkModel):
    """One conversation's way through one sequence: a work row of the engine whose `next_attempt_at`
    is its next step's due time (the sweeper is the scheduler)."""

    id = CharField(primary_key=True, max_length=40)
    sequence = ForeignKeyField(Sequence, on_delete="CASCADE", index=False)
    sequence_id: str  # the foreign key column, for type checkers
    conversation = ForeignKeyField(Conversation, on_delete="CASCADE", index=True)
    conversation_id: str  # the foreign key column, for type checkers
    status = CharField(max_length=16)  # active | completed | stopped | cancelled
    current_step = IntegerField(default=0)  # steps handled (sent or skipped)
    next_step_at = DateTimeField(null=True)  # the next step's due time, while active
    last_message_id = CharField(max_length=40, null=True)  # the last step's message: the next waits for it
    history = JSONField(default=list)  # [{step, status, messageId, reason, at}]
    reason = CharField(max_length=64, null=True)
    enrolled_at = DateTimeField(default=now)
    ended_at = DateTimeField(null=True)
    # `next_attempt_at` is null while the sequence is paused.
    created_at = DateTimeField(default=now)
    updated_at = DateTimeField(default=now)

    class Meta:
        indexes = (
            (("sequence", "enrolled_at", "id"), False),
            (("status", "next_attempt_at"), False),  # the sweeper's due rows
        )
