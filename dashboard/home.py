"""The home page: the person's workspaces, each with what needs attention first (unread
conversations, failed posts, accounts to reconnect, posts to review), then every account with its
follower trend, and the profiles. Things are named as a person reads them, never by their ids."""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from dashboard import views
from dashboard.forms import account_rows, contact_label, platform_name
from dashboard.views import data_of
from kit.errors import ServiceError
from oauth.shell import in_db, safe_next
from service.accounts import health
from service.analytics import ops as analytics
from service.identity import workspaces
from service.identity.auth import Actor, member_actor
from service.inbox import conversations
from service.posts import approvals, listing

SHOWN = 3  # the first few of each kind of attention, named; the count says how many in all


def _unread(actor: Actor) -> dict[str, Any]:
    found = conversations.list_conversations(actor=actor, unread=True, limit=SHOWN)
    return {"total": found.total, "first": [contact_label(c) for c in data_of(found)]}


def _failed(actor: Actor) -> dict[str, Any]:
    """Posts that did not reach every account: failed outright, or partly."""
    total, first = 0, []
    for status in ("failed", "partial"):
        found = listing.list_posts(actor=actor, status=status, limit=SHOWN)
        total += found.total
        first += [{"id": p["id"], "content": p["content"], "status": p["status"]} for p in data_of(found)]
    return {"total": total, "first": first[:SHOWN]}


def _accounts(actor: Actor) -> list[dict[str, Any]]:
    """Every account of the workspace (connected or not), with its follower trend where one is known."""
    trends = {summary["accountId"]: summary for summary in _follower_summaries(actor)}
    return [{**account, "trend": trends.get(account["id"])} for account in account_rows(actor, connected=False)]


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
        # One day is no line yet: the page says so rather than drawing a dot.
        drawn = (f"{i * step:.1f},{34 - (v - low) / span * 32:.1f}" for i, v in enumerate(values))
        points = " ".join(drawn) if len(values) > 1 else ""
        out.append({**account, "points": points})
    return out


def _home(user_id: str) -> list[dict[str, Any]]:
    spaces = workspaces.list_user_workspaces(user_id=user_id)
    for ws in spaces:
        actor = member_actor(user_id, ws["id"])
        ws["accounts"] = _accounts(actor)
        ws["unread"] = _unread(actor)
        ws["failed"] = _failed(actor)
        ws["calm"] = not (ws["unread"]["total"] or ws["failed"]["total"])
        # Owners and admins see what needs them first: accounts to reconnect, posts to review.
        manages = actor.has_role("admin")
        ws["attention"] = [{**account, "platformName": platform_name(account["platform"])}
                           for account in health.needing_attention(actor=actor)] if manages else []
        ws["review"] = [post.dump() for post in approvals.pending(actor=actor)] if manages else []
        ws["calm"] = ws["calm"] and not ws["attention"] and not ws["review"]
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
