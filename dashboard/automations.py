"""Comment automations: the list with stats, create and edit (every field of
`POST /v1/comment-automations`), pause and resume, delete, and the log comment by comment.

The posts an automation watches are picked from the account's recent posts as its platform lists
them (text and date, fetched live when the account is chosen: `recent_posts`), with a field for
platform post ids kept for a post the list does not reach, and for a browser without JavaScript."""

from __future__ import annotations

import datetime as dt
from typing import Any

from starlette.datastructures import FormData
from starlette.requests import Request
from starlette.responses import Response

from dashboard.actions import Thing
from dashboard.forms import PER_PAGE, account_names, account_rows, lines
from dashboard.views import Seat, data_of, field, in_own, render, seat
from kit.errors import ServiceError
from oauth.shell import in_db
from service.accounts import ops as accounts
from service.automations import ops as automations
from service.automations.shapes import CreateCommentAutomation, UpdateCommentAutomation

PAGE = "/dashboard/automations"
LOG_LIMIT = 100
MATCH_TYPES = {"contains": "Contains a keyword", "exact": "Is exactly a keyword", "any": "Any comment"}
REASONS = {"no_match": "No keyword matched.", "once_per_user": "This person already got the DM (once per user).",
           "already_replied": "The comment already had its private reply.",
           "outside_messaging_window": "The comment is older than the 7 days of private replies.",
           "account_disconnected": "The account was disconnected."}


def _watched(form: FormData) -> list[str]:
    """The posts picked from the list, then those typed by id; a listed post left unticked goes,
    even when its id is typed too (the list is what the person saw last)."""
    picked = [str(v) for v in form.getlist("pickedPosts") if str(v).strip()]
    listed = {str(v) for v in form.getlist("listedPosts")}
    typed = [i for i in lines(form, "mediaIds", commas=True) if i not in listed]
    return list(dict.fromkeys(picked + typed))


def _fields(form: FormData, *, editing: bool) -> dict[str, Any]:
    body: dict[str, Any] = {} if editing else {"accountId": field(form, "accountId")}
    body |= {
        "name": field(form, "name"), "keywords": lines(form, "keywords", commas=True),
        "matchType": field(form, "matchType"), "dmText": form.get("dmText") or "",
        "mediaIds": _watched(form), "oncePerUser": form.get("oncePerUser") == "on",
        "status": field(form, "status") or "active",
        "publicReplyText": field(form, "publicReplyText") or None,
    }
    label, url = field(form, "dmButtonLabel"), field(form, "dmButtonUrl")
    if label or url:
        body["dmButtonLabel"], body["dmButtonUrl"] = label, url
    elif editing:
        body["dmButtonLabel"] = ""  # emptied in the form: the button goes
    return body


def _listing(where: Seat) -> dict[str, Any]:
    actor = where.actor()
    names = account_names(actor)
    found = automations.list_automations(actor=actor, limit=PER_PAGE)
    return {"automations": [{**a, "account": names.get(a["accountId"], a["accountId"])} for a in data_of(found)],
            "total": found.total}


def _form_data(where: Seat, automation_id: str | None) -> dict[str, Any]:
    actor = where.actor()
    data: dict[str, Any] = {"accounts": account_rows(actor, capability="privateReplies"), "automation": None}
    if automation_id:
        record = automations.get(actor=actor, automation_id=automation_id).dump()
        logs = [{**row, "why": REASONS.get(row["reason"] or "", row["reason"] or "")}
                for row in data_of(automations.list_logs(actor=actor, automation_id=automation_id, limit=LOG_LIMIT))]
        names = account_names(actor)
        data.update(automation={**record, "account": names.get(record["accountId"], record["accountId"])}, logs=logs)
    return data


def _when(value: str | None) -> str:
    """A platform's ISO date as a person reads it (`2026-12-01T14:31:06+0000` → `1 December 2026, 14:31 UTC`)."""
    if not value:
        return ""
    try:
        moment = dt.datetime.fromisoformat(value.replace("+0000", "+00:00").replace("Z", "+00:00")).astimezone(dt.UTC)
    except ValueError:
        return value
    return f"{moment.day} {moment:%B %Y, %H:%M} UTC"


async def recent_posts(request: Request) -> Response:
    """GET `?accountId=&chosen=`: the account's recent posts to tick (htmx swaps them into the form)."""
    where = await seat(request)
    params = request.query_params
    account_id = params.get("accountId", "")
    chosen = set(params.getlist("chosen"))
    found: list[dict[str, Any]] = []
    problem_text = ""
    if account_id:
        actor = await in_db(where.actor)
        try:
            listed = await in_own(lambda: accounts.recent_posts(actor=actor, account_id=account_id))
            found = [{"id": p.platform_post_id, "text": p.text or "(no text)", "when": _when(p.published_at),
                      "url": p.url, "checked": p.platform_post_id in chosen} for p in listed]
        except ServiceError as problem:
            problem_text = {404: "No account with that id.",
                            422: "This account's platform does not list its posts: give them by their ids below."
                            }.get(problem.status, "Its recent posts could not be read just now: give them by their "
                                                  "ids below, or choose the account again.")
    return render(request, "automation_posts.html", posts=found, problem=problem_text, account_id=account_id)


AUTOMATIONS = Thing(
    base=PAGE, noun="automation", ops=automations, nav="automations",
    list_template="automations.html", list_title="Automations", list_load=_listing,
    edit_template="automation.html", edit_load=_form_data, edit_context={"match_types": MATCH_TYPES},
    fields=lambda form, editing: _fields(form, editing=editing),
    create_shape=CreateCommentAutomation, update_shape=UpdateCommentAutomation,
    delete_detail="It goes with its log. DMs already queued still go.",
)
