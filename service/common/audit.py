"""The audit log: every change and every sign-in, with who did it, what, to what and from where.

`record` writes its row in the caller's transaction, so a change and its row commit or roll back
together. Who acted is read off the actor the front door built (duck-typed here: this module
depends on no domain): a person in the dashboard (`user`), an API key (`key`), an OAuth client
acting for a person at /mcp (`oauth_client`), or the service itself (`system`: a scheduled
publish, a snooze that ended).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Protocol

from kit import clock, ids
from storage.hot import insert
from storage.models import AuditEntry, User


class Acting(Protocol):
    @property
    def workspace_id(self) -> str: ...
    @property
    def credential_id(self) -> str: ...
    @property
    def user_id(self) -> str | None: ...
    @property
    def client_id(self) -> str | None: ...
    @property
    def ip(self) -> str | None: ...


def actor_of(actor: Acting | None) -> tuple[str, str | None]:
    """(type, id) of who acts."""
    if actor is None:
        return "system", None
    if actor.client_id is not None:
        return "oauth_client", actor.client_id
    if actor.user_id is not None:
        return "user", actor.user_id
    return "key", actor.credential_id


def record(actor: Acting | None, action: str, *, target: tuple[str, str | None] | None = None,
           workspace_id: str | None = None, details: dict[str, Any] | None = None,
           label: str | None = None, ip: str | None = None, user_id: str | None = None,
           at: datetime | None = None) -> str:
    """One row of the audit log, in the current transaction; its id."""
    kind, actor_id = actor_of(actor)
    if actor is None and user_id is not None:  # a person acting outside any key or session (signing in)
        kind = "user"
    row_id = ids.new_id("aud")
    insert(AuditEntry, id=row_id,
           workspace=workspace_id or (actor.workspace_id if actor is not None else None),
           at=at or clock.now(), actor_type=kind, actor_id=actor_id if actor is not None else user_id,
           actor_label=label, user_id=(actor.user_id if actor is not None else user_id),
           action=action, target_type=target[0] if target else None, target_id=target[1] if target else None,
           ip=ip or (actor.ip if actor is not None else None), details=details)
    return row_id


def signin(*, user_id: str | None, email: str, succeeded: bool, ip: str | None, reason: str | None = None,
           method: str = "password") -> None:
    """A dashboard sign-in, good or refused. It belongs to no one workspace: the log of each
    workspace the person is a member of shows it (`service.identity.audit_log`). A refusal for an
    e-mail that is someone's is theirs: their workspaces see the attempt."""
    if user_id is None:
        known = User.get_or_none(User.email == email.strip().lower())
        user_id = known.id if known is not None else None
    record(None, "signin.succeeded" if succeeded else "signin.failed", target=("user", user_id),
           label=email, ip=ip, user_id=user_id, details={"method": method, **({"reason": reason} if reason else {})})
