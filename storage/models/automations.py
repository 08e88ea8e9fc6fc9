"""Comment automations, their logs and contacts, and public replies."""

from __future__ import annotations

from peewee import BooleanField, CharField, CompositeKey, DateTimeField, ForeignKeyField, TextField

from kit.clock import now
from storage.models.accounts import Account
from storage.models.base import BaseModel, JSONField, WorkModel
from storage.models.identity import Profile, Workspace


class CommentAutomation(BaseModel):
    """A private-reply DM (and optional public reply) for comments that match on watched posts."""

    id = CharField(primary_key=True, max_length=40)
    workspace = ForeignKeyField(Workspace, on_delete="CASCADE", index=False)
    workspace_id: str  # the foreign key column, for type checkers
    profile = ForeignKeyField(Profile, on_delete="CASCADE", index=False)
    profile_id: str  # the foreign key column, for type checkers
    account = ForeignKeyField(Account, on_delete="CASCADE", index=True)
    account_id: str  # the foreign key column, for type checkers
    name = CharField(max_length=255)
    media_ids = JSONField(default=list)  # []: every post of the account, also later ones
    keywords = JSONField(default=list)
    match_type = CharField(max_length=16)  # contains | exact | any
    dm_text = TextField()
    dm_button_label = CharField(max_length=255, null=True)
    dm_button_url = TextField(null=True)
    public_reply_text = TextField(null=True)
    once_per_user = BooleanField(default=False)
    status = CharField(max_length=16, default="active")  # active | paused
    created_at = DateTimeField(default=now)
    updated_at = DateTimeField(default=now)

    class Meta:
        indexes = ((("workspace", "created_at", "id"), False),)


class AutomationLog(BaseModel):
    """What one automation did with one comment: at most one row per (automation, comment), which
    is also what makes a comment delivered twice acted on once."""

    id = CharField(primary_key=True, max_length=40)
    automation = ForeignKeyField(CommentAutomation, on_delete="CASCADE", index=False)
    automation_id: str  # the foreign key column, for type checkers
    comment_id = CharField(max_length=255)
    media_id = CharField(max_length=255, null=True)
    commenter_id = CharField(max_length=255, null=True)
    commenter_handle = CharField(max_length=255, null=True)
    text = TextField(null=True)
    matched = BooleanField()
    conversation_id = CharField(max_length=40, null=True)
    message_id = CharField(max_length=40, null=True)  # the private reply; its status is the log's dmStatus
    reply_id = CharField(max_length=40, null=True)  # the public reply's work row
    reason = CharField(max_length=64, null=True)  # why nothing (or not everything) was done
    created_at = DateTimeField(default=now)

    class Meta:
        indexes = (
            (("automation", "comment_id"), True),
            (("automation", "created_at", "id"), False),
        )


class AutomationContact(BaseModel):
    """Commenters an automation has sent a DM to: the primary key is what holds `oncePerUser`
    when ten webhooks from one person arrive at once."""

    automation = ForeignKeyField(CommentAutomation, on_delete="CASCADE")
    automation_id: str  # the foreign key column, for type checkers
    commenter_id = CharField(max_length=255)
    created_at = DateTimeField(default=now)

    class Meta:
        primary_key = CompositeKey("automation", "commenter_id")


class PublicReply(WorkModel):
    """A public answer under a comment: a work row of the engine, posted at most once."""

    id = CharField(primary_key=True, max_length=40)
    account = ForeignKeyField(Account, on_delete="CASCADE", index=False)
    account_id: str  # the foreign key column, for type checkers
    comment_id = CharField(max_length=255)
    text = TextField()
    # pending | posting | posted | failed | unknown
    status = CharField(max_length=16)
    platform_reply_id = CharField(max_length=255, null=True)
    error = TextField(null=True)
    created_at = DateTimeField(default=now)
    updated_at = DateTimeField(default=now)

    class Meta:
        indexes = (
            (("account", "comment_id"), True),  # one public reply per comment
            (("status", "next_attempt_at"), False),  # the sweeper's due rows
        )
