"""Broadcasts: the list with counts, New broadcast (every field of `POST /v1/broadcasts`, with an
audience preview asked of the server as the person chooses), a broadcast's page with a progress bar
that follows the sending by itself (htmx), Send now, Cancel, Delete for drafts, and the recipients."""

from __future__ import annotations

from typing import Any

from starlette.datastructures import FormData
from starlette.requests import Request
from starlette.responses import HTMLResponse, Response

from dashboard import refusals, views
from dashboard.forms import (
    PER_PAGE,
    account_names,
    account_rows,
    contact_label,
    form_key,
    labels,
    lines,
    number,
    once,
    scheduled,
)
from dashboard.views import Seat, data_of, field
from kit import shapes
from kit.errors import ServiceError, ValidationFailed
from oauth.shell import in_db
from service.accounts import ops as accounts
from service.broadcasts import audience
from service.broadcasts import ops as broadcasts
from service.broadcasts.shapes import CreateBroadcast
from service.identity.auth import Actor
from service.inbox import conversations

PAGE = "/dashboard/broadcasts"
RECIPIENTS = 100
CHOOSABLE = 200  # conversations offered by name in the form; beyond, the activity window chooses
REASONS = {"outside_messaging_window": "Outside the platform's messaging window: skipped.",
           "cancelled": "Not sent: the broadcast was cancelled."}


def _body(form: FormData, action: str) -> dict[str, Any]:
    body: dict[str, Any] = {"accountId": field(form, "accountId"), "name": field(form, "name")}
    template = field(form, "template")
    if template:
        name, _, language = template.partition("|")
        body["template"] = {"name": name, "language": language, "parameters": lines(form, "parameters")}
    else:
        text = form.get("text")
        body["text"] = text if isinstance(text, str) else ""
    if field(form, "buttonLabel") or field(form, "buttonUrl"):
        body["buttonLabel"], body["buttonUrl"] = field(form, "buttonLabel") or None, field(form, "buttonUrl") or None
    chosen = [str(c) for c in form.getlist("conversationIds")]
    days = field(form, "activeWithinDays")
    if chosen or days:
        body["audience"] = {"conversationIds": chosen} if chosen else {"activeWithinDays": number(days)}
    if action == "send":
        body["sendNow"] = True
    elif action == "schedule":
        body |= scheduled(form, "send")
    return body


def _form_data(where: Seat) -> dict[str, Any]:
    actor = where.actor()
    known = account_rows(actor, capability="dm")
    names = labels(known)
    offered: list[dict[str, Any]] = []
    for item in data_of(conversations.list_conversations(actor=actor, limit=100)):
        if item["accountId"] in names and len(offered) < CHOOSABLE:
            offered.append({**item, "contact": contact_label(item), "account": names[item["accountId"]]})
    return {"accounts": known, "conversations": offered}


def _templates(actor: Actor, known: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each WhatsApp account's approved templates, read live (outside any transaction)."""
    found = []
    for account in known:
        if not account["capabilities"].get("templates"):
            continue
        try:
            for item in accounts.templates(actor=actor, account_id=account["id"])["data"]:
                found.append({**item, "account": account["label"]})
        except ServiceError:
            continue
    return found


def _listing(where: Seat, status: str) -> dict[str, Any]:
    actor = where.actor()
    names = account_names(actor)
    found = broadcasts.list_broadcasts(actor=actor, status=status or None, limit=PER_PAGE)
    items = [{**b, "account": names.get(b["accountId"], b["accountId"])} for b in data_of(found)]
    return {"broadcasts": items, "total": found.total}


def _progress(where: Seat, broadcast_id: str) -> dict[str, Any]:
    actor = where.actor()
    record = broadcasts.get(actor=actor, broadcast_id=broadcast_id).dump()
    counts = record["counts"]
    done = counts["sent"] + counts["failed"] + counts["skipped"]
    found = broadcasts.recipients(actor=actor, broadcast_id=broadcast_id, limit=RECIPIENTS)
    known = {c["id"]: c for c in data_of(conversations.list_conversations(actor=actor, limit=100,
                                                                          account_id=record["accountId"]))}
    rows = [{**r, "contact": contact_label(known[r["conversationId"]]) if r["conversationId"] in known
             else r["conversationId"], "why": REASONS.get(r["reason"] or "", r["reason"] or "")}
            for r in data_of(found)]
    percent = round(done * 100 / counts["targeted"]) if counts["targeted"] else (
        100 if record["status"] == "completed" else 0)
    return {"broadcast": record, "done": done, "percent": percent, "recipients": rows,
            "more_recipients": found.total - len(rows), "live": record["status"] in ("scheduled", "sending")}


PROGRESS = views.Live(template="broadcast_progress.html", seen_id="progress-seen", load=_progress,
                      missing="No broadcast with that id.")
# What each action on a broadcast's page does, and what the person reads after it.
ACTIONS = {"cancel": (broadcasts.cancel, "Cancelled the broadcast."), "send": (broadcasts.send_now, "Sending now."),
           "delete": (broadcasts.delete, "Deleted the draft.")}


async def list_page(request: Request) -> Response:
    where = await views.seat(request)
    try:
        listed = await in_db(_listing, where, request.query_params.get("status", ""))
    except ServiceError as problem:
        return views.failure(request, problem, PAGE)
    return views.page(request, "broadcasts.html", where, title="Broadcasts", nav="broadcasts", **listed)


async def new_page(request: Request) -> Response:
    where = await views.seat(request)
    return await _new_page(request, where)


async def _new_page(request: Request, where: Seat) -> HTMLResponse:
    """New broadcast, empty (what a refusal fills in again)."""
    data = await in_db(_form_data, where)
    actor = await in_db(where.actor)
    templates = await views.in_own(lambda: _templates(actor, data["accounts"]))
    return views.page(request, "broadcast_new.html", where, title="New broadcast", nav="broadcasts",
                      templates=templates, form_key=form_key(), **data)


def _previewed(where: Seat, form: FormData) -> audience.AudiencePreview:
    """The audience, once every rule Send now or Schedule applies holds (a refusal raised)."""
    actor = where.actor()
    account_id = field(form, "accountId")
    if not account_id:
        raise ValidationFailed.field("accountId", "choose an account")
    action = "schedule" if field(form, "scheduledFor") else "draft"
    body = _body(form, action)
    # What is still blank is not judged yet (the preview runs from the first choice on); Send judges it.
    body["name"] = body["name"] or "Preview"
    if "text" in body and not body["text"].strip():
        body["text"] = "Preview"
    parsed = dict(shapes.parse(CreateBroadcast, body))
    broadcasts.check(actor=actor, **parsed)
    chosen = parsed.get("audience")
    return audience.preview(actor=actor, account_id=account_id,
                            conversation_ids=list(chosen.conversation_ids or []) or None if chosen else None,
                            active_within_days=chosen.active_within_days if chosen else None,
                            template=bool(field(form, "template")))


async def preview(request: Request) -> Response:
    where, form = await views.acting(request)
    if not field(form, "accountId"):
        return views.render(request, "broadcast_preview.html", waiting=True)
    try:
        found = await in_db(_previewed, where, form)
    except ServiceError as problem:
        said = refusals.problems_of(problem, "broadcast", "broadcast")
        return views.render(request, "broadcast_preview.html", problems=[p.message for p in said])
    return views.render(request, "broadcast_preview.html", preview=found)


async def create(request: Request) -> Response:
    where, form = await views.acting(request)
    action = field(form, "action")
    try:
        if action not in ("send", "schedule", "draft"):
            raise ValidationFailed.field("action", "choose Send now, Schedule or Save draft")
        body = shapes.parse(CreateBroadcast, _body(form, action))
        made = await once(request, where, form, lambda actor: broadcasts.create(actor=actor, **dict(body)))
    except ServiceError as problem:
        if problem.status == 404:
            return views.not_found(request, "No account with that id.")
        again = await _new_page(request, where)
        return refusals.again(again, problem.status, form, request.url.path,
                              refusals.problems_of(problem, "broadcast", "broadcast"))
    if made is None:
        return views.done(request, "This broadcast was saved already (the form was sent twice).", PAGE, where)
    views.flash(request, {"send": "Sending now.", "schedule": "Scheduled.", "draft": "Saved as a draft."}[action])
    return views.back_to(f"{PAGE}/{made.id}", where)


async def broadcast_page(request: Request) -> Response:
    where = await views.seat(request)
    data = await PROGRESS.read(request, where, request.path_params["id"])
    return views.page(request, "broadcast.html", where, title=data["broadcast"]["name"], nav="broadcasts",
                      progress_html=PROGRESS.first(request, where, data), **data)


async def act(request: Request) -> Response:
    """Cancel, Send now, or Delete a draft (a confirmation page first): then back to its page, or to
    the list after a deletion."""
    broadcast_id = request.path_params["id"]
    name = request.url.path.rsplit("/", 1)[1]
    back = f"{PAGE}/{broadcast_id}"
    where = await views.seated(request)
    operation, message = ACTIONS[name]
    try:
        if name == "delete" and request.method == "GET":
            found = await in_db(lambda: broadcasts.get(actor=where.actor(), broadcast_id=broadcast_id))
            return views.confirm(request, where, title="Delete broadcast", question=f"Delete the draft {found.name}?",
                                 detail="Nothing was sent; the draft goes.", action=f"{back}/delete",
                                 button="Delete", cancel=f"{back}?workspace={where.workspace_id}")
        await in_db(lambda: operation(actor=where.actor(), broadcast_id=broadcast_id))
    except ServiceError as problem:
        return views.refused(request, problem, back, PROGRESS.missing)
    return views.done(request, message, PAGE if name == "delete" else back, where)
