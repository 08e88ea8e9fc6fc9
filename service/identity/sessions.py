"""Dashboard sessions kept in storage, so that ending one holds at once in every process.

The signed cookie (itsdangerous, via Starlette's session middleware) carries a random session id;
storage keeps only its SHA-256. A page checks the row on every request: sign-out deletes this
session's row, a password change and a removal from a workspace delete every row of that person.
A copied cookie therefore stops working the moment its session ends, not 14 days later.
"""

from __future__ import annotations

import secrets
from datetime import timedelta

from kit import clock, tokens
from service.common import audit
from storage.models import DashboardSession

LIFETIME = timedelta(days=14)


def start(*, user_id: str, email: str | None = None, ip: str | None = None, method: str | None = None) -> str:
    """A new session for this person; returns the id for the cookie (shown nowhere else). With
    `method` (`password`, `oidc`, `invitation`) the sign-in is in the audit log, in this transaction."""
    session_id = secrets.token_urlsafe(32)
    moment = clock.now()
    DashboardSession.create(id_hash=tokens.sha256_hex(session_id), user=user_id, created_at=moment,
                            expires_at=moment + LIFETIME)
    if method is not None:
        audit.signin(user_id=user_id, email=email or "", succeeded=True, ip=ip, method=method)
    return session_id


def user_of(session_id: str | None) -> str | None:
    """The person whose live session this is, or None (ended, expired or never made)."""
    if not session_id or not isinstance(session_id, str):
        return None
    row = DashboardSession.get_or_none(DashboardSession.id_hash == tokens.sha256_hex(session_id))
    if row is None or row.expires_at <= clock.now():
        return None
    return row.user_id


def end(session_id: str | None) -> None:
    if session_id and isinstance(session_id, str):
        DashboardSession.delete().where(DashboardSession.id_hash == tokens.sha256_hex(session_id)).execute()


def end_all(*, user_id: str) -> int:
    """Every session of this person, in every process (a password change, a removal)."""
    return int(DashboardSession.delete().where(DashboardSession.user == user_id).execute())


def forget_expired() -> int:
    return int(DashboardSession.delete().where(DashboardSession.expires_at <= clock.now()).execute())
