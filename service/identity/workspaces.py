"""Workspaces (tenants) and the profiles (brands) inside them."""

from __future__ import annotations

from typing import Any

from pydantic.alias_generators import to_camel

from kit import clock, ids
from kit.errors import Conflict, NotFound
from kit.pagination import Page, paginate
from service.common import audit, epochs
from service.identity import members
from service.identity.auth import Actor
from service.identity.workspace_shapes import Profile as ProfileRecord
from service.identity.workspace_shapes import ProfileDeleted, WorkspaceList, WorkspaceSettings
from service.identity.workspace_shapes import Workspace as WorkspaceRecord
from storage import hot
from storage.db import db
from storage.models import Account, Membership, Profile, Workspace


def create_workspace(*, name: str, owner_user_id: str | None = None) -> Workspace:
    workspace = Workspace.create(id=ids.new_id("ws"), name=name)
    if owner_user_id:
        Membership.create(user=owner_user_id, workspace=workspace.id, role="owner")
    return workspace


def _workspace_record(workspace: dict[str, Any], role: str, profiles: list[dict[str, str]]) -> WorkspaceRecord:
    return WorkspaceRecord.model_validate({**workspace, "role": role, "profiles": profiles})


def list_workspaces(*, actor: Actor, arrived: float | None = None) -> WorkspaceList:
    """The workspaces the caller can act in: a key or token acts in exactly one.

    `arrived` (`time.monotonic()` when the request came in): the workspace may be served from what
    this process read before, when the workspace epoch read after the request arrived (with the
    key's, `service.common.epochs`) still reads as it did then."""
    rows, answers = _workspace(actor.workspace_id, arrived)
    if actor.role is not None:
        role = actor.role
    elif actor.user_id is not None:
        membership = Membership.get_or_none(user=actor.user_id, workspace=actor.workspace_id)
        role = membership.role if membership else "member"
    else:
        role = "owner" if actor.profile_ids is None and actor.can_write else "member"
    seen = (role, actor.profile_ids)
    answer = answers.get(seen)
    if answer is None:
        workspace_id, name, created_at, updated_at = rows[0][:4]
        profiles = [{"id": row[4], "name": row[5]} for row in rows
                    if row[4] is not None and actor.sees_profile(row[4])]
        answer = answers[seen] = WorkspaceList.model_validate({"data": [{
            "id": workspace_id, "name": name, "role": role, "profiles": profiles,
            "created_at": created_at, "updated_at": updated_at,
        }]})
    return answer


# Workspaces this process has read, by id: the database and workspace epoch they were read at, the
# rows of `hot.workspace_with_profiles`, and the answers made of them so far, by the role and the
# profiles of the caller (a `WorkspaceList` is never changed once made). An entry holds only while
# `workspace_epoch` of the same database still reads as it did (see `list_workspaces`). Bounded:
# when full, the oldest entries make room.
Answers = dict[tuple[str, frozenset[str] | None], WorkspaceList]
_known: dict[str, tuple[tuple[int, int], list[tuple[Any, ...]], Answers]] = {}
KNOWN_WORKSPACES_MAX = 10_000


def _workspace(workspace_id: str, arrived: float | None) -> tuple[list[tuple[Any, ...]], Answers]:
    epoch = (id(db.obj), epochs.read(arrived).workspaces)  # before the rows it guards (see `epochs`)
    known = _known.get(workspace_id)
    if known is not None and known[0] == epoch:
        return known[1], known[2]
    rows = hot.workspace_with_profiles(workspace_id)
    if len(_known) >= KNOWN_WORKSPACES_MAX and workspace_id not in _known:
        for oldest in list(_known)[: KNOWN_WORKSPACES_MAX // 10]:
            _known.pop(oldest, None)
    answers: Answers = {}
    _known[workspace_id] = (epoch, rows, answers)
    return rows, answers


def remove_member(*, workspace_id: str, user_id: str) -> None:
    """Take a person out of a workspace. Their dashboard sessions end at once, in every process: a
    page open in the workspace they left must not keep working. The last owner cannot leave."""
    membership = Membership.get_or_none(Membership.workspace == workspace_id, Membership.user == user_id)
    if membership is None:
        raise NotFound("No such member in this workspace.")
    if membership.role == "owner":
        owners = Membership.select().where(Membership.workspace == workspace_id, Membership.role == "owner").count()
        if owners <= 1:
            raise Conflict("The last owner of a workspace cannot be removed.")
    members.take_out(workspace_id=workspace_id, user_id=user_id)


def list_user_workspaces(*, user_id: str) -> list[dict[str, Any]]:
    """Every workspace a person belongs to (dashboard and the OAuth consent screen)."""
    rows = (
        Membership.select(Membership, Workspace)
        .join(Workspace)
        .where(Membership.user == user_id)
        .order_by(Workspace.created_at)
    )
    out = []
    for membership in rows:
        # A member or viewer limited to some profiles sees those alone.
        limited = membership.profile_ids if membership.role in ("member", "viewer") else None
        profiles = [
            {"id": p.id, "name": p.name}
            for p in Profile.select().where(Profile.workspace == membership.workspace_id).order_by(Profile.created_at)
            if limited is None or p.id in limited
        ]
        out.append(_workspace_record(membership.workspace.__data__, membership.role, profiles).dump())
    return out


MANAGE_PROFILES = "manage profiles"


def get_profile_row(*, actor: Actor, profile_id: str) -> Profile:
    profile = Profile.get_or_none(Profile.id == profile_id, Profile.workspace == actor.workspace_id)
    if profile is None:
        raise NotFound("No profile with that id.")
    actor.require_profile(profile.id)
    return profile


def create_profile_row(*, workspace_id: str, name: str) -> Profile:
    return Profile.create(id=ids.new_id("prf"), workspace=workspace_id, name=name)


def list_profiles(*, actor: Actor, page: int | None = None, limit: int | None = None) -> Page:
    query = Profile.select().where(Profile.workspace == actor.workspace_id)
    if actor.profile_ids is not None:
        query = query.where(Profile.id.in_(list(actor.profile_ids)))
    return paginate(query.order_by(Profile.created_at, Profile.id), page=page, limit=limit,
                    record=ProfileRecord)


def get_profile(*, actor: Actor, profile_id: str) -> ProfileRecord:
    return ProfileRecord.model_validate(get_profile_row(actor=actor, profile_id=profile_id))


def create_profile(*, actor: Actor, name: str) -> ProfileRecord:
    actor.require_role("admin", MANAGE_PROFILES)
    actor.require_write()
    # A new profile lies outside any fixed list, so only a workspace-wide key may make one.
    actor.require_full_scope("create profiles")
    profile = create_profile_row(workspace_id=actor.workspace_id, name=name)
    audit.record(actor, "profile.created", target=("profile", profile.id))
    return ProfileRecord.model_validate(profile)


# -- settings ------------------------------------------------------------------------------------


def confirms_before_reaching_people(workspace_id: str) -> bool:
    """Whether an assistant must ask the person before a tool reaches people (when it can ask)."""
    found = (Workspace.select(Workspace.confirm_before_reaching_people)
             .where(Workspace.id == workspace_id).scalar())
    return True if found is None else bool(found)


def get_settings(*, actor: Actor, workspace_id: str) -> WorkspaceSettings:
    if workspace_id != actor.workspace_id:
        raise NotFound("No workspace with that id.")
    approval = Workspace.select(Workspace.post_approval).where(Workspace.id == workspace_id).scalar()
    return WorkspaceSettings(confirm_before_reaching_people=confirms_before_reaching_people(workspace_id),
                             post_approval=bool(approval))


def update_settings(*, actor: Actor, workspace_id: str, confirm_before_reaching_people: bool | None = None,
                    post_approval: bool | None = None) -> WorkspaceSettings:
    """The workspace's settings: owners and admins, or a workspace-wide read-write key; never an
    assistant's own connection (no MCP tool changes them)."""
    if workspace_id != actor.workspace_id:
        raise NotFound("No workspace with that id.")
    actor.require_role("admin", "change the workspace's settings")
    actor.require_write()
    actor.require_full_scope("change the workspace's settings")
    changed: dict[str, Any] = {}
    if confirm_before_reaching_people is not None:
        changed["confirm_before_reaching_people"] = confirm_before_reaching_people
    if post_approval is not None:
        changed["post_approval"] = post_approval
    if changed:
        Workspace.update(**changed, updated_at=clock.now()).where(Workspace.id == workspace_id).execute()
        audit.record(actor, "workspace.settings_changed", target=("workspace", workspace_id),
                     details={to_camel(name): value for name, value in changed.items()})
    return get_settings(actor=actor, workspace_id=workspace_id)


def update_profile(*, actor: Actor, profile_id: str, name: str | None = None) -> ProfileRecord:
    profile = get_profile_row(actor=actor, profile_id=profile_id)
    actor.require_role("admin", MANAGE_PROFILES)
    actor.require_write()
    if name is not None:
        profile.name = name
        profile.updated_at = clock.now()
        profile.save()
        audit.record(actor, "profile.renamed", target=("profile", profile.id))
    return ProfileRecord.model_validate(profile)


def delete_profile(*, actor: Actor, profile_id: str) -> ProfileDeleted:
    profile = get_profile_row(actor=actor, profile_id=profile_id)
    actor.require_role("admin", MANAGE_PROFILES)
    actor.require_write()
    if Account.select().where(Account.profile == profile.id).exists():
        raise Conflict(
            "The profile still has accounts: disconnect them and delete them permanently first."
        )
    profile.delete_instance()
    audit.record(actor, "profile.deleted", target=("profile", profile.id), details={"name": profile.name})
    return ProfileDeleted(id=profile.id, deleted=True)
