"""Members and the audit log (owners and admins), and an invitation's link (anyone holding it).

Members: who is in the workspace with their role and profiles, changing a role, removing someone,
inviting by e-mail (the single-use link shown once on this page, and e-mailed when SMTP is
configured) and withdrawing an invitation. The audit log: every change and sign-in, newest first,
filtered by action. The invitation's page signs the invited person in (an existing user), or
makes their user with a password they choose, or sends them through the identity provider.
Every rule is the service's; these pages only show and ask.
"""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from dashboard import refusals, views
from dashboard.views import Seat, data_of, field
from kit.errors import ServiceError
from kit.settings import Settings
from oauth import shell
from oauth.shell import in_db, off_db
from service.identity import audit_log, invitations, members, roles, users, workspaces

PAGE = "/dashboard/members"
AUDIT = "/dashboard/audit-log"


def _listing(where: Seat) -> dict[str, Any]:
    actor = where.actor()
    actor.require_role("admin", members.MANAGE_MEMBERS)
    profiles = data_of(workspaces.list_profiles(actor=actor, limit=100))
    names = {profile["id"]: profile["name"] for profile in profiles}
    people = [{**m, "profileNames": [names.get(p, p) for p in m["profileIds"] or []]}
              for m in members.list_members(actor=actor).dump()["data"]]
    waiting = [i for i in data_of(invitations.list_invitations(actor=actor, limit=100)) if i["status"] == "pending"]
    return {"people": people, "invitations": waiting, "profiles": profiles, "roles": roles.ROLES,
            "me": actor.user_id, "my_role": actor.role}


async def members_page(request: Request) -> Response:
    where = await views.seated(request)
    created = None
    if request.method == "POST":
        form = await request.form()  # checked already (`seated`)
        profile_ids = [str(p) for p in form.getlist("profileIds")]
        try:
            created = (await off_db(lambda: invitations.invite(
                actor=where.actor(), email=field(form, "email"), role=field(form, "role") or "member",
                profile_ids=profile_ids or None))).dump()
        except ServiceError as problem:
            listing = await in_db(_listing, where)
            again = views.page(request, "members.html", where, title="Members", nav="members", created=None,
                               **listing)
            return refusals.again(again, problem.status, form, request.url.path,
                                  refusals.problems_of(problem, "invite", "invite-heading"))
    listing = await in_db(_listing, where)
    return views.page(request, "members.html", where, title="Members", nav="members", created=created, **listing)


async def change_member(request: Request) -> Response:
    where, form = await views.acting(request)
    user_id = request.path_params["id"]
    profile_ids = [str(p) for p in form.getlist("profileIds")]
    try:
        await in_db(lambda: members.change(actor=where.actor(), user_id=user_id, role=field(form, "role"),
                                           profile_ids=profile_ids or None))
    except ServiceError as problem:
        return views.failure(request, problem, PAGE)
    return views.done(request, "The member's role is changed.", PAGE, where)


async def remove_member(request: Request) -> Response:
    where = await views.seated(request)
    user_id = request.path_params["id"]
    if request.method == "GET":
        people = await in_db(lambda: members.list_members(actor=where.actor()).dump()["data"])
        person = next((p for p in people if p["userId"] == user_id), None)
        if person is None:
            return views.not_found(request, "No such member in this workspace.")
        return views.confirm(request, where, title="Remove member",
                             question=f"Remove {person['email']} from the workspace?",
                             detail="Their sessions end at once and the apps they connected lose access here.",
                             action=f"{PAGE}/{user_id}/remove", button="Remove",
                             cancel=f"{PAGE}?workspace={where.workspace_id}")
    try:
        await in_db(lambda: members.remove(actor=where.actor(), user_id=user_id))
    except ServiceError as problem:
        return views.failure(request, problem, PAGE)
    return views.done(request, "The member is removed.", PAGE, where)


async def revoke_invitation(request: Request) -> Response:
    where, _ = await views.acting(request)
    try:
        await in_db(lambda: invitations.revoke(actor=where.actor(), invitation_id=request.path_params["id"]))
    except ServiceError as problem:
        return views.failure(request, problem, PAGE)
    return views.done(request, "The invitation is withdrawn.", PAGE, where)


async def audit_page(request: Request) -> Response:
    where = await views.seat(request)
    action = request.query_params.get("action") or None
    actor_id = request.query_params.get("actorId") or None
    page = request.query_params.get("page") or "1"
    listing = await in_db(lambda: audit_log.list_entries(
        actor=where.actor(), action=action, actor_id=actor_id, page=int(page) if page.isdigit() else 1,
        limit=50).as_dict())
    return views.page(request, "audit_log.html", where, title="Audit log", nav="audit", rows=listing["data"],
                      pagination=listing["pagination"], action=action or "", actor_id=actor_id or "")


# --- the invitation's link ------------------------------------------------------------------------


def _oidc_name(settings: Settings) -> str | None:
    return settings.oidc_name if settings.oidc_issuer and settings.oidc_client_id else None


async def invitation_page(request: Request, settings: Settings) -> Response:
    token = request.path_params["token"]
    form = await request.form() if request.method == "POST" else None
    if form is not None and not shell.csrf_ok(request, form):
        return shell.forbidden_csrf(request)
    try:
        invited = await in_db(invitations.pending, token)
    except ServiceError as problem:
        return shell.error_page(request, problem.status, "This invitation cannot be used", views.explain(problem))
    if form is None:
        return views.render(request, "invitation.html", title="Join a workspace", invited=invited, token=token,
                            oidc=_oidc_name(settings), error=None)
    password = str(form.get("password") or "")
    address = request.client.host if request.client else None
    try:
        if invited.user_exists:
            user = await off_db(lambda: users.verify_password(email=invited.email, password=password))
            if user is None:
                return views.render(request, "invitation.html", status=401, title="Join a workspace", invited=invited,
                                    token=token, oidc=_oidc_name(settings), error="That password is not right.")
            user_id = user.id
            await in_db(invitations.accept, token, user_id=user_id, ip=address)
        else:
            user_id, _ = await off_db(lambda: invitations.accept_as_new_user(
                token, password=password, name=str(form.get("name") or "") or None, ip=address))
    except ServiceError as problem:
        return views.render(request, "invitation.html", status=problem.status, title="Join a workspace",
                            invited=invited, token=token, oidc=_oidc_name(settings), error=views.explain(problem))
    await shell.sign_in(request, user_id, invited.email, method="invitation")
    return RedirectResponse(f"/dashboard?workspace={invited.workspace_id}", status_code=303)
