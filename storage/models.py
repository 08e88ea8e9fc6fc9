"""Peewee models: the one place that knows how rows are laid out.

Times are naive UTC. JSON columns are text so SQLite and PostgreSQL store them alike. Secrets
(API keys, tokens) are stored as SHA-256 hashes; platform credentials encrypted.
"""

from __future__ import annotations

import json
from typing import Any

from peewee import (
    BlobField,
    BooleanField,
    CharField,
    CompositeKey,
    DateField,
    DateTimeField,
    FloatField,
    ForeignKeyField,
    IntegerField,
    Model,
    TextField,
)

from service.clock import now
from storage.db import db


class JSONField(TextField):
    def db_value(self, value: Any) -> str | None:
        return None if value is None else json.dumps(value, ensure_ascii=False, separators=(",", ":"))

    def python_value(self, value: Any) -> Any:
        return None if value is None else json.loads(value)


class BaseModel(Model):
    class Meta:
        database = db
        legacy_table_names = False


class Workspace(BaseModel):
    id = CharField(primary_key=True, max_length=40)
    name = CharField(max_length=200)
    created_at = DateTimeField(default=now)
    updated_at = DateTimeField(default=now)


class User(BaseModel):
    id = CharField(primary_key=True, max_length=40)
    email = CharField(max_length=320, unique=True)  # stored lower-cased
    password_hash = CharField(max_length=255, null=True)  # null for identity-provider-only users
    email_verified = BooleanField(default=False)
    oidc_subject = CharField(max_length=255, null=True, unique=True)
    created_at = DateTimeField(default=now)
    updated_at = DateTimeField(default=now)


class Membership(BaseModel):
    user = ForeignKeyField(User, on_delete="CASCADE", backref="memberships")
    user_id: str  # the foreign key column, for type checkers
    workspace = ForeignKeyField(Workspace, on_delete="CASCADE", backref="memberships")
    workspace_id: str  # the foreign key column, for type checkers
    role = CharField(max_length=16)  # owner | member
    created_at = DateTimeField(default=now)

    class Meta:
        primary_key = CompositeKey("user", "workspace")


class Profile(BaseModel):
    id = CharField(primary_key=True, max_length=40)
    workspace = ForeignKeyField(Workspace, on_delete="CASCADE", backref="profiles", index=True)
    workspace_id: str  # the foreign key column, for type checkers
    name = CharField(max_length=200)
    created_at = DateTimeField(default=now)
    updated_at = DateTimeField(default=now)


class Account(BaseModel):
    id = CharField(primary_key=True, max_length=40)
    workspace = ForeignKeyField(Workspace, on_delete="CASCADE", index=True)
    workspace_id: str  # the foreign key column, for type checkers
    profile = ForeignKeyField(Profile, on_delete="RESTRICT", backref="accounts", index=True)
    profile_id: str  # the foreign key column, for type checkers
    platform = CharField(max_length=16)
    platform_account_id = CharField(max_length=128)
    username = CharField(max_length=255, null=True)
    display_name = CharField(max_length=255, null=True)
    status = CharField(max_length=16, default="connected")  # connected | disconnected
    needs_reauth = BooleanField(default=False)
    credentials = BlobField(null=True)  # encrypted; erased on disconnect
    # When credentials that cannot be renewed once lapsed (Instagram's, Facebook's long-lived
    # tokens) lapse, in the clear so a daily job can find them; and when it last tried.
    credentials_expire_at = DateTimeField(null=True, index=True)
    credentials_checked_at = DateTimeField(null=True)
    connected_at = DateTimeField(default=now)
    disconnected_at = DateTimeField(null=True)
    created_at = DateTimeField(default=now)
    updated_at = DateTimeField(default=now)

    class Meta:
        indexes = ((("profile", "platform", "platform_account_id"), True),)


class ApiKey(BaseModel):
    id = CharField(primary_key=True, max_length=40)
    workspace = ForeignKeyField(Workspace, on_delete="CASCADE", backref="api_keys", index=True)
    workspace_id: str  # the foreign key column, for type checkers
    name = CharField(max_length=200)
    secret_hash = CharField(max_length=64, unique=True)  # SHA-256 hex of the whole key
    prefix = CharField(max_length=16)  # "sk_" + first 8 hex, for people to recognise a key
    scope = CharField(max_length=16)  # full | profiles
    profile_ids = JSONField(default=list)
    permission = CharField(max_length=16)  # read-write | read
    created_at = DateTimeField(default=now)
    updated_at = DateTimeField(default=now)
    last_used_at = DateTimeField(null=True)
    expires_at = DateTimeField(null=True)
    revoked_at = DateTimeField(null=True)


class IdempotencyRecord(BaseModel):
    """An `Idempotency-Key` of one credential: reserved before its request runs, then its first answer,
    replayed for the same key and body within 24 hours.

    While the request runs, `status` is null and `locked_until` is its lease; `resource_id` names what
    the request created as soon as that commits, so a retry after a crash finds it instead of making
    a second one. `body` is encrypted (an answer may carry a secret shown once).
    """

    key_id = CharField(max_length=40)  # the API key (or token) that sent it
    idempotency_key = CharField(max_length=255)
    request_hash = CharField(max_length=64)
    status = IntegerField(null=True)  # null while the first request runs
    body = TextField(null=True)
    owner = CharField(max_length=32, null=True)  # the running request's token
    locked_until = DateTimeField(null=True)
    resource_id = CharField(max_length=40, null=True)
    created_at = DateTimeField(default=now, index=True)

    class Meta:
        primary_key = CompositeKey("key_id", "idempotency_key")


class RateLimitCounter(BaseModel):
    """Requests of one key in one fixed one-minute window; shared by every API process."""

    key_id = CharField(max_length=40)
    window_start = IntegerField()  # unix seconds, a multiple of 60
    count = IntegerField(default=0)

    class Meta:
        primary_key = CompositeKey("key_id", "window_start")


class Event(BaseModel):
    """The outbox: written in the transaction of the change that caused it, sent later by a worker."""

    id = CharField(primary_key=True, max_length=40)
    workspace = ForeignKeyField(Workspace, on_delete="CASCADE", index=True)
    workspace_id: str  # the foreign key column, for type checkers
    type = CharField(max_length=64)
    data = JSONField()
    created_at = DateTimeField(default=now)
    dispatched_at = DateTimeField(null=True, index=True)


class SchedulerState(BaseModel):
    """Small shared facts of the scheduler (its last tick), for health and operators."""

    name = CharField(primary_key=True, max_length=64)
    value = TextField(null=True)
    updated_at = DateTimeField(default=now)


class ConnectState(BaseModel):
    """The single-use nonce inside a signed OAuth `state`: consumed by the first callback."""

    nonce = CharField(primary_key=True, max_length=64)
    created_at = DateTimeField(default=now, index=True)
    used_at = DateTimeField(null=True)


class InboundRecord(BaseModel):
    """One platform event for one account, stored once however often the platform delivers it."""

    id = CharField(primary_key=True, max_length=40)
    account = ForeignKeyField(Account, on_delete="CASCADE", index=True)
    account_id: str  # the foreign key column, for type checkers
    platform = CharField(max_length=16)
    kind = CharField(max_length=16)
    dedupe_key = CharField(max_length=255)
    event = JSONField()  # the normalised event
    received_at = DateTimeField(default=now)
    processed_at = DateTimeField(null=True, index=True)

    class Meta:
        indexes = ((("account", "dedupe_key"), True),)
class WebhookEndpoint(BaseModel):
    """A customer's HTTPS endpoint for outbound events. Secrets are encrypted: they must be usable to sign."""

    id = CharField(primary_key=True, max_length=40)
    workspace = ForeignKeyField(Workspace, on_delete="CASCADE", backref="webhook_endpoints", index=True)
    workspace_id: str  # the foreign key column, for type checkers
    url = TextField()
    events = JSONField(default=list)  # [] = every event, also ones added later
    description = TextField(null=True)
    enabled = BooleanField(default=True)
    secret = BlobField()  # encrypted `whsec_...`
    # Encrypted [{"secret", "expiresAt"}]: secrets replaced by a rotation, still signing until they expire.
    previous_secrets = BlobField(null=True)
    created_at = DateTimeField(default=now)
    updated_at = DateTimeField(default=now)


class WebhookDelivery(BaseModel):
    """One event to one endpoint: the durable unit of webhook work (Huey only nudges it).

    `claimed_until` is the lease of the worker sending it now; a worker that dies leaves the lease
    to expire and the sweeper hands the row to another. `nudged_at` only stops the sweeper from
    enqueueing the same row every tick while its task waits in the queue.
    """

    id = CharField(primary_key=True, max_length=40)
    workspace = ForeignKeyField(Workspace, on_delete="CASCADE", index=True)
    workspace_id: str  # the foreign key column, for type checkers
    endpoint = ForeignKeyField(WebhookEndpoint, on_delete="CASCADE", backref="deliveries")
    endpoint_id: str  # the foreign key column, for type checkers
    event = ForeignKeyField(Event, on_delete="CASCADE")
    event_id: str  # the foreign key column, for type checkers
    event_type = CharField(max_length=64)  # copied from the event for the log's filter
    status = CharField(max_length=16, default="QUEUED")  # QUEUED | RETRYING | DELIVERED | FAILED
    attempts = IntegerField(default=0)
    response_status = IntegerField(null=True)
    last_error = TextField(null=True)
    next_attempt_at = DateTimeField(null=True)  # null once DELIVERED or FAILED
    claimed_until = DateTimeField(null=True)
    claim_token = CharField(max_length=32, null=True)
    nudged_at = DateTimeField(null=True)
    delivered_at = DateTimeField(null=True)
    created_at = DateTimeField(default=now)
    updated_at = DateTimeField(default=now)

    class Meta:
        indexes = (
            (("status", "next_attempt_at"), False),  # the sweeper's due rows
            (("endpoint", "created_at"), False),  # the delivery log, newest first
        )


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
    contact_handle = CharField(max_length=255, null=True)  # normalised (service.contacts)
    contact_name = CharField(max_length=255, null=True)
    external_conversation_id = CharField(max_length=255, null=True)  # what the platform sends DMs to
    last_message_at = DateTimeField(null=True)
    last_inbound_at = DateTimeField(null=True)  # opens the 24 h window of Meta platforms
    activity_at = DateTimeField()  # the list's sort key: last_message_at, or created_at before any message
    unread_count = IntegerField(default=0)
    status = CharField(max_length=16, default="open")
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
        )


class Message(BaseModel):
    id = CharField(primary_key=True, max_length=40)
    conversation = ForeignKeyField(Conversation, on_delete="CASCADE", index=False)
    conversation_id: str  # the foreign key column, for type checkers
    direction = CharField(max_length=16)  # inbound | outbound
    text = TextField(null=True)  # null: an inbound attachment without text
    button_label = CharField(max_length=255, null=True)
    button_url = TextField(null=True)
    # received | pending | sending | sent | delivered | read | failed | unknown
    status = CharField(max_length=16)
    platform_message_id = CharField(max_length=255, null=True, index=True)
    error = TextField(null=True)
    source = CharField(max_length=16, default="inbox")  # inbox | broadcast | sequence | automation
    template = JSONField(null=True)  # a WhatsApp template message: {name, language, parameters}
    # A private reply (a comment automation's DM) is addressed by the comment, not the contact; one
    # per comment (the platforms allow one), held by the unique index of migration 11.
    comment_id = CharField(max_length=255, null=True)
    # The work engine's columns (service/engine.py); outbound messages only.
    attempts = IntegerField(default=0)
    next_attempt_at = DateTimeField(null=True)
    claimed_until = DateTimeField(null=True)
    claim_token = CharField(max_length=32, null=True)
    nudged_at = DateTimeField(null=True)
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
    next_slot = FloatField(default=0.0)
    paused_until = FloatField(default=0.0)


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


ALL_MODELS: list[type[BaseModel]] = [
    Workspace,
    User,
    Membership,
    Profile,
    Account,
    ApiKey,
    IdempotencyRecord,
    RateLimitCounter,
    Event,
    SchedulerState,
    ConnectState,
    InboundRecord,
    WebhookEndpoint,
    WebhookDelivery,
    Conversation,
    Message,
    ConversationCount,
    PaceSlot,
]


# --- OAuth authorisation server -------------------------------------------------------


class OAuthClient(BaseModel):
    """A client registered through RFC 7591 dynamic registration.

    Clients identified by a Client ID Metadata Document (an https URL) are not stored: their
    metadata is fetched when needed and the grant keeps a copy of the name shown at consent.
    """

    client_id = CharField(primary_key=True, max_length=64)
    secret_hash = CharField(max_length=64, null=True)  # SHA-256 of the secret; null for public clients
    client_name = CharField(max_length=200, null=True)  # attacker-controlled: always escaped when shown
    redirect_uris = JSONField(default=list)
    grant_types = JSONField(default=list)
    response_types = JSONField(default=list)
    scope = CharField(max_length=200, null=True)
    token_endpoint_auth_method = CharField(max_length=32)
    metadata = JSONField(default=dict)  # everything else the client registered, echoed as given
    created_at = DateTimeField(default=now)


class OAuthGrant(BaseModel):
    """One person's consent to one client in one workspace: the "connected app".

    Every token descends from a grant; revoking the grant (dashboard, reuse of a refresh token,
    reuse of a code) revokes all of its tokens in the same transaction.
    """

    id = CharField(primary_key=True, max_length=40)
    client_id = CharField(max_length=2048, index=True)
    client_name = CharField(max_length=200, null=True)
    user = ForeignKeyField(User, on_delete="CASCADE", index=True)
    user_id: str  # the foreign key column, for type checkers
    workspace = ForeignKeyField(Workspace, on_delete="CASCADE", index=True)
    workspace_id: str  # the foreign key column, for type checkers
    scope = CharField(max_length=200)
    resource = CharField(max_length=2048)
    created_at = DateTimeField(default=now)
    last_used_at = DateTimeField(null=True)
    revoked_at = DateTimeField(null=True)
    revoked_reason = CharField(max_length=32, null=True)  # dashboard | refresh_reuse | code_reuse | revocation


class OAuthCode(BaseModel):
    """An authorisation code: single use, 10 minutes, stored as a SHA-256 hash."""

    code_hash = CharField(primary_key=True, max_length=64)
    client_id = CharField(max_length=2048)
    client_name = CharField(max_length=200, null=True)
    user = ForeignKeyField(User, on_delete="CASCADE")
    user_id: str  # the foreign key column, for type checkers
    workspace = ForeignKeyField(Workspace, on_delete="CASCADE")
    workspace_id: str  # the foreign key column, for type checkers
    redirect_uri = CharField(max_length=2048)
    scope = CharField(max_length=200)
    resource = CharField(max_length=2048)
    code_challenge = CharField(max_length=128)
    code_challenge_method = CharField(max_length=8)
    expires_at = DateTimeField()
    used_at = DateTimeField(null=True)
    grant_id = CharField(max_length=40, null=True)  # the grant it was exchanged for, to revoke on reuse
    created_at = DateTimeField(default=now)


class OAuthToken(BaseModel):
    """An access token and the refresh token issued with it, both stored as SHA-256 hashes."""

    id = CharField(primary_key=True, max_length=40)
    grant = ForeignKeyField(OAuthGrant, on_delete="CASCADE", backref="tokens", index=True)
    grant_id: str  # the foreign key column, for type checkers
    client_id = CharField(max_length=2048)
    user = ForeignKeyField(User, on_delete="CASCADE")
    user_id: str  # the foreign key column, for type checkers
    workspace = ForeignKeyField(Workspace, on_delete="CASCADE")
    workspace_id: str  # the foreign key column, for type checkers
    scope = CharField(max_length=200)
    resource = CharField(max_length=2048)
    access_hash = CharField(max_length=64, unique=True)
    refresh_hash = CharField(max_length=64, unique=True, null=True)
    access_expires_at = DateTimeField()
    refresh_expires_at = DateTimeField(null=True)
    refresh_used_at = DateTimeField(null=True)  # set when rotated: presenting it again is reuse
    revoked_at = DateTimeField(null=True)
    created_at = DateTimeField(default=now)


ALL_MODELS += [OAuthClient, OAuthGrant, OAuthCode, OAuthToken]


class DashboardSession(BaseModel):
    """A person's signed-in dashboard session. The cookie carries a random id; only its SHA-256 is
    here, so a session ends for every process the moment its row goes (sign-out, a password
    change, removal from a workspace)."""

    id_hash = CharField(primary_key=True, max_length=64)
    user = ForeignKeyField(User, on_delete="CASCADE", index=True)
    user_id: str  # the foreign key column, for type checkers
    created_at = DateTimeField(default=now)
    expires_at = DateTimeField(index=True)


ALL_MODELS += [DashboardSession]


# --- Comment automations and sequences ----------------------------------------------------------


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


class PublicReply(BaseModel):
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
    attempts = IntegerField(default=0)
    next_attempt_at = DateTimeField(null=True)
    claimed_until = DateTimeField(null=True)
    claim_token = CharField(max_length=32, null=True)
    nudged_at = DateTimeField(null=True)
    created_at = DateTimeField(default=now)
    updated_at = DateTimeField(default=now)

    class Meta:
        indexes = (
            (("account", "comment_id"), True),  # one public reply per comment
            (("status", "next_attempt_at"), False),  # the sweeper's due rows
        )


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


class Enrollment(BaseModel):
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
    attempts = IntegerField(default=0)
    next_attempt_at = DateTimeField(null=True)  # null while the sequence is paused
    claimed_until = DateTimeField(null=True)
    claim_token = CharField(max_length=32, null=True)
    nudged_at = DateTimeField(null=True)
    created_at = DateTimeField(default=now)
    updated_at = DateTimeField(default=now)

    class Meta:
        indexes = (
            (("sequence", "enrolled_at", "id"), False),
            (("status", "next_attempt_at"), False),  # the sweeper's due rows
        )


ALL_MODELS += [CommentAutomation, AutomationLog, AutomationContact, PublicReply, Sequence, Enrollment]


# --- Follower analytics ---------------------------------------------------------------


class FollowerSnapshot(BaseModel):
    """An account's follower count on one UTC day: one row per account and day, a re-take the same
    day updates it. The row is also the daily job's claim: `state` is `claimed` while a worker asks
    the platform, then `taken` (with `followers`), `refused` (the platform does not share the count
    for this account) or `failed` (it did not answer; tried again an hour later). Only `taken` rows
    carry a count, and only they reach the series."""

    account = ForeignKeyField(Account, on_delete="CASCADE", index=False)
    account_id: str  # the foreign key column, for type checkers
    date = DateField()
    followers = IntegerField(null=True)
    state = CharField(max_length=8, default="taken")  # claimed | taken | refused | failed
    taken_at = DateTimeField(default=now)  # when taken, or when last tried

    class Meta:
        primary_key = CompositeKey("account", "date")


ALL_MODELS += [FollowerSnapshot]


# --- Broadcasts -------------------------------------------------------------------------


class Broadcast(BaseModel):
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
    # The work engine's columns (service/engine.py).
    attempts = IntegerField(default=0)
    next_attempt_at = DateTimeField(null=True)
    claimed_until = DateTimeField(null=True)
    claim_token = CharField(max_length=32, null=True)
    nudged_at = DateTimeField(null=True)
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


ALL_MODELS += [Broadcast, BroadcastRecipient]


# --- Posts and media ------------------------------------------------------------------


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
    # draft | scheduled | publishing | published | partial | failed | cancelled
    status = CharField(max_length=16)
    scheduled_for = DateTimeField(null=True)
    timezone = CharField(max_length=64, null=True)
    published_at = DateTimeField(null=True)
    source = CharField(max_length=16, default="service")  # service | external
    created_at = DateTimeField(default=now)
    updated_at = DateTimeField(default=now)

    class Meta:
        indexes = ((("workspace", "created_at", "id"), False),)


class PostTarget(BaseModel):
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
    # The work engine's columns (service/engine.py). A draft's targets have no next_attempt_at.
    attempts = IntegerField(default=0)
    next_attempt_at = DateTimeField(null=True)
    claimed_until = DateTimeField(null=True)
    claim_token = CharField(max_length=32, null=True)
    nudged_at = DateTimeField(null=True)
    created_at = DateTimeField(default=now)
    updated_at = DateTimeField(default=now)


ALL_MODELS += [Media, Post, PostTarget]
