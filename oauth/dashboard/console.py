"""What the console's pages share beyond the shell: the workspace a person acts in, flash messages,
checked forms, failures shown as pages, and work that waits on the network.

A page acts as the signed-in member in one workspace (`Seat`), with the same `Actor` the service
gives a read-write key of scope `full`: every lookup goes through the service with that actor, so
another workspace's id is a 404 here exactly as it is on `/v1`.

The workspace is the one the request names (`?workspace=` or a form's `workspaceId`), else the one
the switcher last chose (kept in the session), else the person's first. A named workspace the
person is not a member of is a 404 page, never a silent fallback to another workspace.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar
from urllib.parse import urlencode

from markupsafe import Markup
from starlette.datastructures import FormData
from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response

from kit.errors import ServiceError
from oauth.dashboard.shell import (
    csrf_ok,
    current_user,
    error_page,
    explain,
    forbidden_csrf,
    in_db,
    login_redirect,
    render,
    safe_next,
)
from service.identity import workspaces
from service.identity.auth import Actor, member_actor
from storage import requests

T = TypeVar("T")
WORKSPACE_KEY = "ws"


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
    """The request cannot act: the answer (a redirect to sign in, a 404 page) is `response`."""

    def __init__(self, response: Response) -> None:
        self.response = response


async def seat(request: Request, wanted: str | None = None) -> Seat:
    """The person and workspace of this request, or `NoSeat` with the page to answer instead."""
    user = await current_user(request)
    if user is None:
        if request.headers.get("HX-Request"):
            # A page's own refresh after the session ended: the whole page goes to sign-in, rather
            # than the sign-in form being swapped into a corner of it.
            target = request.headers.get("HX-Current-URL", "")
            path = "/" + target.split("/", 3)[3] if target.count("/") >= 3 else "/dashboard"
            raise NoSeat(Response(status_code=401, headers={
                "HX-Redirect": "/dashboard/login?" + urlencode({"next": safe_next(path)})}))
        raise NoSeat(login_redirect(request))
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
    if not csrf_ok(request, form):
        raise NoSeat(forbidden_csrf(request))
    return form


async def acting(request: Request) -> tuple[Seat, FormData]:
    """A form post: the CSRF token first, then the person and the workspace the form names."""
    form = await checked_form(request)
    return await seat(request, str(form.get("workspaceId") or "") or None), form


def field(form: FormData, name: str) -> str:
    value = form.get(name)
    return value.strip() if isinstance(value, str) else ""


async def in_own(fn: Callable[[], T]) -> T:
    """Work that waits on a platform: run off the storage threads, without a transaction around it
    (the service function opens its own short ones), as `/v1` runs its `waits` operations."""
    return await requests.run(lambda _on_loop: fn(), transaction="own", waits=True)


# --- flash messages -------------------------------------------------------------------------------


def flash(request: Request, text: str, kind: str = "ok") -> None:
    """A message for the next page this person sees (after the redirect that follows a form)."""
    pending = list(request.session.get("flash", []))[-4:]
    request.session["flash"] = [*pending, {"text": text, "kind": kind}]


def take_flashes(request: Request) -> list[dict[str, str]]:
    return list(request.session.pop("flash", []))


# --- answers --------------------------------------------------------------------------------------


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


def back_to(path: str, where: Seat, **params: str) -> RedirectResponse:
    """303 to a console page in the same workspace."""
    query = urlencode({"workspace": where.workspace_id, **{k: v for k, v in params.items() if v}})
    return RedirectResponse(f"{path}?{query}", status_code=303)


def not_found(request: Request, message: str) -> HTMLResponse:
    return error_page(request, 404, "Not found", message)


def failure(request: Request, problem: ServiceError, back: str) -> HTMLResponse:
    """A refused action as a page with the service's status and message (never an exception's text)."""
    return render(request, "error.html", status=problem.status, title="That did not work",
                  heading="That did not work", message=explain(problem), code=problem.code,
                  back=safe_next(back))


def confirm(request: Request, where: Seat, *, title: str, question: str, action: str, button: str,
            cancel: str, detail: str = "") -> HTMLResponse:
    """The page a destructive action asks from first: its form posts the action, Cancel goes back."""
    return page(request, "confirm.html", where, title=title, question=question, action=action, button=button,
                cancel=safe_next(cancel), detail=detail)
