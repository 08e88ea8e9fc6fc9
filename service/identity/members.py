"""The people of a workspace: who they are, their roles and profiles, and taking them out.

Owners manage everyone; admins manage members and viewers (and invite up to `admin`), never an
owner; the last owner can be neither demoted nor removed. A removed person's dashboard sessions end
and their OAuth grants in the workspace are revoked in the same transaction.
"""

from __future__ import annotations

from kit.errors import Conflict, Forbidden, NotFound, ValidationFailed
from kit.shapes import LEFT_OUT
from service.common import audit
from service.identity import roles, sessions
from service.identity.auth import Actor
from service.identity.member_shapes import Member, MemberList, MemberRemoved
from service.identity.oauth_tokens import revoke_grant
from storage.models import Membership, OAuthGrant, Profile, User

MANAGE_MEMBERS = "manage members"


def _record(membership: Membership, user: User) -> Member:
    return Member.model_validate({"user_id": user.id, "email": user.email, "name": user.name,
                                  "role": membership.role, "profile_ids": membership.profile_ids,
                                  "joined_at": membership.created_at})


def list_members(*, actor: Actor) -> MemberList:
    """Everyone in the workspace; a caller limited to profiles sees the members whose profiles lie
    within its own (not those who act on every profile)."""
    rows = (Membership.select(Membership, User).join(User)
            .where(Membership.workspace == actor.workspace_id).order_by(Membership.created_at, User.email))
    data = []
    for membership in rows:
        if actor.profile_ids is not None:
            theirs = membership.profile_ids if membership.role in roles.LIMITABLE else None
            if theirs is None or not all(actor.sees_profile(pid) for pid in theirs):
                continue
        data.append(_record(membership, membership.user))
    return MemberList(data=data)


def check_profiles(*, workspace_id: str, role: str, profile_ids: list[str] | None) -> list[str] | None:
    """The profile ids a member or viewer is limited to, checked against the workspace."""
    if profile_ids is None:
        return None
    if role not in roles.LIMITABLE:
        raise ValidationFailed.field("profileIds", "only a member or a viewer can be limited to profiles")
    wanted = list(dict.fromkeys(profile_ids))
    if not wanted:
        raise ValidationFailed.field("profileIds", "must list at least one profile, or be left out")
    found = {row.id for row in Profile.select(Profile.id).where(Profile.id.in_(wanted),
                                                                 Profile.workspace == workspace_id)}
    missing = [pid for pid in wanted if pid not in found]
    if missing:
        raise ValidationFailed.field("profileIds", "names profiles that do not exist: " + ", ".join(missing))
    return wanted


def may_grant(actor: Actor, role: str) -> None:
    """An owner grants any role; an admin (or a key) up to `admin`."""
    actor.require_role("admin", MANAGE_MEMBERS)
    actor.require_write()
    actor.require_full_scope(MANAGE_MEMBERS)
    if role == "owner" and actor.role != "owner":
        raise Forbidden(roles.refusal("owner", actor.role or "an API key", "make someone an owner")
                        if actor.role else "Only an owner can make someone an owner.")


def _membership(actor: Actor, user_id: str) -> Membership:
    membership = Membership.get_or_none(Membership.workspace == actor.workspace_id, Membership.user == user_id)
    if membership is None:
        raise NotFound("No such member in this workspace.")
    return membership


def _last_owner(membership: Membership) -> bool:
    if membership.role != "owner":
        return False
    owners = Membership.select().where(Membership.workspace == membership.workspace_id,
                                       Membership.role == "owner").count()
    return owners <= 1


def change(*, actor: Actor, user_id: str, role: str = LEFT_OUT, profile_ids: list[str] | None = LEFT_OUT) -> Member:
    """A member's new role and/or profiles. Their MCP tokens follow at their next call."""
    membership = _membership(actor, user_id)
    new_role = membership.role if role is LEFT_OUT else role
    may_grant(actor, new_role)
    if membership.role == "owner" and actor.role not in (None, "owner"):
        raise Forbidden(roles.refusal("owner", str(actor.role), "change an owner"))
    if new_role != "owner" and _last_owner(membership):
        raise Conflict("The last owner of a workspace cannot be demoted: make another owner first.")
    if profile_ids is LEFT_OUT:
        profiles = membership.profile_ids if new_role in roles.LIMITABLE else None
    else:
        profiles = check_profiles(workspace_id=actor.workspace_id, role=new_role, profile_ids=profile_ids)
    before = membership.role
    Membership.update(role=new_role, profile_ids=profiles).where(
        Membership.workspace == actor.workspace_id, Membership.user == user_id).execute()
    membership.role, membership.profile_ids = new_role, profiles
    audit.record(actor, "member.role_changed", target=("user", user_id),
                 details={"from": before, "to": new_role, "profileIds": profiles})
    return _record(membership, User.get_by_id(user_id))


def remove(*, actor: Actor, user_id: str) -> MemberRemoved:
    """Take a person out of the workspace: their sessions end and their OAuth grants here are revoked."""
    membership = _membership(actor, user_id)
    if user_id != actor.user_id:  # anyone may leave; taking someone else out is an admin's
        may_grant(actor, membership.role)
    if _last_owner(membership):
        raise Conflict("The last owner of a workspace cannot be removed.")
    take_out(workspace_id=actor.workspace_id, user_id=user_id)
    audit.record(actor, "member.removed", target=("user", user_id))
    return MemberRemoved(user_id=user_id, removed=True)


def take_out(*, workspace_id: str, user_id: str) -> None:
    Membership.delete().where(Membership.workspace == workspace_id, Membership.user == user_id).execute()
    for grant in OAuthGrant.select(OAuthGrant.id).where(OAuthGrant.workspace == workspace_id,
                                                        OAuthGrant.user == user_id,
                                                        OAuthGrant.revoked_at.is_null()):
        revoke_grant(grant.id, reason="removed")
    sessions.end_all(user_id=user_id)


def role_of(*, user_id: str, workspace_id: str) -> str | None:
    membership = Membership.get_or_none(Membership.workspace == workspace_id, Membership.user == user_id)
    return membership.role if membership else None

