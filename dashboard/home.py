"""The home page: the person's workspaces, each with its accounts' follower trend."""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from dashboard import views
from kit.errors import ServiceError
from oauth.shell import in_db, safe_next
from service.accounts import health
from service.analytics import ops as analytics
from service.identity import workspaces
from service.identity.auth import Actor, member_actor
from service.posts import approvals


def _follower_summaries(actor: Actor) -> list[dict[str, Any]]:
    try:
        # The record's /v1 JSON shape, camelCase as the template reads it.
        report = analytics.follower_analytics(actor=actor).dump()
    except ServiceError:
        return []
    out = []
    for account in report.get("accounts", []):
        # Days without a snapshot (before the account was connected) are left out, not drawn as 0.
        values = [point["followers"] for point in account.get("series", []) if point.get("followers") is not None]
        if not values:
            continue
        low, high = min(values), max(values)
        span = max(high - low, 1)
        step = 160 / max(len(values) - 1, 1)
        points = " ".join(f"{i * step:.1f},{34 - (v - low) / span * 32:.1f}" for i, v in enumerate(values))
        out.append({**account, "points": points})
    return out


def _home(user_id: str) -> list[dict[str, Any]]:
    spaces = workspaces.list_user_workspaces(user_id=user_id)
    for ws in spaces:
        actor = member_actor(user_id, ws["id"])
        ws["followers"] = _follower_summaries(actor)
        # Owners and admins see what needs them first: accounts to reconnect, posts to review.
        manages = actor.has_role("admin")
        ws["attention"] = health.needing_attention(actor=actor) if manages else []
        ws["review"] = [post.dump() for post in approvals.pending(actor=actor)] if manages else []
    return spaces


async def review(request: Request) -> Response:
    """Approve a member's post, or reject it with a reason (the approval queue on the first page)."""
    where, form = await views.acting(request)
    post_id = request.path_params["id"]
    decision = request.path_params["decision"]
    try:
        if decision == "approve":
            await in_db(lambda: approvals.approve(actor=where.actor(), post_id=post_id))
        else:
            await in_db(lambda: approvals.reject(actor=where.actor(), post_id=post_id,
                                                 reason=views.field(form, "reason")))
    except ServiceError as problem:
        return views.failure(request, problem, safe_next(views.field(form, "next") or "/dashboard"))
    back = views.field(form, "next") or "/dashboard"  # the Posts page's queue, or the first page's
    return views.done(request, "Approved: it goes out as planned." if decision == "approve" else "Rejected.",
                      safe_next(back), where)


async def home(request: Request) -> Response:
    user = await views.signed_in(request)
    spaces = await in_db(_home, user[0])
    return views.render(request, "home.html", title="Workspaces", nav="home", workspaces=spaces)
