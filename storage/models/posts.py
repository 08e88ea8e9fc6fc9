"""Media uploads, posts and their per-account targets."""

from __future__ import annotations

from peewee import CharField, DateTimeField, ForeignKeyField, IntegerField, TextField

from kit.clock import now
from storage.models.accounts import Account
from storage.models.base import BaseModel, JSONField, WorkModel
from storage.models.identity import Workspace


class Media(BaseModel):
    """An upload and, once completed, the media it became (`status`: uploading → complete).

    The upload token is random and only its SHA-256 is kept; the bytes live in the data dir under
    `media/`, named by the id (never by the caller's file name)."""

    id = CharField(primary_key=True, max_length=40)
    workspace = ForeignKeyField(Workspace, on_delete="CASCADE", index=True)
    workspace_id: str  # the foreign key column, for type checkers
    token_hash = CharField(max_length=64, unique=True)
    filename = CharField(max_length=255)
    content_type = CharField(max_length=100)  # as declared; replaced by the sniffed one on completion
    size = IntegerField()  # as declared
    received_bytes = IntegerField(default=0)
    sha256 = CharField(max_length=64, null=True)
    status = CharField(max_length=16, default="uploading")  # uploading | complete
    expires_at = DateTimeField(index=True)
    completed_at = DateTimeField(null=True)
    created_at = DateTimeField(default=now)
    updated_at = DateTimeField(default=now)


class Post(BaseModel):
    id = CharField(primary_key=True, max_length=40)
    workspace = ForeignKeyField(Workspace, on_delete="CASCADE", index=False)
    workspace_id: str  # the foreign key column, for type checkers
    content = TextField()
    media_ids = JSONField(default=list)
    # draft | scheduled | publishing | published | partial | failed | cancelled | pending_approval | rejected
    status = CharField(max_length=16)
    # A post held for approval: what it would have done ({"status", "due": {target id: instant}}).
    approval = JSONField(null=True)
    rejection_reason = TextField(null=True)
    scheduled_for = DateTimeField(null=True)
    timezone = CharField(max_length=64, null=True)
    published_at = DateTimeField(null=True)
    source = CharField(max_length=16, default="service")  # service | external
    created_at = DateTimeField(default=now)
    updated_at = DateTimeField(default=now)

    class Meta:
        indexes = ((("workspace", "created_at", "id"), False),)


class PostTarget(WorkModel):
    """One post on one account: a row of the work engine, published at most once.

    queued → publishing (claimed, in the platform's hands) → published (with its platform id) |
    failed | unknown (the lease ran out during the call). A multi-step publish keeps what the
    platform gave it so far (a container id, a publish id) in `progress`, and waits for its next
    poll through `next_attempt_at`."""

    id = CharField(primary_key=True, max_length=40)
    post = ForeignKeyField(Post, on_delete="CASCADE", backref="targets", index=True)
    post_id: str  # the foreign key column, for type checkers
    workspace = ForeignKeyField(Workspace, on_delete="CASCADE", index=False)
    workspace_id: str  # the foreign key column, for type checkers
    account = ForeignKeyField(Account, on_delete="CASCADE", index=True)
    account_id: str  # the foreign key column, for type checkers
    profile_id = CharField(max_length=40)
    platform = CharField(max_length=16)
    position = IntegerField(default=0)
    content = TextField(null=True)  # replaces the post's content on this platform
    options = JSONField(default=dict)
    status = CharField(max_length=16, default="queued")  # queued | publishing | published | failed | unknown
    platform_post_id = CharField(max_length=255, null=True, index=True)
    url = TextField(null=True)
    error = TextField(null=True)
    published_at = DateTimeField(null=True)
    progress = JSONField(null=True)  # a multi-step publish's state between its steps
    # `options.firstComment`'s outcome once the post is live: {text, status: posted | failed | unknown,
    # platform_comment_id, error}; posted at most once (service/publishing.py).
    first_comment = JSONField(null=True)
    likes = IntegerField(default=0)
    comments = IntegerField(default=0)
    shares = IntegerField(default=0)
    # A draft's targets have no `next_attempt_at` (the engine's columns come from WorkModel).
    created_at = DateTimeField(default=now)
    updated_at = DateTimeField(default=now)


class PostDeletion(WorkModel):
    """One live target of a post to delete on its platform: a row of the work engine
    (service/posts/work.py), kept until every deletion of its post has settled and the post is gone.
    No foreign keys: it outlives the post by a moment, and says so if the account went first."""

    id = CharField(primary_key=True, max_length=40)
    post_id = CharField(max_length=40, index=True)
    account_id = CharField(max_length=40)
    platform = CharField(max_length=16)
    platform_post_id = CharField(max_length=255)
    position = IntegerField(default=0)
    status = CharField(max_length=16, default="pending")  # pending | deleted | failed
    error = TextField(null=True)
    created_at = DateTimeField(default=now)

    class Meta:
        indexes = ((("status", "next_attempt_at"), False),)  # the sweeper's due rows


class PostingQueue(BaseModel):
    """An account's posting queue: weekly slots (`[{weekday: 1..7, time: "HH:MM"}]`, Monday = 1) read
    in `timezone`. A post added to the queue takes, per account, the next slot no target holds."""

    account = ForeignKeyField(Account, on_delete="CASCADE", primary_key=True)
    account_id: str  # the foreign key column, for type checkers
    workspace = ForeignKeyField(Workspace, on_delete="CASCADE", index=True)
    workspace_id: str  # the foreign key column, for type checkers
    timezone = CharField(max_length=64, default="UTC")
    slots = JSONField(default=list)
    created_at = DateTimeField(default=now)
    updated_at = DateTimeField(default=now)
