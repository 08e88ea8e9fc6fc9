"""What every page for people shares (sign-in, consent, the dashboard): sessions, CSRF, rendering
and running storage work.

Sessions are Starlette's signed cookie (itsdangerous), `HttpOnly`, `SameSite=Lax`, `Secure` when
the service is served over https. The middleware wraps only these routes (and /oauth/authorize),
so /v1 never parses cookies. Every form carries a CSRF token kept in the session and compared in
constant time. Templates autoescape: names of clients, keys and workspaces are caller-controlled.

Storage work runs in a worker thread inside one transaction (`in_db`), never on the event loop.
"""

from __future__ import annotations

import hmac
import json
import secrets
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import urlencode

from jinja2 import Environment, FileSystemLoader, select_autoescape
from starlette.datastructures import Headers
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from kit.page_headers import PageHeaders
from kit.session_cookies import SessionMiddleware
from kit.settings import Settings
from service.identity import sessions
from storage import requests

T = TypeVar("T")
SESSION_COOKIE = "switchboard_session"
SESSION_MAX_AGE = 14 * 24 * 3600
# Every form here and at /oauth is a few hundred bytes: a larger body is refused with 413 before it
# is read into memory (these pages answer people who have not signed in yet).
MAX_FORM_BYTES = 64 * 1024


class _FormTooLarge(Exception):
    pass


class FormLimit:
    """ASGI middleware refusing a request body over `MAX_FORM_BYTES` with 413, as it arrives: at once
    when its declared length says so, else as soon as the bytes read pass the limit.

    Starlette's `max_body_size` answers in plain text whenever the declared length is over; this
    answers as the OAuth endpoints do (RFC 6749 §5.2's JSON), for the dashboard's forms too.
    """

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        declared = Headers(scope=scope).get("content-length", "")
        if declared.isascii() and declared.isdigit() and int(declared) > MAX_FORM_BYTES:
            await _too_large(send)
            return
        received = 0
        started = False

        async def limited_receive() -> Message:
            nonlocal received
            message = await receive()
            received += len(message.get("body", b""))
            if received > MAX_FORM_BYTES:
                raise _FormTooLarge()
            return message

        async def tracked_send(message: Message) -> None:
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self.app(scope, limited_receive, tracked_send)
        except _FormTooLarge:
            if started:
                raise
            await _too_large(send)


_TOO_LARGE = json.dumps({"error": "invalid_request", "error_description": "The form is larger than 64 KiB."}).encode()


async def _too_large(send: Send) -> None:
    await send({"type": "http.response.start", "status": 413,
                "headers": [(b"content-type", b"application/json"), (b"content-length", b"%d" % len(_TOO_LARGE))]})
    await send({"type": "http.response.body", "body": _TOO_LARGE})

TEMPLATES = Path(__file__).parent / "templates"


def templates_from(*directories: Path) -> Environment:
    """Templates looked up in `directories` first, then here (the frame every page extends,
    `base.html`, and `error.html`)."""
    return Environment(
        loader=FileSystemLoader([*directories, TEMPLATES]),
        autoescape=select_autoescape(default=True, default_for_string=True),
    )


_templates = templates_from()


async def in_db(fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    """Run `fn` on a storage thread with a connection and one transaction. Nothing in `fn` may wait
    on the network or a password hash (DESIGN rule 15): that work goes through `off_db` first."""
    return await requests.run(lambda _on_loop: fn(*args, **kwargs), transaction="write")


async def off_db(fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    """Run `fn` with a connection and no transaction, on the shared pool: for work that blocks (a
    password hash) and opens its own short transactions for what it writes. (A call to another
    host goes through `console.in_own`, on the outbound pool.)"""
    return await requests.run(lambda _on_loop: fn(*args, **kwargs), transaction="none", blocks=True)


def session_middleware(settings: Settings) -> list[Middleware]:
    """What every page and form of the dashboard and the consent screen runs under."""
    return [
        Middleware(PageHeaders),
        Middleware(FormLimit),
        Middleware(
            SessionMiddleware,
            secret_keys=settings.secret_keys,
            session_cookie=SESSION_COOKIE,
            max_age=SESSION_MAX_AGE,
            same_site="lax",
            https_only=settings.base_url.startswith("https://"),
        )
    ]


# --- sessions, CSRF, rendering --------------------------------------------------------------------


def csrf_token(request: Request) -> str:
    token = request.session.get("csrf")
    if not token:
        token = request.session["csrf"] = secrets.token_urlsafe(32)
    return str(token)


def csrf_ok(request: Request, form: Any) -> bool:
    expected = request.session.get("csrf")
    presented = form.get("csrf_token")
    return bool(expected and isinstance(presented, str) and hmac.compare_digest(expected, presented))


async def sign_in(request: Request, user_id: str, email: str, method: str = "password") -> None:
    """A new session for this person: nothing of the anonymous one (its CSRF token) survives, and
    the session is a row in storage (`service.identity.sessions`) that sign-out and a password change end."""
    session_id = await in_db(sessions.start, user_id=user_id, email=email, method=method,
                             ip=request.client.host if request.client else None)
    request.session.clear()
    request.session.update({"sid": session_id, "uid": user_id, "email": email, "csrf": secrets.token_urlsafe(32)})


def session_user(request: Request) -> tuple[str, str] | None:
    """What the cookie says, unchecked: for rendering only. Pages decide with `current_user`."""
    uid, email = request.session.get("uid"), request.session.get("email")
    return (uid, email) if uid and email else None


def _live_user(session_id: Any, user_id: str) -> bool:
    return sessions.user_of(session_id) == user_id


async def current_user(request: Request) -> tuple[str, str] | None:
    """The signed-in person, checked against storage on every request: a session that was ended
    (sign-out, a password change, a removal) or a cookie from before sessions were kept is no
    session, and is cleared."""
    user = session_user(request)
    if user is None or not await in_db(_live_user, request.session.get("sid"), user[0]):
        request.session.clear()
        return None
    return user


async def sign_out(request: Request) -> None:
    session_id = request.session.get("sid")
    await in_db(sessions.end, session_id)
    request.session.clear()


def safe_next(value: str | None) -> str:
    """Only a path on this site: never an absolute or scheme-relative URL (open redirect)."""
    if not value or not value.startswith("/") or value.startswith("//") or "\\" in value:
        return "/dashboard"
    return value


def login_redirect(request: Request) -> RedirectResponse:
    target = request.url.path + (f"?{request.url.query}" if request.url.query else "")
    return RedirectResponse("/dashboard/login?" + urlencode({"next": target}), status_code=303)


def render(request: Request, template: str, status: int = 200, **context: Any) -> HTMLResponse:
    return render_from(_templates, request, template, status, **context)


def render_from(templates: Environment, request: Request, template: str, status: int = 200, /,
                **context: Any) -> HTMLResponse:
    """A page from `templates` (see `templates_from`), with the headers every page carries."""
    user = session_user(request)
    html = templates.get_template(template).render(
        csrf_token=csrf_token(request), user_email=user[1] if user else None, **context
    )
    return HTMLResponse(
        html,
        status_code=status,
        headers={"Cache-Control": "no-store"},  # the security headers: `kit.page_headers`, on every answer
    )


def error_page(request: Request, status: int, heading: str, message: str, code: str | None = None) -> HTMLResponse:
    return render(request, "error.html", status=status, title=heading, heading=heading, message=message, code=code)


def forbidden_csrf(request: Request) -> HTMLResponse:
    return error_page(request, 400, "This form has expired", "Reload the page and try again.", "csrf")
