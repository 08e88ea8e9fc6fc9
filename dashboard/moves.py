"""Moving a scheduled post to another day and time, always confirmed first.

`GET /dashboard/posts/{id}/move` is the "Move to…" page: a day and a time (in the calendar's time
zone) and, once both are given, the confirmation of the move from → to, checked by the same rules
as the move itself (the post still movable, the new time usable), so that what it offers is what
the move will do. The calendar's drag and drop asks for that confirmation alone (`?part=confirm`)
and shows it in a dialog. `POST` with `confirmed` moves the post: its own body sent back through
`posts.update` with the new time (in the post's own time zone), so every rule of a change holds.
A refused move keeps the page: the reason, in words, where the person is.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qsl

from starlette.datastructures import FormData, QueryParams
from starlette.requests import Request
from starlette.responses import Response

from dashboard import refusals
from dashboard.views import Seat, acting, done, field, in_own, not_found, page, render, seat
from kit import scheduling, shapes
from kit.errors import Conflict, NotFound, ServiceError, ValidationFailed
from oauth.shell import in_db, safe_next
from service.identity.auth import Actor
from service.posts import checks
from service.posts import ops as posts
from service.posts.shapes import PostIn

PAGE = "/dashboard/posts"
MISSING = "No post with that id."


@dataclass(frozen=True)
class Move:
    """A move as asked: the post as it can be changed, where it is now and where it would go."""

    post: dict[str, Any]
    zone_name: str  # the zone the day and time are given in (the calendar's)
    now_local: dt.datetime
    to_local: dt.datetime | None
    body: dict[str, Any] | None  # `PUT /v1/posts/{id}`'s body with the new time


def words(problem: ServiceError) -> str:
    """A refusal as a sentence a person reads: the service's field names become the page's words."""
    if isinstance(problem, NotFound):
        return "This post no longer exists."
    if not problem.details:
        return problem.message
    said = []
    for detail in problem.details:
        spot = refusals.field_of("move", detail.field)
        said.append(refusals.sentence(spot[1] if spot else "", detail.message))
    return " ".join(said)


def _when(moment: dt.datetime) -> str:
    return f"{moment:%A} {moment.day} {moment:%B %Y}, {moment:%H:%M}"


def _asked(actor: Actor, post_id: str, values: QueryParams | FormData) -> Move:
    """The post and the move the form asks for; a post that cannot change is refused here (409)."""
    post = posts.editable(actor=actor, post_id=post_id)
    if post["scheduled_for"] is None:
        raise Conflict("Only a scheduled post moves; give a draft its time in Edit.")
    zone_name = str(values.get("tz") or post["timezone"] or "UTC").strip()
    zone = scheduling.zone_named(zone_name, "tz")
    now_local = post["scheduled_for"].replace(tzinfo=dt.UTC).astimezone(zone)
    day_text, time_text = str(values.get("date") or "").strip(), str(values.get("time") or "").strip()
    if not day_text:
        return Move(post, zone_name, now_local, None, None)
    try:
        day = dt.date.fromisoformat(day_text)
    except ValueError:
        raise ValidationFailed.field("date", "must be a day (YYYY-MM-DD)") from None
    try:
        at = dt.time.fromisoformat(time_text) if time_text else now_local.time().replace(second=0)
    except ValueError:
        raise ValidationFailed.field("time", "must be a time of day (HH:MM)") from None
    to_local = dt.datetime.combine(day, at.replace(second=0, microsecond=0, tzinfo=None)).replace(tzinfo=zone)
    # Sent in the post's own zone, so the post keeps it (and its local time reads as the person chose).
    own_zone = post["timezone"] or "UTC"
    own = to_local.astimezone(scheduling.zone_named(own_zone))
    body = {"content": post["content"], "mediaIds": post["media_ids"],
            "targets": [{"accountId": t["account_id"],
                         **({"content": t["content"]} if t["content"] is not None else {}),
                         **({"options": t["options"]} if t["options"] else {})} for t in post["targets"]],
            "scheduledFor": own.strftime("%Y-%m-%dT%H:%M:%S"), "timezone": own_zone}
    return Move(post, zone_name, now_local, to_local, body)


def _judge(actor: Actor, move: Move) -> None:
    """The rules the move itself applies, before anything changes (the same check as `posts.update`)."""
    assert move.body is not None
    parsed = dict(shapes.parse(PostIn, move.body))
    checks.check(actor, content=parsed["content"], media_ids=list(parsed.get("media_ids") or []),
                 targets=parsed["targets"], scheduled_for=parsed.get("scheduled_for"),
                 timezone=parsed.get("timezone"), publish_now=None)


def _context(where: Seat, post_id: str, move: Move | None, back: str, refusal: str | None) -> dict[str, Any]:
    workspace_id = where.workspace_id
    return {"post_id": post_id, "move": move, "refusal": refusal,
            "back": safe_next(back) if back else f"{PAGE}/{post_id}?workspace={workspace_id}",
            "from_text": _when(move.now_local) if move else "",
            "to_text": _when(move.to_local) if move and move.to_local else ""}


async def _prepare(where: Seat, post_id: str, values: QueryParams | FormData
                   ) -> tuple[Move | None, str | None, int]:
    """The move asked for and its verdict: (move, refusal in words, status)."""
    actor = await in_db(where.actor)
    try:
        move = await in_db(lambda: _asked(actor, post_id, values))
    except ServiceError as problem:
        return None, words(problem), problem.status
    if move.body is None:
        return move, None, 200
    try:
        await in_own(lambda: _judge(actor, move))
    except ServiceError as problem:
        return move, words(problem), problem.status
    return move, None, 200


def _answer(request: Request, where: Seat, context: dict[str, Any], status: int, part: bool) -> Response:
    if part:
        return render(request, "move_confirm.html", status=status, workspace=where.workspace, **context)
    return page(request, "move.html", where, status=status, title="Move post", nav="calendar", **context)


async def move_page(request: Request) -> Response:
    """GET: the "Move to…" form, and the confirmation once a day (and time) is chosen."""
    post_id = request.path_params["id"]
    where = await seat(request)
    params = request.query_params
    move, refusal, status = await _prepare(where, post_id, params)
    if status == 404:
        return not_found(request, MISSING)
    context = _context(where, post_id, move, params.get("back", ""), refusal)
    return _answer(request, where, context, status, params.get("part") == "confirm")


async def move(request: Request) -> Response:
    """POST: without `confirmed`, the confirmation; with it, the move, then back where it was asked."""
    post_id = request.path_params["id"]
    where, form = await acting(request)
    part = field(form, "part") == "confirm"
    move, refusal, status = await _prepare(where, post_id, form)
    if status == 404 and move is None and not part:
        return not_found(request, MISSING)
    context = _context(where, post_id, move, field(form, "back"), refusal)
    if refusal is not None or move is None or move.body is None or field(form, "confirmed") != "yes":
        return _answer(request, where, context, status, part)
    actor = await in_db(where.actor)
    body = shapes.parse(PostIn, move.body)
    try:
        await in_own(lambda: posts.update(actor=actor, post_id=post_id, **dict(body)))
    except ServiceError as problem:
        context["refusal"] = words(problem)
        return _answer(request, where, context, problem.status, part)
    path, _, query = str(context["back"]).partition("?")
    params = {name: value for name, value in parse_qsl(query) if name != "workspace"}
    message = f"Moved the post from {context['from_text']} to {context['to_text']} ({move.zone_name})."
    return done(request, message, path, where, **params)
