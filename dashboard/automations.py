"""Comment automations: the list with stats, create and edit (every field of
`POST /v1/comment-automations`), pause and resume, delete, and the log comment by comment."""

from __future__ import annotations

from typing import Any

from starlette.datastructures import FormData

from dashboard.actions import Thing
from dashboard.forms import PER_PAGE, account_names, account_rows, lines
from dashboard.views import Seat, data_of, field
from service.automations import ops as automations
from service.automations.shapes import CreateCommentAutomation, UpdateCommentAutomation

PAGE = "/dashboard/automations"
LOG_LIMIT = 100
MATCH_TYPES = {"contains": "Contains a keyword", "exact": "Is exactly a keyword", "any": "Any comment"}
REASONS = {"no_match": "No keyword matched.", "once_per_user": "This person already got the DM (once per user).",
           "already_replied": "The comment already had its private reply.",
           "outside_messaging_window": "The comment is older than the 7 days of private replies.",
           "account_disconnected": "The account was disconnected."}


def _fields(form: FormData, *, editing: bool) -> dict[str, Any]:
    body: dict[str, Any] = {} if editing else {"accountId": field(form, "accountId")}
    body |= {
        "name": field(form, "name"), "keywords": lines(form, "keywords", commas=True),
        "matchType": field(form, "matchType"), "dmText": form.get("dmText") or "",
        "mediaIds": lines(form, "mediaIds", commas=True), "oncePerUser": form.get("oncePerUser") == "on",
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


AUTOMATIONS = Thing(
    base=PAGE, noun="automation", ops=automations, nav="automations",
    list_template="automations.html", list_title="Automations", list_load=_listing,
    edit_template="automation.html", edit_load=_form_data, edit_context={"match_types": MATCH_TYPES},
    fields=lambda form, editing: _fields(form, editing=editing),
    create_shape=CreateCommentAutomation, update_shape=UpdateCommentAutomation,
    delete_detail="It goes with its log. DMs already queued still go.",
)
