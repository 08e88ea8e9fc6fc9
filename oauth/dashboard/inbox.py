"""The inbox: conversations filtered by platform, account and unread, a thread with each message's
status, the reply box, marking read. The list and the thread are partials (`inbox_list.html`,
`inbox_thread.html`) that the page asks for again every second (htmx), answered 204 when
nothing changed, so a new message or a status change shows without reloading."""

from __future__ import annotations

import secrets
from typing import Any
from urllib.parse import urlencode

from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import Route

from kit import shapes
from kit.errors import ServiceError, ValidationFailed
from kit.settings import Settings
from oauth.dashboard.accounts import account_name, platform_name
from oauth.dashboard.console import (
    NoSeat,
    Seat,
    acting,
    failure,
    field,
    flash,
    fragment,
    in_own,
    not_found,
    page,
    partial,
    seat,
)
from oauth.dashboard.shell import data_of, in_db
from service.accounts import ops as accounts
from service.common import idempotency
from service.identity.auth import Actor
from service.inbox import conversations, outbound
from service.inbox.shapes import MAX_TEXT, PLATFORM_FILTER, ConversationQuery, Template

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


class Filters:
    """The list's filters from the query string, checked by the `/v1` query's own shape."""

    def __init__(self, request: Request) -> None:
        params = request.query_params
        self.platform = params.get("platform", "")
        self.account = params.get("account", "")
        self.unread = params.get("unread") == "1"
        raw_page = params.get("page", "")
        query: dict[str, Any] = {}
        if self.platform:
            query["platform"] = self.platform
        if self.account:
            query["accountId"] = self.account
        if raw_page:
            query["page"] = raw_page
        self.query = shapes.parse(ConversationQuery, query)  # ValidationFailed: a 422 page
        self.page = self.query.page or 1

    def params(self, where: Seat, **extra: Any) -> str:
        values = {"workspace": where.workspace_id, "platform": self.platform, "account": self.account,
                  "unread": "1" if self.unread else "", **extra}
        return urlencode({k: v for k, v in values.items() if v})


def contact_label(conversation: dict[str, Any]) -> str:
    return str(conversation.get("contactName") or conversation.get("contactHandle")
               or conversation.get("externalConversationId") or "Unknown contact")


def _list(where: Seat, filters: Filters) -> dict[str, Any]:
    actor = where.actor()
    found = conversations.list_conversations(actor=actor, **{**dict(filters.query), "limit": LIST_LIMIT},
                                             unread=filters.unread)
    known = {a["id"]: a for a in data_of(accounts.list_accounts(actor=actor, limit=100))}
    items = []
    for item in data_of(found):
        account = known.get(item["accountId"])
        items.append({**item, "contact": contact_label(item), "platformName": platform_name(item["platform"]),
                      "accountName": account_name(account) if account else ""})
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
    return {"conversation": {**conversation, "contact": contact_label(conversation),
                             "platformName": platform_name(conversation["platform"]),
                             "accountName": account_name(account), "accountStatus": account["status"]},
            "messages": messages, "earlier": found.total - len(messages)}


def routes(settings: Settings, middleware: list[Middleware]) -> list[Route]:
    async def inbox_page(request: Request) -> Response:
        conversation_id = request.path_params.get("id")
        try:
            where = await seat(request)
            filters = Filters(request)
            listed = await in_db(_list, where, filters)
            thread = await in_db(_thread, where, conversation_id) if conversation_id else None
        except NoSeat as no:
            return no.response
        except ValidationFailed as problem:
            return failure(request, problem, PAGE)
        except ServiceError:
            return not_found(request, "No conversation with that id.")
        templates = await _templates(where, thread["conversation"]) if thread else None
        context = {"filters": filters, "query": filters.params(where), "current": conversation_id,
                   "templates": templates, "reply_key": secrets.token_urlsafe(24),
                   "platforms": PLATFORM_FILTER, "max_text": MAX_TEXT, **listed, **(thread or {})}
        list_html, _ = fragment(request, "inbox_list.html", "list-seen", workspace=where.workspace, **context)
        thread_html = fragment(request, "inbox_thread.html", "thread-seen", workspace=where.workspace,
                               **context)[0] if thread else ""
        return page(request, "inbox.html", where, title="Inbox", nav="inbox", list_html=list_html,
                    thread_html=thread_html, **context)

    async def live_list(request: Request) -> Response:
        try:
            where = await seat(request)
            filters = Filters(request)
            listed = await in_db(_list, where, filters)
        except NoSeat as no:
            return no.response
        except ValidationFailed as problem:
            return failure(request, problem, PAGE)
        return partial(request, "inbox_list.html", "list-seen", workspace=where.workspace, filters=filters,
                       query=filters.params(where), current=request.query_params.get("current"), **listed)

    async def live_thread(request: Request) -> Response:
        try:
            where = await seat(request)
            thread = await in_db(_thread, where, request.path_params["id"])
        except NoSeat as no:
            return no.response
        except ServiceError:
            return not_found(request, "No conversation with that id.")
        return partial(request, "inbox_thread.html", "thread-seen", workspace=where.workspace, **thread)

    async def reply(request: Request) -> Response:
        conversation_id = request.path_params["id"]
        try:
            where, form = await acting(request)
        except NoSeat as no:
            return no.response
        back = f"{PAGE}/{conversation_id}?" + urlencode({"workspace": where.workspace_id,
                                                        **_kept_filters(form)})
        try:
            text, template = field(form, "text"), _chosen_template(form)
        except ServiceError as problem:
            return failure(request, problem, back)
        if not text and template is None:
            return failure(request, ValidationFailed.field("text", "is required: write a message first"), back)
        content: dict[str, Any] = {"template": template} if template is not None else {"text": text}
        # A link button goes with a text message: the service checks it as /v1 does (both parts,
        # an https URL, what the platform takes), so a half-filled pair is a clear refusal.
        label, url = field(form, "buttonLabel"), field(form, "buttonUrl")
        if template is None and (label or url):
            content.update(button_label=label or None, button_url=url or None)
        reserved: idempotency.Reservation | None = None
        try:
            actor = await in_db(where.actor)
            # Another workspace's conversation is a 404 before anything else is looked at.
            await in_db(lambda: conversations.get_row(actor=actor, conversation_id=conversation_id))
            reserved = await _reserve(actor, request, form)
            if reserved is None:
                flash(request, "This message was sent already (the form was sent twice).")
                return RedirectResponse(back, status_code=303)
            held = reserved
            sent = await in_own(lambda: _send_once(held, actor, conversation_id, content))
            await in_db(lambda: idempotency.complete(held, sent.status, {"id": sent.record.id}))
        except ServiceError as problem:
            status, body = problem.status, problem.body()
            if reserved is not None:
                taken = reserved
                await in_db(lambda: idempotency.finish_failed(taken, status, body))
            if problem.status == 404:
                return not_found(request, "No conversation with that id.")
            if problem.status != 502:  # the platform refused: the thread shows the failed message and why
                return failure(request, problem, back)
            flash(request, "The platform refused the message; the thread shows why.", "bad")
        else:
            flash(request, "Message sent." if sent.status == 201 else
                  "Message queued: it is sent as soon as the platform allows.")
        return RedirectResponse(back, status_code=303)

    async def mark_read(request: Request) -> Response:
        conversation_id = request.path_params["id"]
        try:
            where, form = await acting(request)
            await in_db(lambda: conversations.mark_read(actor=where.actor(), conversation_id=conversation_id))
        except NoSeat as no:
            return no.response
        except ServiceError:
            return not_found(request, "No conversation with that id.")
        flash(request, "Marked as read.")
        back = f"{PAGE}/{conversation_id}?" + urlencode({"workspace": where.workspace_id, **_kept_filters(form)})
        return RedirectResponse(back, status_code=303)

    return [
        Route(PAGE, inbox_page, methods=["GET"], middleware=middleware),
        Route(f"{PAGE}/live", live_list, methods=["GET"], middleware=middleware),
        Route(f"{PAGE}/{{id}}", inbox_page, methods=["GET"], middleware=middleware),
        Route(f"{PAGE}/{{id}}/live", live_thread, methods=["GET"], middleware=middleware),
        Route(f"{PAGE}/{{id}}/reply", reply, methods=["POST"], middleware=middleware),
        Route(f"{PAGE}/{{id}}/read", mark_read, methods=["POST"], middleware=middleware),
    ]


async def _reserve(actor: Actor, request: Request, form: Any) -> idempotency.Reservation | None:
    """The reply form's one-time key (rendered with the page), taken as `/v1` takes an
    `Idempotency-Key`: a form sent twice (a double click, a resent POST) sends one message. None
    when this form was already sent."""
    key = field(form, "idempotencyKey")
    idempotency.check_key(key)
    fingerprint = idempotency.request_fingerprint("POST", request.url.path, key.encode())
    reserved = await in_db(lambda: idempotency.reserve(actor.credential_id, key, fingerprint))
    return reserved if isinstance(reserved, idempotency.Reservation) else None


def _send_once(reserved: idempotency.Reservation, actor: Actor, conversation_id: str,
               content: dict[str, Any]) -> outbound.Sent:
    bound = idempotency.bind(reserved)  # the message is tied to the key in the transaction making it
    try:
        return outbound.send_message(actor=actor, conversation_id=conversation_id, **content)
    finally:
        idempotency.unbind(bound)


async def _templates(where: Seat, conversation: dict[str, Any]) -> list[dict[str, Any]] | str | None:
    """A WhatsApp account's approved templates, asked of the platform (a network call, so outside
    any transaction); None for a platform without templates, a sentence when they could not be read."""
    account_id = conversation["accountId"]
    if conversation["platform"] != "whatsapp" or conversation["accountStatus"] != "connected":
        return None
    try:
        actor = await in_db(where.actor)
        found = await in_own(lambda: accounts.templates(actor=actor, account_id=account_id))
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
    return {name: field(form, name) for name in ("platform", "account", "unread") if field(form, name)}
