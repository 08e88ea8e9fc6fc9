"""The inbox: conversations filtered by platform, account and unread, a thread with each message's
status, the reply box, marking read. The list and the thread are partials (`inbox_list.html`,
`inbox_thread.html`) that the page asks for again every second (htmx), answered 204 when
nothing changed, so a new message or a status change shows without reloading."""

from __future__ import annotations

import datetime as dt
import secrets
from typing import Any
from urllib.parse import urlencode

from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response

from dashboard import refusals, views
from dashboard.forms import account_name, contact_label, once, platform_name
from dashboard.views import Seat, data_of, field, flash
from kit import clock, shapes
from kit.errors import ServiceError, ValidationFailed
from oauth.shell import in_db
from service.accounts import ops as accounts
from service.accounts import platforms
from service.identity import members
from service.inbox import conversations, outbound, saved_replies, sharing
from service.inbox.shapes import MAX_TEXT, ConversationQuery, Template

PAGE = "/dashboard/inbox"
LIST_LIMIT = 30
THREAD_LIMIT = 100
# What each status means to the person reading the thread.
STATUS_TEXT = {
    "received": "Received",
    "pending": "Pending: waiting for its turn to be sent",
    "sending": "Sending",
    "sent": "Sent",
    "delivered": "Delivered",
    "read": "Read by the contact",
    "failed": "Failed",
    "unknown": "Unknown: the service stopped while the platform was being asked to send it. It may have "
               "arrived; it is not sent again automatically, so check on the platform before resending.",
}


# The shared inbox's views of the list: (value, what the person reads).
SHOWS = (("", "Everything"), ("mine", "Mine"), ("unassigned", "Unassigned"), ("open", "Open"),
         ("resolved", "Resolved"), ("snoozed", "Snoozed"))


class Filters:
    """The list's filters from the query string, checked by the `/v1` query's own shape."""

    def __init__(self, request: Request, user_id: str) -> None:
        params = request.query_params
        # Every platform whose accounts hold conversations (the service's own filter takes any of
        # them; /v1's query is the contract's narrower list, so the platform is checked here).
        self.platform = params.get("platform", "").lower()
        if self.platform and self.platform not in platforms.with_conversations():
            raise ValidationFailed.field("platform", "is not a platform with conversations")
        self.account = params.get("account", "")
        self.unread = params.get("unread") == "1"
        self.show = params.get("show", "") if params.get("show", "") in dict(SHOWS) else ""
        self.q = params.get("q", "").strip()
        raw_page = params.get("page", "")
        query: dict[str, Any] = {}
        if self.account:
            query["accountId"] = self.account
        if raw_page:
            query["page"] = raw_page
        if self.q:
            query["q"] = self.q
        if self.show == "mine":
            query["assigneeId"] = user_id
        elif self.show == "unassigned":
            query["assigneeId"] = "none"
        elif self.show:
            query["status"] = self.show
        self.query = shapes.parse(ConversationQuery, query)  # ValidationFailed: a 422 page
        self.page = self.query.page or 1

    def params(self, where: Seat, **extra: Any) -> str:
        values = {"workspace": where.workspace_id, "platform": self.platform, "account": self.account,
                  "unread": "1" if self.unread else "", "show": self.show, "q": self.q, **extra}
        return urlencode({k: v for k, v in values.items() if v})


def _list(where: Seat, filters: Filters) -> dict[str, Any]:
    actor = where.actor()
    found = conversations.list_conversations(
        actor=actor, **{**dict(filters.query), "limit": LIST_LIMIT, "platform": filters.platform or None},
        unread=filters.unread)
    known = {a["id"]: a for a in data_of(accounts.list_accounts(actor=actor, limit=100))}
    listed = data_of(found)
    previews = sharing.previews(actor=actor, conversation_ids=[item["id"] for item in listed])
    people = {m["userId"]: m["email"] for m in members.list_members(actor=actor).dump()["data"]}
    items = []
    for item in listed:
        account = known.get(item["accountId"])
        items.append({**item, "contact": contact_label(item), "platformName": platform_name(item["platform"]),
                      "accountName": account_name(account) if account else "",
                      "preview": previews.get(item["id"], "")[:120],
                      "assignee": "you" if item["assigneeId"] == actor.user_id else people.get(item["assigneeId"])})
    return {"conversations": items, "total": found.total, "pages": found.pages,
            "accounts": [{**a, "label": f"{platform_name(a['platform'])} · {account_name(a)}"} for a in known.values()]}


def _thread(where: Seat, conversation_id: str) -> dict[str, Any]:
    actor = where.actor()
    conversation = conversations.get_conversation(actor=actor, conversation_id=conversation_id).dump()
    first = conversations.get_messages(actor=actor, conversation_id=conversation_id, limit=THREAD_LIMIT)
    found = first if first.pages <= 1 else conversations.get_messages(
        actor=actor, conversation_id=conversation_id, limit=THREAD_LIMIT, page=first.pages)
    messages = [{**m, "statusText": STATUS_TEXT.get(m["status"], m["status"])} for m in data_of(found)]
    account = accounts.get(actor=actor, account_id=conversation["accountId"]).dump()
    notes = data_of(sharing.list_notes(actor=actor, conversation_id=conversation_id, limit=100))
    people = {m["userId"]: m["email"] for m in members.list_members(actor=actor).dump()["data"]}
    return {"conversation": {**conversation, "contact": contact_label(conversation),
                             "platformName": platform_name(conversation["platform"]),
                             "accountName": account_name(account), "accountStatus": account["status"],
                             # Without buttons, a button went as its link on a line of its own.
                             "buttons": account["capabilities"].get("button") is not None,
                             "assignee": people.get(conversation["assigneeId"])},
            "messages": messages, "earlier": found.total - len(messages),
            "notes": [{**note, "author": people.get(note["authorId"], "an API key")} for note in notes],
            "people": people, "me": actor.user_id, "can_write": actor.can_write,
            "saved_replies": data_of(saved_replies.list_replies(actor=actor, limit=100))}


THREAD = views.Live(template="inbox_thread.html", seen_id="thread-seen", load=_thread,
                    missing="No conversation with that id.")


async def inbox_page(request: Request) -> Response:
    conversation_id = request.path_params.get("id")
    where = await views.seat(request)
    return await _inbox_page(request, where, conversation_id)


async def _inbox_page(request: Request, where: Seat, conversation_id: str | None) -> HTMLResponse:
    """The inbox, with a conversation's thread (also what a refused reply is filled in again on)."""
    filters, listed = await _listed(request, where)
    thread = await THREAD.read(request, where, conversation_id) if conversation_id else None
    listed["shows"] = SHOWS
    templates = await _templates(where, thread["conversation"]) if thread else None
    context = {"filters": filters, "query": filters.params(where), "current": conversation_id,
               "templates": templates, "reply_key": secrets.token_urlsafe(24),
               "platforms": [(p, platform_name(p)) for p in platforms.with_conversations()],
               "max_text": MAX_TEXT, **listed, **(thread or {})}
    list_html, _ = views.fragment(request, "inbox_list.html", "list-seen", workspace=where.workspace, **context)
    thread_html = THREAD.first(request, where, context) if thread else ""
    return views.page(request, "inbox.html", where, title="Inbox", nav="inbox", list_html=list_html,
                      thread_html=thread_html, **context)


async def live_list(request: Request) -> Response:
    where = await views.seat(request)
    filters, listed = await _listed(request, where)
    return views.partial(request, "inbox_list.html", "list-seen", workspace=where.workspace, filters=filters,
                         query=filters.params(where), current=request.query_params.get("current"), **listed)


async def _listed(request: Request, where: Seat) -> tuple[Filters, dict[str, Any]]:
    """The list's filters and what they find; refused filters are the failure page."""
    try:
        filters = Filters(request, where.user_id)
        return filters, await in_db(_list, where, filters)
    except ValidationFailed as problem:
        raise views.NoSeat(views.failure(request, problem, PAGE)) from None
    except ServiceError:
        raise views.NoSeat(views.not_found(request, THREAD.missing)) from None


async def reply(request: Request) -> Response:
    conversation_id = request.path_params["id"]
    where, form = await views.acting(request)
    back = f"{PAGE}/{conversation_id}?" + urlencode({"workspace": where.workspace_id, **_kept_filters(form)})
    try:
        text, template = field(form, "text"), _chosen_template(form)
    except ServiceError as problem:
        return await _reply_again(request, where, form, problem)
    saved = field(form, "savedReplyId")
    if saved and not text and template is None:
        content_saved: dict[str, Any] = {"saved_reply_id": saved}
        try:
            sent_saved = await once(request, where, form, lambda actor: outbound.send_message(
                actor=actor, conversation_id=conversation_id, **content_saved),
                answer=lambda sent: (sent.status, {"id": sent.record.id}))
        except ServiceError as problem:
            return await _reply_again(request, where, form, problem)
        flash(request, "Saved reply sent." if sent_saved is not None else "This message was sent already.")
        return RedirectResponse(back, status_code=303)
    if not text and template is None:
        return await _reply_again(request, where, form,
                                  ValidationFailed.field("text", "is required: write a message first"))
    content: dict[str, Any] = {"template": template} if template is not None else {"text": text}
    # A link button goes with a text message: the service checks it as /v1 does (both parts,
    # an https URL, what the platform takes), so a half-filled pair is a clear refusal.
    label, url = field(form, "buttonLabel"), field(form, "buttonUrl")
    if template is None and (label or url):
        content.update(button_label=label or None, button_url=url or None)
    try:
        actor = await in_db(where.actor)
        # Another workspace's conversation is a 404 before anything else is looked at.
        await in_db(lambda: conversations.get_row(actor=actor, conversation_id=conversation_id))
        sent = await once(request, where, form,
                          lambda actor: outbound.send_message(actor=actor, conversation_id=conversation_id, **content),
                          answer=lambda sent: (sent.status, {"id": sent.record.id}))
    except ServiceError as problem:
        if problem.status in (404, 502):
            return _refused_reply(request, problem, back)
        return await _reply_again(request, where, form, problem)
    if sent is None:
        flash(request, "This message was sent already (the form was sent twice).")
    else:
        flash(request, "Message sent." if sent.status == 201 else
              "Message queued: it is sent as soon as the platform allows.")
    return RedirectResponse(back, status_code=303)


async def _reply_again(request: Request, where: Seat, form: Any, problem: ServiceError) -> Response:
    """A refused reply: the conversation again, the typed message kept, the problem beside it."""
    if problem.status == 404:
        return views.not_found(request, THREAD.missing)
    again = await _inbox_page(request, where, request.path_params["id"])
    return refusals.again(again, problem.status, form, request.url.path,
                          refusals.problems_of(problem, "reply", "reply-text"))


def _refused_reply(request: Request, problem: ServiceError, back: str) -> Response:
    """Another workspace's conversation: the 404 page; the platform refused (502): the thread shows
    the failed message and why."""
    if problem.status == 404:
        return views.not_found(request, THREAD.missing)
    flash(request, "The platform refused the message; the thread shows why.", "bad")
    return RedirectResponse(back, status_code=303)


async def mark_read(request: Request) -> Response:
    conversation_id = request.path_params["id"]
    where, form = await views.acting(request)
    try:
        await in_db(lambda: conversations.mark_read(actor=where.actor(), conversation_id=conversation_id))
    except ServiceError:
        return views.not_found(request, THREAD.missing)
    return views.done(request, "Marked as read.", f"{PAGE}/{conversation_id}", where, **_kept_filters(form))


async def _templates(where: Seat, conversation: dict[str, Any]) -> list[dict[str, Any]] | str | None:
    """The account's approved templates (WhatsApp's), asked of the platform (a network call, so outside
    any transaction); None for a platform without templates, a sentence when they could not be read."""
    account_id = conversation["accountId"]
    if not platforms.has_templates(conversation["platform"]) or conversation["accountStatus"] != "connected":
        return None
    try:
        actor = await in_db(where.actor)
        found = await views.in_own(lambda: accounts.templates(actor=actor, account_id=account_id))
    except ServiceError as problem:
        return f"The templates could not be read: {problem.message}"
    return list(found["data"])


def _chosen_template(form: Any) -> Template | None:
    """The template picked in the reply form (`name|language`), with one parameter a line."""
    picked = field(form, "template")
    if not picked:
        return None
    name, _, language = picked.partition("|")
    parameters = [line.strip() for line in field(form, "parameters").splitlines() if line.strip()]
    return shapes.parse(Template, {"name": name, "language": language, "parameters": parameters})


def _kept_filters(form: Any) -> dict[str, str]:
    """The list's filters a thread's forms carry, so the page after the action shows the same list."""
    return {name: field(form, name) for name in ("platform", "account", "unread", "show", "q") if field(form, name)}


SNOOZES = {"1h": dt.timedelta(hours=1), "4h": dt.timedelta(hours=4), "1d": dt.timedelta(days=1),
           "1w": dt.timedelta(days=7)}


async def share(request: Request) -> Response:
    """The shared inbox's actions on a conversation: assign (to me, to someone, to no one), labels,
    resolve, reopen, snooze. Every rule is the service's (`sharing.update`)."""
    conversation_id = request.path_params["id"]
    where, form = await views.acting(request)
    action = field(form, "action")
    changes: dict[str, Any] = {}
    if action == "assign_me":
        changes["assignee_id"] = where.user_id
    elif action == "assign":
        changes["assignee_id"] = field(form, "assigneeId") or None
    elif action == "labels":
        changes["labels"] = [part.strip() for part in field(form, "labels").split(",") if part.strip()]
    elif action in ("resolve", "reopen"):
        changes["status"] = "resolved" if action == "resolve" else "open"
    elif action == "snooze":
        until = clock.now() + SNOOZES.get(field(form, "for"), SNOOZES["4h"])
        changes.update(status="snoozed", snoozed_until=clock.iso(until))
    back = f"{PAGE}/{conversation_id}"
    try:
        await in_db(lambda: sharing.update(actor=where.actor(), conversation_id=conversation_id, **changes))
    except ServiceError as problem:
        if problem.status == 404:  # another workspace's conversation: nothing of it shows
            return views.not_found(request, THREAD.missing)
        return views.failure(request, problem, back)
    words = {"assign_me": "Assigned to you.", "assign": "Assignee changed.", "labels": "Labels saved.",
             "resolve": "Resolved.", "reopen": "Open again.", "snooze": "Snoozed."}
    return views.done(request, words.get(action, "Saved."), back, where, **_kept_filters(form))


async def add_note(request: Request) -> Response:
    conversation_id = request.path_params["id"]
    where, form = await views.acting(request)
    back = f"{PAGE}/{conversation_id}"
    try:
        await in_db(lambda: sharing.add_note(actor=where.actor(), conversation_id=conversation_id,
                                             text=field(form, "note")))
    except ServiceError as problem:
        if problem.status == 404:
            return views.not_found(request, THREAD.missing)
        return views.failure(request, problem, back)
    return views.done(request, "Note added (only your team sees it).", back, where, **_kept_filters(form))
