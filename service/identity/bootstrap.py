"""First-run set-up: a workspace with a profile, its owner, and a full API key."""

from __future__ import annotations

import secrets
from typing import Any

from kit.errors import Conflict
from service.identity import api_keys, users, workspaces
from storage.db import db
from storage.models import Workspace


def bootstrap(*, email: str, password: str, workspace_name: str = "My workspace") -> dict[str, Any]:
    """A new workspace each call, owned by the user with that e-mail (created if new).

    Passwords are checked and hashed first, then everything is written in one short transaction:
    call it with none open (DESIGN rule 15)."""
    user = users.verify_password(email=email, password=password)
    password_hash = users.hash_password(password) if user is None else None
    with db.atomic():
        if user is None:
            user = users.create_user(email=email, password_hash=password_hash, email_verified=True)
        workspace = workspaces.create_workspace(name=workspace_name, owner_user_id=user.id)
        profile = workspaces.create_profile_row(workspace_id=workspace.id, name="Main")
        key = api_keys.create_key(workspace_id=workspace.id, name="Bootstrap key")
    return {"userId": user.id, "workspaceId": workspace.id, "profileId": profile.id, "apiKey": key.key}


def first_run() -> dict[str, Any] | None:
    """On an empty database, create the owner with a generated password; else nothing."""
    if Workspace.select().exists():
        return None
    password = secrets.token_urlsafe(12)
    try:
        out = bootstrap(email="owner@example.com", password=password)
    except Conflict:  # another process won the race
        return None
    return {**out, "email": "owner@example.com", "password": password}
