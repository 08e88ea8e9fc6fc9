"""Rows that tests need before the feature that makes them exists in the API (e.g. accounts)."""

from __future__ import annotations

import uuid
from typing import Any

from service.accounts import ops as accounts
from service.identity import api_keys, workspaces
from service.identity.auth import Actor
from service.inbox import conversations, outbound
from storage.db import connection, db
from storage.models import Account, Conversation, Message


def add_profile(workspace_id: str, name: str = "Second brand") -> str:
    with connection(), db.atomic():
        return workspaces.create_profile_row(workspace_id=workspace_id, name=name).id


def add_account(workspace_id: str, profile_id: str, platform: str = "telegram", **extra: Any) -> str:
    with connection(), db.atomic():
        return accounts.connect(
            workspace_id=workspace_id,
            profile_id=profile_id,
            platform=platform,
            platform_account_id=extra.pop("platform_account_id", uuid.uuid4().hex[:12]),
            username=extra.pop("username", "brand"),
            display_name=extra.pop("display_name", "Brand"),
            credentials=extra.pop("credentials", {"access_token": "secret-token-" + uuid.uuid4().hex}),
        ).id


def queue_message(tenant: dict[str, str], *, nudge: bool = False) -> Message:
    """A message queued (`pending`) in a new Telegram conversation of the tenant's workspace;
    `nudge=False` leaves it marked in hand, as a caller that sends it itself does."""
    account_id = add_account(tenant["workspaceId"], tenant["profileId"], platform="telegram")
    actor = Actor(workspace_id=tenant["workspaceId"], permission="read-write", profile_ids=None,
                  credential_id="key_test")
    with connection(), db.atomic():
        started = conversations.start_conversation(actor=actor, account_id=account_id, contact_handle="@ann")
        row = Conversation.get_by_id(started.conversation.id)
        return outbound.queue_outbound(row, Account.get_by_id(account_id), text="hello", nudge=nudge)


def add_key(workspace_id: str, **options: Any) -> str:
    with connection(), db.atomic():
        return api_keys.create_key(workspace_id=workspace_id, name="test key", **options).key
