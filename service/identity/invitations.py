"""Invitations to a workspace: a single-use link valid 7 days, shown once to the inviter and e-mailed
when SMTP is configured.

Only the SHA-256 of the link's token is stored. The link's page signs in the existing user with
the invited e-mail, or makes the user with a password they choose, or through the identity
provider when its verified e-mail is the invited one. Using the link is one conditional UPDATE, so
two tabs cannot both spend it.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from kit import clock, ids, mail, tokens
from kit.errors import Conflict, NotFound, ValidationFailed
from kit.pagination import Page, records, window
from service.common import audit
from service.common.configured import Configured
from service.identity import members, roles, users
from service.identity.auth import Actor
from service.identity.member_shapes import Invitation as InvitationRecord
from service.identity.member_shapes import InvitationCreated
from storage.db import db
from storage.models import Invitation, Membership, User, Workspace

settings = Configured(__name__)  # handed in by the composition root (wire)
LIFETIME = timedelta(days=7)
TOKEN_PREFIX = "inv_"  # noqa: S105 - a prefix, not a secret


def _status(row: Invitation) -> str:
    if row.revoked_at is not None:
        return "revoked"
    if row.accepted_at is not None:
        return "accepted"
    return "expired" if row.expires_at <= clock.now() else "pending"


def _record(row: Invitation) -> dict[str, Any]:
    return {"id": row.id, "email": row.email, "role": row.role, "profile_ids": row.profile_ids,
            "status": _status(row), "invited_by": row.invited_by, "expires_at": row.expires_at,
            "accepted_at": row.accepted_at, "revoked_at": row.revoked_at, "created_at": row.created_at}


def link(token: str) -> str:
    return f"{settings().base_url}/dashboard/invitations/{token}"


@dataclass(frozen=True)
class Made:
    record: InvitationCreated
    token: str
    workspace_name: str


def create(*, actor: Actor, email: str, role: str = "member", profile_ids: list[str] | None = None) -> Made:
    """The invitation, in the caller's transaction; `send` mails it afterwards, outside it."""
    members.may_grant(actor, role)
    address = users.normalise_email(email)
    if "@" not in address or len(address) > 320:
        raise ValidationFailed.field("email", "must be an e-mail address")
    profiles = members.check_profiles(workspace_id=actor.workspace_id, role=role, profile_ids=profile_ids or None)
    if (Membership.select().join(User).where(Membership.workspace == actor.workspace_id, User.email == address)
            .exists()):
        raise Conflict("That person is already a member of this workspace.")
    token = TOKEN_PREFIX + secrets.token_urlsafe(32)
    moment = clock.now()
    row = Invitation.create(id=ids.new_id("inv"), workspace=actor.workspace_id, email=address, role=role,
                            profile_ids=profiles, token_hash=tokens.sha256_hex(token), invited_by=actor.user_id,
                            created_at=moment, expires_at=moment + LIFETIME)
    audit.record(actor, "member.invited", target=("invitation", row.id),
                 details={"email": address, "role": role, "profileIds": profiles})
    workspace = Workspace.get_by_id(actor.workspace_id)
    created = InvitationCreated.model_validate({**_record(row), "url": link(token), "emailed": False})
    return Made(record=created, token=token, workspace_name=workspace.name)


def send(made: Made) -> InvitationCreated:
    """E-mail the link when SMTP is configured. Waits on the network: no transaction may be open."""
    if not mail.configured():
        return made.record
    sent = mail.send(to=made.record.email, subject=f"You are invited to {made.workspace_name} on Switchboard",
                     text=(f"You have been invited to join the workspace {made.workspace_name} on Switchboard "
                           f"as {made.record.role}.\n\nOpen this link within 7 days to accept (it works once):\n"
                           f"{link(made.token)}\n"))
    return made.record.model_copy(update={"emailed": sent})


def invite(*, actor: Actor, email: str, role: str = "member",
           profile_ids: list[str] | None = None) -> InvitationCreated:
    """Make and mail an invitation: the row in a short transaction of its own, then the mail."""
    with db.atomic():
        made = create(actor=actor, email=email, role=role, profile_ids=profile_ids)
    return send(made)


def list_invitations(*, actor: Actor, page: int | None = None, limit: int | None = None) -> Page:
    actor.require_role("admin", members.MANAGE_MEMBERS)
    actor.require_full_scope(members.MANAGE_MEMBERS)
    query = (Invitation.select().where(Invitation.workspace == actor.workspace_id)
             .order_by(Invitation.created_at.desc(), Invitation.id.desc()))
    page, limit, offset = window(page, limit)
    total = query.order_by().count()
    rows = [_record(row) for row in query.paginate(page, limit)] if offset < total else []
    return Page(InvitationRecord, records(InvitationRecord, rows), page, limit, total)


def revoke(*, actor: Actor, invitation_id: str) -> InvitationRecord:
    row = Invitation.get_or_none(Invitation.id == invitation_id, Invitation.workspace == actor.workspace_id)
    if row is None:
        raise NotFound("No invitation with that id.")
    members.may_grant(actor, row.role)
    if row.accepted_at is not None:
        raise Conflict("The invitation has been accepted already.")
    if row.revoked_at is None:
        row.revoked_at = clock.now()
        row.save()
        audit.record(actor, "invitation.revoked", target=("invitation", row.id), details={"email": row.email})
    return InvitationRecord.model_validate(_record(row))


# --- the link's page ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Pending:
    """What the link's page shows: the workspace, the invited e-mail and role, and whether a user
    with that e-mail exists (sign in) or not (choose a password)."""

    workspace_id: str
    workspace_name: str
    email: str
    role: str
    user_exists: bool


def _live(token: str) -> Invitation:
    if not isinstance(token, str) or not token.startswith(TOKEN_PREFIX) or len(token) > 100:
        raise NotFound("This invitation link is not valid.")
    row = Invitation.get_or_none(Invitation.token_hash == tokens.sha256_hex(token))
    if row is None:
        raise NotFound("This invitation link is not valid.")
    status = _status(row)
    if status != "pending":
        raise Conflict({"accepted": "This invitation has been used already.",
                        "revoked": "This invitation was withdrawn.",
                        "expired": "This invitation has expired: ask for a new one."}[status])
    return row


def pending(token: str) -> Pending:
    row = _live(token)
    workspace = Workspace.get_by_id(row.workspace_id)
    exists = User.select().where(User.email == row.email).exists()
    return Pending(workspace_id=row.workspace_id, workspace_name=workspace.name, email=row.email,
                   role=row.role, user_exists=exists)


def accept(token: str, *, user_id: str, ip: str | None = None) -> str:
    """The person joins (in the caller's transaction); the workspace id. The user's e-mail must be
    the invited one: a link forwarded to someone else does not let them in."""
    row = _live(token)
    user = User.get_by_id(user_id)
    if user.email != row.email:
        raise Conflict("This invitation is for another e-mail address: sign in as that person.")
    spent = Invitation.update(accepted_at=clock.now(), accepted_by=user_id).where(
        Invitation.id == row.id, Invitation.accepted_at.is_null(), Invitation.revoked_at.is_null()).execute()
    if spent != 1:
        raise Conflict("This invitation has been used already.")
    existing = Membership.get_or_none(Membership.workspace == row.workspace_id, Membership.user == user_id)
    if existing is None:
        Membership.create(user=user_id, workspace=row.workspace_id, role=row.role, profile_ids=row.profile_ids)
    elif roles.at_least(row.role, existing.role) and row.role != existing.role:
        Membership.update(role=row.role, profile_ids=row.profile_ids).where(
            Membership.workspace == row.workspace_id, Membership.user == user_id).execute()
    audit.record(None, "member.joined", workspace_id=row.workspace_id, target=("user", user_id), user_id=user_id,
                 label=user.email, ip=ip, details={"role": row.role, "invitationId": row.id})
    return str(row.workspace_id)


def accept_as_new_user(token: str, *, password: str, name: str | None = None, ip: str | None = None) -> tuple[str, str]:
    """A new user with the invited e-mail and the password they chose, joined: (user id, workspace
    id). The password is hashed before the transaction (DESIGN rule 15): call it with none open."""
    with db.atomic():
        invited = pending(token)
    if invited.user_exists:
        raise Conflict("A user with that e-mail exists already: sign in instead.")
    password_hash = users.hash_password(password)
    with db.atomic():
        user = users.create_user(email=invited.email, password_hash=password_hash)
        if name:
            User.update(name=name[:200]).where(User.id == user.id).execute()
        workspace_id = accept(token, user_id=user.id, ip=ip)
    return user.id, workspace_id


def invited_email(token: str) -> str | None:
    """The e-mail a live invitation is for, or None (for the identity provider's sign-in)."""
    try:
        return _live(token).email
    except (NotFound, Conflict):
        return None
