"""People for the teams tests: someone invited into a tenant's workspace with a role, who accepted."""

from __future__ import annotations

import uuid
from typing import Any

import httpx2

from service.identity import invitations
from storage.db import connection, db
from storage.models import Membership
from tests.conftest import bearer
from tests.support.oauth_flow import browser_sign_in, hand_made_tokens

PASSWORD = "team password"


def invite(client: httpx2.Client, tenant: dict[str, str], role: str, **extra: Any) -> dict[str, Any]:
    """An invitation made through /v1 with the owner's key."""
    email = extra.pop("email", f"{role}-{uuid.uuid4().hex[:8]}@example.com")
    answer = client.post("/v1/invitations", json={"email": email, "role": role, **extra},
                         headers=bearer(tenant["apiKey"]))
    assert answer.status_code == 201, answer.text
    return answer.json()


def join(client: httpx2.Client, tenant: dict[str, str], role: str, **extra: Any) -> dict[str, str]:
    """A new person in the tenant's workspace with `role`, through an invitation they accepted
    (choosing a password): their user id, e-mail and password."""
    made = invite(client, tenant, role, **extra)
    token = made["url"].rsplit("/", 1)[1]
    with connection():
        user_id, _ = invitations.accept_as_new_user(token, password=PASSWORD)
    return {"userId": user_id, "email": made["email"], "password": PASSWORD}


def mcp_token(server_url: str, person: dict[str, str], workspace_id: str, scope: str = "read write") -> str:
    """An MCP access token the person granted on the consent screen."""
    with httpx2.Client(base_url=server_url, timeout=30) as http:
        browser_sign_in(http, person["email"], person["password"])
        _, tokens = hand_made_tokens(http, workspace_id=workspace_id, scope=scope)
    return str(tokens["access_token"])


def set_role(workspace_id: str, user_id: str, role: str) -> None:
    with connection(), db.atomic():
        Membership.update(role=role).where(Membership.workspace == workspace_id, Membership.user == user_id).execute()
