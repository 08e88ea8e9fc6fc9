"""Conversations, their messages, the per-account conversation counts and send pace."""

from __future__ import annotations

from peewee import (
    BooleanField,
    CharField,
    CompositeKey,
    DateTimeField,
    DoubleField,
    ForeignKeyField,
    IntegerField,
    TextField,
)

from kit.clock import now
from storage.models.accounts import Account
from storage.models.base import BaseModel, JSONField, WorkModel
from storage.models.identity import Profile, Workspace


class Conversation(BaseModel):
    """One contact's thread on one connected account. At most one per contact: unique per account on
    the platform's id of the thread and on the normalised handle (NULLs never collide)."""

    id = CharField(primary_key=True, max_length=40)
    # Copied from the account so that lists filter and sort on one table, through covering indexes.
    workspace = ForeignKeyField(Workspace, on_delete="CASCADE", index=False)
    workspace_id: str  # the foreign key column, for type checkers
    profile = ForeignKeyField(Profile, on_delete="CASCADE", index=False)
    profile_id: str  # the foreign key column, for type checkers
    account = ForeignKeyField(Account, on_delete="CASCADE", index=False)
    account_id: str  # the foreign key column, for type checkers
    platform = CharField(max_length=16)
    contact_handle = CharField(max_length=255, null=True)  # normalised (service.inbox.contacts)
    contact_name = CharField(max_length=255, null=True)
    external_conversation_id = CharField(max_length=255, null=True)  # what the platform sends DMs to
    last_message_at = DateTimeField(null=True)
    last_inbound_at = DateTimeField(null=True)  # opens the 24 h window of Meta platforms
    activity_at = DateTimeField()  # the list's sort key: last_message_at, or created_at before any message
    unread_count = IntegerField(default=0)
    status = CharField(max_length=16, default="open")  # open | resolved | snoozed (a shared inbox)
    snoozed_until = DateTimeField(null=True)  # a snoozed conversation opens again by itself at this time
    assignee_id = CharField(max_length=40, null=True)  # a member's user id
    labels = JSONField(null=True)  # short strings; each also a `ConversationLabel` row, for the filter
    # When the contact's profile (name, handle) was last read from the platform, or tried: read
    # again when the contact writes after a long silence (service/inbox/profiles.py).
    contact_profile_at = DateTimeField(null=True)
    created_at = DateTimeField(default=now)
    updated_at = DateTimeField(default=now)

    class Meta:
        indexes = (
            (("account", "external_conversation_id"), True),
            (("account", "contact_handle"), True),
            (("workspace", "activity_at", "id"), False),
            (("workspace", "platform", "activity_at", "id"), False),
            (("account", "activity_at", "id"), False),
            (("profile", "activity_at", "id"), False),
            (("workspace", "status", "activity_at", "id"), False),
            (("workspace", "assignee_id", "activity_at", "id"), False),
            (("snoozed_until",), False),
        )


class ConversationLabel(BaseModel):
    """A label on a conversation, one row each, so that a list filtered by a label reads an index."""

    conversation = ForeignKeyField(Conversation, on_delete="CASCADE", index=False)
    conversation_id: str  # the foreign key column, for type checkers
    workspace_id = CharField(max_length=40)
    label = CharField(max_length=50)

    class Meta:
        primary_key = CompositeKey("conversation", "label")
        indexes = ((("workspace_id", "label", "conversation"), False),)


class ConversationNote(BaseModel):
    """An internal note on a conversation: for the team, never sent to the contact."""

    id = CharField(primary_key=True, max_length=40)
    conversation = ForeignKeyField(Conversation, on_delete="CASCADE", index=True)
    conversation_id: str  # the foreign key column, for type checkers
    workspace_id = CharField(max_length=40)
    author_id = CharField(max_length=40, null=True)  # the member who wrote it (null: an API key)
    text = TextField()
    created_at = DateTimeField(default=now)


class Message(WorkModel):
    id = CharField(primary_key=True, max_length=40)
    conversation = ForeignKeyField(Conversation, on_delete="CASCADE", index=False)
    conversation_id: str  # the foreign key column, for type checkers
    direction = CharField(max_length=16)  # inbound | outbound
    text = TextField(null=True)  # null: an inbound attachment without text
    button_label = CharField(max_length=255, null=True)
    button_url = TextField(null=True)
    # received | pending | sending | sent | delivered | read | failed | unknown
    status = CharField(max_length=16)
    # Indexed where present (migration 24): receipts find a sent message by it.
    platform_message_id = CharField(max_length=255, null=True)
    error = TextField(null=True)
    source = CharField(max_length=16, default="inbox")  # inbox | broadcast | sequence | automation
    template = JSONField(null=True)  # a WhatsApp template message: {name, language, parameters}
    media_ids = JSONField(null=True)  # attachments (`med_...`) of an outbound message, sent with its text
    # What an inbound message carried besides text, as the platform described it: [{type, url?, ...}].
    attachments = JSONField(null=True)
    # The contacts' reactions to it ([{emoji, by}], one per person), its last edit, its deletion:
    # platform events that name the message, never new messages (migration 29).
    reactions = JSONField(null=True)
    edited_at = DateTimeField(null=True)
    deleted_at = DateTimeField(null=True)
    # A private reply (a comment automation's DM) is addressed by the comment, not the contact; one
    # per comment (the platforms allow one), held by the unique index of migration 11.
    comment_id = CharField(max_length=255, null=True)
    created_at = DateTimeField(default=now)
    updated_at = DateTimeField(default=now)

    class Meta:
        indexes = ((("conversation", "created_at", "id"), False),)


class PaceSlot(BaseModel):
    """The shared send pace of one connected account (embedded setup; Redis holds it on scale-out).

    `next_slot` is the earliest unix time the next message may go (a GCRA's theoretical arrival
    time); `paused_until` is set from a platform's `Retry-After`.
    """

    account_id = CharField(primary_key=True, max_length=40)
    # Double precision: peewee's plain float is PostgreSQL's four-byte `real`, which rounds an
    # instant of today to the nearest 128 seconds.
    next_slot = DoubleField(default=0.0)
    paused_until = DoubleField(default=0.0)


class ConversationCount(BaseModel):
    """How many conversations an account has, kept in the transaction that creates or deletes them:
    the list's `total` sums a workspace's few accounts instead of counting 100k rows on every page.
    Platform and profile are copied from the account so every filter of the list applies here."""

    account = ForeignKeyField(Account, on_delete="CASCADE", primary_key=True)
    account_id: str  # the foreign key column, for type checkers
    workspace = ForeignKeyField(Workspace, on_delete="CASCADE", index=True)
    workspace_id: str  # the foreign key column, for type checkers
    profile = ForeignKeyField(Profile, on_delete="CASCADE", index=False)
    profile_id: str  # the foreign key column, for type checkers
    platform = CharField(max_length=16)
    total = IntegerField(default=0)


class ContactLookup(WorkModel):
    """Reading one contact's profile from the platform, as a row of the work engine: one per
    conversation (its id `look_<conversation id>`), `idle` between lookups, armed `due` when a
    contact known only by a scoped id writes (service/inbox/profiles.py)."""

    id = CharField(primary_key=True, max_length=60)
    conversation = ForeignKeyField(Conversation, on_delete="CASCADE", index=True)
    conversation_id: str  # the foreign key column, for type checkers
    status = CharField(max_length=16, default="idle")  # idle | due
    created_at = DateTimeField(default=now)

    class Meta:
        indexes = ((("status", "next_attempt_at"), False),)  # the sweeper's due rows
class InboxPoll(BaseModel):
    """Where an account's inbox stands on a platform read by polling (YouTube's comment threads, X's
    DM events without a webhook) or checked once (whether a TikTok account may use Business
    Messaging). Its `cursor` moves in the transaction that stores the messages it covers, so a
    worker that dies mid-poll leaves it where it was and the next poll reads the same items again
    (stored once: inbound records are unique per platform message id)."""

    account = ForeignKeyField(Account, on_delete="CASCADE", primary_key=True)
    account_id: str  # the foreign key column, for type checkers
    platform = CharField(max_length=16)
    cursor = TextField(null=True)  # the platform's newest-seen position (an id, or an instant)
    polled_at = DateTimeField(null=True)  # the last poll that committed
    webhook_at = DateTimeField(null=True)  # the last signed webhook heard for the account (X)
    business = BooleanField(null=True)  # TikTok: a Business Account (None: not asked yet)
    quota_day = CharField(max_length=10, null=True)  # YouTube: the quota day (Pacific time) of `quota_units`
    quota_units = IntegerField(default=0)  # units this account's polls spent that day
    updated_at = DateTimeField(default=now)


class PlatformQuota(BaseModel):
    """Units of a platform's per-project daily quota spent on one day (YouTube: 10,000 a day by
    default, reset at midnight Pacific time), counted before each call so polls stop short of it."""

    platform = CharField(max_length=16)
    day = CharField(max_length=10)
    units = IntegerField(default=0)

    class Meta:
        primary_key = CompositeKey("platform", "day")


class SavedReply(BaseModel):
    """A reply the team keeps for reuse, with variables filled when sent (`{{contact.name}}`, ...)."""

    id = CharField(primary_key=True, max_length=40)
    workspace = ForeignKeyField(Workspace, on_delete="CASCADE", index=True)
    workspace_id: str  # the foreign key column, for type checkers
    name = CharField(max_length=200)
    text = TextField()
    created_by = CharField(max_length=40, null=True)
    created_at = DateTimeField(default=now)
    updated_at = DateTimeField(default=now)
