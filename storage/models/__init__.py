"""Peewee models: the one place that knows how rows are laid out, one module per domain.

Times are naive UTC. JSON columns are text so SQLite and PostgreSQL store them alike. Secrets
(API keys, tokens) are stored as SHA-256 hashes; platform credentials encrypted.
"""

from __future__ import annotations

from storage.models.accounts import Account, AccountChore, ConnectSelection, ConnectState, InboundRecord
from storage.models.analytics import FollowerSnapshot
from storage.models.automations import AutomationContact, AutomationLog, CommentAutomation, PublicReply
from storage.models.base import BaseModel, JSONField
from storage.models.broadcasts import Broadcast, BroadcastRecipient
from storage.models.identity import (
    ApiKey,
    AuditEntry,
    DashboardSession,
    Invitation,
    Membership,
    OAuthClient,
    OAuthCode,
    OAuthGrant,
    OAuthToken,
    Profile,
    User,
    Workspace,
)
from storage.models.inbox import (
    ContactLookup,
    Conversation,
    ConversationCount,
    ConversationLabel,
    ConversationNote,
    InboxPoll,
    Message,
    PaceSlot,
    PlatformQuota,
)
from storage.models.kit import IdempotencyRecord, RateLimitCounter, SchedulerState
from storage.models.posts import Media, Post, PostDeletion, PostingQueue, PostTarget
from storage.models.sequences import Enrollment, Sequence
from storage.models.webhooks import Event, WebhookDelivery, WebhookEndpoint

# In the order tables are created (a table after those it refers to).
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
    OAuthClient,
    OAuthGrant,
    OAuthCode,
    OAuthToken,
    DashboardSession,
    CommentAutomation,
    AutomationLog,
    AutomationContact,
    PublicReply,
    Sequence,
    Enrollment,
    FollowerSnapshot,
    Broadcast,
    BroadcastRecipient,
    Media,
    Post,
    PostTarget,
    AccountChore,
    PostDeletion,
    PostingQueue,
    ConnectSelection,
    ContactLookup,
    InboxPoll,
    PlatformQuota,
    Invitation,
    AuditEntry,
    ConversationLabel,
    ConversationNote,
]

__all__ = [
    "ALL_MODELS",
    "Account",
    "AccountChore",
    "ApiKey",
    "AuditEntry",
    "AutomationContact",
    "AutomationLog",
    "BaseModel",
    "Broadcast",
    "BroadcastRecipient",
    "CommentAutomation",
    "ConnectSelection",
    "ConnectState",
    "ContactLookup",
    "Conversation",
    "ConversationCount",
    "ConversationLabel",
    "ConversationNote",
    "DashboardSession",
    "Enrollment",
    "Event",
    "FollowerSnapshot",
    "IdempotencyRecord",
    "InboundRecord",
    "InboxPoll",
    "Invitation",
    "JSONField",
    "Media",
    "Membership",
    "Message",
    "OAuthClient",
    "OAuthCode",
    "OAuthGrant",
    "OAuthToken",
    "PaceSlot",
    "PlatformQuota",
    "Post",
    "PostDeletion",
    "PostTarget",
    "PostingQueue",
    "Profile",
    "PublicReply",
    "RateLimitCounter",
    "SchedulerState",
    "Sequence",
    "User",
    "WebhookDelivery",
    "WebhookEndpoint",
    "Workspace",
]
