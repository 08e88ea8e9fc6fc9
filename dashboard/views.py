"""What every dashboard view is built from: the workspace a person acts in, checked forms, flash
messages, pages and partials, confirmations, redirects back to a page, and refusals shown as pages.

A page acts as the signed-in member in one workspace (`Seat`), with the same `Actor` the service
gives a read-write key of scope `full`: every lookup goes through the service with that actor, so
another workspace's id is a 404 here exactly as it is on `/v1`.

The workspace is the one the request names (`?workspace=` or a form's `workspaceId`), else the one
the switcher last chose (kept in the session), else the person's first. A named workspace the
person is not a member of is a 404 page, never a silent fallback to another workspace.

A view that cannot go on (no session, an expired form, a workspace or a thing not the person's)
raises `NoSeat` with the page to answer; `NoSeatAnswers`, on every dashboard route, sends it, so no
view writes that answer itself.
"""

from __future__ import annotations

import hashlib
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import urlencode

from markupsafe import Markup
from starlette.datastructures import FormData
from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from dashboard import refusals, times
from kit import scheduling
from kit.errors import ServiceError
from oauth import shell
from oauth.shell import current_user, error_page, in_db, safe_next
from service.accounts import platforms
from service.identity import roles, users, workspaces
from service.identity.auth import Actor, member_actor
from storage import requests

T = TypeVar("T")
Handler = Callable[[Request], Awaitable[Response]]
WORKSPACE_KEY = "ws"
TEMPLATES = Path(__file__).parent / "templates"
_templates = shell.templates_from(TEMPLATES)
_templates.filters["when"] = times.when
_templates.globals["time_zones"] = scheduling.zone_names()


def platform_icon(platform: str) -> Markup:
    """A platform's icon for a page, beside its name (hidden from screen readers: the name is read)."""
    return Markup(platforms.icon(platform))  # noqa: S704 - the platform folder's own SVG file, not input


_templates.globals["platform_icon"] = platform_icon


@dataclass(frozen=True)
class Seat:
    """Who acts, and where: the signed-in person in one of their workspaces."""

    user_id: str
    email: str
    workspaces: list[dict[str, Any]]
    workspace: dict[str, Any]

    def actor(self) -> Actor:
        """The member's actor; checks the membership again, inside the caller's transaction."""
        return member_actor(self.user_id, self.workspace["id"])

    @property
    def workspace_id(self) -> str:
        return str(self.workspace["id"])


class NoSeat(Exception):
    """The request cannot go on: the answer (a redirect to sign in, the expired form's page, a 404
    page, a refusal's page) is `response`, sent by `NoSeatAnswers`."""

    def __init__(self, response: Response) -> None:
        self.response = response


class _StartedSend:
    """`send`, noting whether the answer has begun: a refusal raised after that cannot become a page."""

    def __init__(self, send: Send) -> None:
        self.send = send
        self.started = False

    async def __call__(self, message: Message) -> None:
        self.started = self.started or message["type"] == "http.response.start"
        await self.send(message)


class NoSeatAnswers:
    """ASGI middleware on every dashboard route (inside the session's): a view's `NoSeat` is
    answered with its page, so no view writes that answer itself; so is a service's refusal that a
    view let through (a role that may not, a resource outside the person's profiles): a page with
    the service's status and words, a 403 naming the role it needs."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        tracked = _StartedSend(send)
        try:
            await self.app(scope, receive, tracked)
        except NoSeat as no:
            await no.response(scope, receive, send)
        except ServiceError as problem:
            if tracked.started:
                raise
            heading = "You need another role" if problem.status == 403 else "That did not work"
            refused = error_page(Request(scope, receive), problem.status, heading, explain(problem))
            await refused(scope, receive, send)


@dataclass(frozen=True)
class Needs:
    """The least role a dashboard page or action needs, and what it is for (the 403 page's words)."""

    role: str
    what: str


class RoleGate:
    """ASGI middleware on a route some roles may not use (`dashboard.routes.NEEDS`): a person whose
    role in the workspace the request names is below what the method needs gets the 403 page naming
    that role, before the view reads anything else of the request (so the answer never depends on
    what the form held). A request with no seat (not signed in, an expired form) goes on to the
    view, which answers it. The service checks the same rule again: this is not the only guard."""

    def __init__(self, app: ASGIApp, needs: dict[str, Needs]) -> None:
        self.app = app
        self.needs = needs

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        needed = self.needs.get("GET" if scope["method"] == "HEAD" else scope["method"])
        if needed is None:
            await self.app(scope, receive, send)
            return
        body = await _whole_body(receive)
        request = Request(scope, _replay(body))
        try:
            where = await seated(request)
        except NoSeat:
            where = None  # the view answers it as it would
        role = str(where.workspace.get("role", "")) if where is not None else ""
        if where is not None and not roles.at_least(role, needed.role):
            refusal = error_page(request, 403, "You need another role", roles.refusal(needed.role, role, needed.what),
                                 "forbidden")
            await refusal(scope, receive, send)
            return
        await self.app(scope, _replay(body), send)


async def _whole_body(receive: Receive) -> bytes:
    chunks = []
    while True:
        message = await receive()
        if message["type"] != "http.request":
            break
        chunks.append(message.get("body", b""))
        if not message.get("more_body", False):
            break
    return b"".join(chunks)


class _replay:
    """A `receive` that hands the buffered body over once, then reports the client gone."""

    def __init__(self, body: bytes) -> None:
        self.body: bytes | None = body

    async def __call__(self) -> Message:
        if self.body is None:
            return {"type": "http.disconnect"}
        body, self.body = self.body, None
        return {"type": "http.request", "body": body, "more_body": False}


async def signed_in(request: Request) -> tuple[str, str]:
    """The signed-in person, or `NoSeat` with the redirect to sign in."""
    user = await current_user(request)
    if user is not None:
        # Every page shows times in the person's zone: read with the session, for `render`.
        request.state.person_zone = await in_db(users.time_zone_of, user[0]) or ""
        return user
    if request.headers.get("HX-Request"):
        # A page's own refresh after the session ended: the whole page goes to sign-in, rather
        # than the sign-in form being swapped into a corner of it.
        target = request.headers.get("HX-Current-URL", "")
        path = "/" + target.split("/", 3)[3] if target.count("/") >= 3 else "/dashboard"
        raise NoSeat(Response(status_code=401, headers={
            "HX-Redirect": "/dashboard/login?" + urlencode({"next": safe_next(path)})}))
    raise NoSeat(shell.login_redirect(request))


async def seat(request: Request, wanted: str | None = None) -> Seat:
    """The person and workspace of this request, or `NoSeat` with the page to answer instead."""
    user = await signed_in(request)
    named = wanted or request.query_params.get("workspace") or None
    spaces = await in_db(lambda: workspaces.list_user_workspaces(user_id=user[0]))
    if not spaces:
        raise NoSeat(error_page(request, 404, "No workspace", "You are not a member of any workspace."))
    by_id = {ws["id"]: ws for ws in spaces}
    if named is not None and named not in by_id:
        raise NoSeat(not_found(request, "No workspace with that id."))
    chosen = by_id.get(named or request.session.get(WORKSPACE_KEY) or "", spaces[0])
    return Seat(user_id=user[0], email=user[1], workspaces=spaces, workspace=chosen)


async def checked_form(request: Request) -> FormData:
    """The posted form, once its CSRF token is checked; else `NoSeat` with the 400 page."""
    form = await request.form()
    if not shell.csrf_ok(request, form):
        raise NoSeat(shell.forbidden_csrf(request))
    return form


async def acting(request: Request) -> tuple[Seat, FormData]:
    """A form post: the CSRF token first, then the person and the workspace the form names."""
    form = await checked_form(request)
    return await seat(request, str(form.get("workspaceId") or "") or None), form


async def seated(request: Request) -> Seat:
    """The seat of a GET (a page, a confirmation) or of a form's POST (its CSRF token checked)."""
    return await seat(request) if request.method == "GET" else (await acting(request))[0]


def field(form: FormData, name: str) -> str:
    value = form.get(name)
    return value.strip() if isinstance(value, str) else ""


async def in_own(fn: Callable[[], T]) -> T:
    """Work that waits on a platform: run off the storage threads, without a transaction around it
    (the service function opens its own short ones), as `/v1` runs its `waits` operations."""
    return await requests.run(lambda _on_loop: fn(), transaction="own", waits=True)


def data_of(result: Any) -> list[dict[str, Any]]:
    """A list from a service answer: a Page, `{"data": [...]}` or a plain list."""
    if hasattr(result, "as_dict"):
        result = result.as_dict()
    if isinstance(result, dict):
        result = result.get("data", [])
    return list(result)


# --- flash messages -------------------------------------------------------------------------------


def flash(request: Request, text: str, kind: str = "ok") -> None:
    """A message for the next page this person sees (after the redirect that follows a form)."""
    pending = list(request.session.get("flash", []))[-4:]
    request.session["flash"] = [*pending, {"text": text, "kind": kind}]


def take_flashes(request: Request) -> list[dict[str, str]]:
    return list(request.session.pop("flash", []))


# --- answers --------------------------------------------------------------------------------------


def person_zone(request: Request) -> str:
    """The signed-in person's time zone (UTC until their browser or they chose one)."""
    return str(getattr(request.state, "person_zone", "") or "UTC")


def render(request: Request, template: str, status: int = 200, **context: Any) -> HTMLResponse:
    """The shell's render, finding the dashboard's templates (and the frame they extend), with the
    person's zone that `when` shows times in; `person_zone_unset` asks the page to send the
    browser's zone (the frame's script), for a person who never signed in through the form."""
    known = getattr(request.state, "person_zone", None)
    return shell.render_from(_templates, request, template, status, person_zone=person_zone(request),
                             person_zone_unset=known == "", **context)


def page(request: Request, template: str, where: Seat, *, status: int = 200, **context: Any) -> HTMLResponse:
    """A console page: the shell's render with the workspace switcher and the flash messages."""
    return render(request, template, status=status, workspaces=where.workspaces, workspace=where.workspace,
                  flashes=take_flashes(request), here=request.url.path, **context)


def fragment(request: Request, template: str, seen_id: str, **context: Any) -> tuple[Markup, str]:
    """A partial's HTML with its version in a hidden input (`seen_id`) in front: the page's refresh
    sends it back (`hx-include`) so that an unchanged partial is answered 204."""
    body = bytes(render(request, template, **context).body).decode()
    version = hashlib.sha256(body.encode()).hexdigest()[:16]
    seen = Markup('<input type="hidden" id="{}" name="seen" value="{}">').format(seen_id, version)
    html = seen + Markup(body)  # noqa: S704 - the body is the autoescaping template's own output
    return html, version


def partial(request: Request, template: str, seen_id: str, **context: Any) -> Response:
    """A fragment the page asks for again to stay current (htmx): 204 when it has not changed since
    the version the page shows, so nothing under the person's cursor or focus is replaced."""
    html, version = fragment(request, template, seen_id, **context)
    if request.query_params.get("seen") == version:
        return Response(status_code=204, headers={"Cache-Control": "no-store"})
    return HTMLResponse(html, headers={"Cache-Control": "no-store"})


@dataclass(frozen=True)
class Live:
    """A partial that a page shows and asks for again (the inbox's thread, a broadcast's progress, a
    webhook's log): what `load(seat, id)` reads, in `template`, versioned by `seen_id`."""

    template: str
    seen_id: str
    load: Callable[[Seat, str], dict[str, Any]]
    missing: str  # the 404 page's sentence for another workspace's id

    async def read(self, request: Request, where: Seat, thing_id: str) -> dict[str, Any]:
        try:
            return await in_db(self.load, where, thing_id)
        except ServiceError:
            raise NoSeat(not_found(request, self.missing)) from None

    def first(self, request: Request, where: Seat, data: dict[str, Any]) -> Markup:
        """The partial as its page shows it first."""
        return fragment(request, self.template, self.seen_id, workspace=where.workspace, **data)[0]


async def live_partial(request: Request, *, live: Live) -> Response:
    """GET `.../{id}/live`: the partial again, or 204 when unchanged."""
    where = await seat(request)
    data = await live.read(request, where, request.path_params["id"])
    return partial(request, live.template, live.seen_id, workspace=where.workspace, **data)


def back_to(path: str, where: Seat, **params: str) -> RedirectResponse:
    """303 to a console page in the same workspace (the page reloads with what the form changed)."""
    query = urlencode({"workspace": where.workspace_id, **{k: v for k, v in params.items() if v}})
    return RedirectResponse(f"{path}?{query}", status_code=303)


def done(request: Request, message: str, path: str, where: Seat, **params: str) -> RedirectResponse:
    """An action that worked: its message on the next page, and 303 back to `path`."""
    flash(request, message)
    return back_to(path, where, **params)


def not_found(request: Request, message: str) -> HTMLResponse:
    return error_page(request, 404, "Not found", message)


def explain(problem: ServiceError) -> str:
    """A refusal in words: each field by its label, never its `/v1` name."""
    if problem.details:
        return " ".join(refusals.sentence(refusals.label_anywhere(d.field), d.message) for d in problem.details)
    return problem.message


def failure(request: Request, problem: ServiceError, back: str) -> HTMLResponse:
    """A refused action as a page with the service's status and message (never an exception's text)."""
    return render(request, "error.html", status=problem.status, title="That did not work",
                  heading="That did not work", message=explain(problem), back=safe_next(back))


def refused(request: Request, problem: ServiceError, back: str, missing: str) -> HTMLResponse:
    """A refusal: another workspace's (or no) thing is the 404 page saying `missing`, any other the
    failure page that leads `back`."""
    if problem.status == 404:
        return not_found(request, missing)
    return failure(request, problem, back)


async def attempt(request: Request, call: Callable[[], T], back: str, missing: str) -> T:
    """`call` in one transaction; a refusal is `NoSeat` with its page (see `refused`)."""
    try:
        return await in_db(call)
    except ServiceError as problem:
        raise NoSeat(refused(request, problem, back, missing)) from None


def confirm(request: Request, where: Seat, *, title: str, question: str, action: str, button: str,
            cancel: str, detail: str = "") -> HTMLResponse:
    """The page a destructive action asks from first: its form posts the action, Cancel goes back."""
    return page(request, "confirm.html", where, title=title, question=question, action=action, button=button,
                cancel=safe_next(cancel), detail=detail)
