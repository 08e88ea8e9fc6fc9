"""Rows that tests need before the feature that makes them exists in the API (e.g. accounts)."""

from __future__ import annotations

import uuid
from typing import Any

from service.accounts import ops as accounts
from service.identity import api_keys, workspaces
from storage.db import connection, db


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


def add_key(workspace_id: str, **options: Any) -> str:
    with connection(), db.atomic():
        return api_keys.create_key(workspace_id=workspace_id, name="test key", **options).key
