"""The dashboard: server-rendered pages for people, working without JavaScript.

Sessions are Starlette's signed cookie (itsdangerous), `HttpOnly`, `SameSite=Lax`, `Secure` when
the service is served over https. The middleware wraps only these routes (and /oauth/authorize),
so /v1 never parses cookies. Every form carries a CSRF token kept in the session and compared in
constant time. Templates autoescape: names of clients, keys and workspaces are caller-controlled.

Storage work runs in a worker thread inside one transaction (`in_db`), never on the event loop.
"""

from __future__ import annotations

import hmac
import importlib
import json
import secrets
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import urlencode

from jinja2 import Environment, FileSystemLoader, select_autoescape
from starlette.datastructures import Headers
from starlette.middleware import Middleware
from starlette.middleware.sessions import SessionMiddleware
from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response
from starlette.routing import Route
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from service.identity import api_keys, oauth_tokens, sessions, users, workspaces
from service.identity.api_key_shapes import ApiKeyCreated, CreateApiKey
from service.identity.auth import Actor, member_actor
from service.kit import clock, shapes
from service.kit.errors import ServiceError
from service.kit.settings import Settings
from service.webhooks import ops as webhooks
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

_templates = Environment(
    loader=FileSystemLoader(Path(__file__).parent / "templates"),
    autoescape=select_autoescape(default=True, default_for_string=True),
)


async def in_db(fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    """Run `fn` on a storage thread with a connection and one transaction."""
    return await requests.run(lambda _on_loop: fn(*args, **kwargs), transaction="write")


def session_middleware(settings: Settings) -> list[Middleware]:
    """What every page and form of the dashboard and the consent screen runs under."""
    return [
        Middleware(FormLimit),
        Middleware(
            SessionMiddleware,
            secret_key=settings.secret_key,
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


async def sign_in(request: Request, user_id: str, email: str) -> None:
    """A new session for this person: nothing of the anonymous one (its CSRF token) survives, and
    the session is a row in storage (`service.identity.sessions`) that sign-out and a password change end."""
    session_id = await in_db(sessions.start, user_id=user_id)
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
    user = session_user(request)
    html = _templates.get_template(template).render(
        csrf_token=csrf_token(request), user_email=user[1] if user else None, **context
    )
    return HTMLResponse(
        html,
        status_code=status,
        headers={
            "Cache-Control": "no-store",
            "X-Frame-Options": "DENY",  # the consent page must not be framed (clickjacking)
            "Content-Security-Policy": "default-src 'none'; style-src 'unsafe-inline'; img-src 'self' data:; "
            "form-action 'self' *; frame-ancestors 'none'; base-uri 'none'",
            "Referrer-Policy": "no-referrer",
        },
    )


def error_page(request: Request, status: int, heading: str, message: str, code: str | None = None) -> HTMLResponse:
    return render(request, "error.html", status=status, title=heading, heading=heading, message=message, code=code)


def forbidden_csrf(request: Request) -> HTMLResponse:
    return error_page(request, 400, "This form has expired", "Reload the page and try again.", "csrf")


# --- storage work for the pages -------------------------------------------------------------------


def _workspace_context(user_id: str, wanted: str | None) -> tuple[list[dict[str, Any]], dict[str, Any] | None]:
    spaces = workspaces.list_user_workspaces(user_id=user_id)
    chosen = next((ws for ws in spaces if ws["id"] == wanted), spaces[0] if spaces else None)
    return spaces, chosen


def _optional(module: str) -> Any:
    """A service module that another part of the project provides, if this build has it."""
    try:
        return importlib.import_module(module)
    except ImportError:
        return None


def _follower_summaries(actor: Actor) -> list[dict[str, Any]]:
    analytics = _optional("service.analytics.ops")
    function = getattr(analytics, "follower_analytics", None) if analytics else None
    if function is None:
        return []
    try:
        report = function(actor=actor)
    except ServiceError:
        return []
    if hasattr(report, "dump"):  # a record: its /v1 JSON shape, camelCase as the template reads it
        report = report.dump()
    out = []
    for account in report.get("accounts", []):
        # Days without a snapshot (before the account was connected) are left out, not drawn as 0.
        values = [point["followers"] for point in account.get("series", []) if point.get("followers") is not None]
        if not values:
            continue
        low, high = min(values), max(values)
        span = max(high - low, 1)
        step = 160 / max(len(values) - 1, 1)
        points = " ".join(f"{i * step:.1f},{34 - (v - low) / span * 32:.1f}" for i, v in enumerate(values))
        out.append({**account, "points": points})
    return out


def _home(user_id: str) -> list[dict[str, Any]]:
    spaces = workspaces.list_user_workspaces(user_id=user_id)
    for ws in spaces:
        ws["followers"] = _follower_summaries(member_actor(user_id, ws["id"]))
    return spaces


# --- pages ----------------------------------------------------------------------------------------


def build_routes(settings: Settings) -> list[Route]:
    middleware = session_middleware(settings)
    oidc_on = bool(settings.oidc_issuer and settings.oidc_client_id and settings.oidc_client_secret)

    async def login(request: Request) -> Response:
        if request.method == "GET":
            if await current_user(request):
                return RedirectResponse(safe_next(request.query_params.get("next")), status_code=303)
            return render(request, "login.html", title="Sign in", next=safe_next(request.query_params.get("next")),
                          email="", error=None, oidc=oidc_on)
        form = await request.form()
        next_url = safe_next(str(form.get("next") or ""))
        email = str(form.get("email") or "")
        if not csrf_ok(request, form):
            return render(request, "login.html", status=400, title="Sign in", next=next_url, email=email,
                          error="The form expired; please try again.", oidc=oidc_on)
        user = await in_db(lambda: users.verify_password(email=email, password=str(form.get("password") or "")))
        if user is None:
            return render(request, "login.html", status=401, title="Sign in", next=next_url, email=email,
                          error="The e-mail or the password is not right.", oidc=oidc_on)
        await sign_in(request, user.id, user.email)
        return RedirectResponse(next_url, status_code=303)

    async def logout(request: Request) -> Response:
        if request.method == "GET":
            return render(request, "logout.html", title="Sign out")
        form = await request.form()
        if not csrf_ok(request, form):
            return forbidden_csrf(request)
        await sign_out(request)
        return RedirectResponse("/dashboard/login", status_code=303)

    signed_in = current_user

    async def home(request: Request) -> Response:
        user = await signed_in(request)
        if user is None:
            return login_redirect(request)
        spaces = await in_db(_home, user[0])
        return render(request, "home.html", title="Workspaces", nav="home", workspaces=spaces)

    async def api_keys_page(request: Request) -> Response:
        user = await signed_in(request)
        if user is None:
            return login_redirect(request)
        created: ApiKeyCreated | None = None
        error: str | None = None
        status = 200
        wanted = request.query_params.get("workspace")
        if request.method == "POST":
            form = await request.form()
            if not csrf_ok(request, form):
                return forbidden_csrf(request)
            wanted = str(form.get("workspaceId") or "")
            permission = str(form.get("permission") or "read-write")
            name = str(form.get("name") or "")

            def create() -> ApiKeyCreated:
                actor = member_actor(user[0], wanted or "")
                fields = shapes.parse(CreateApiKey, {"name": name, "permission": permission})
                return api_keys.create(actor=actor, **dict(fields))

            try:
                created = await in_db(create)
            except PermissionError:
                return error_page(request, 404, "Not found", "No workspace with that id.")
            except ServiceError as problem:
                error, status = _explain(problem), problem.status
        spaces, workspace = await in_db(_workspace_context, user[0], wanted)
        if workspace is None:
            return error_page(request, 404, "No workspace", "You are not a member of any workspace.")
        keys = await in_db(lambda: api_keys.list_keys(actor=member_actor(user[0], workspace["id"]), limit=100).data)
        return render(request, "api_keys.html", status=status, title="API keys", nav="keys", workspaces=spaces,
                      workspace=workspace, keys=keys, created=created, error=error)

    async def revoke_key(request: Request) -> Response:
        user = await signed_in(request)
        if user is None:
            return login_redirect(request)
        form = await request.form()
        if not csrf_ok(request, form):
            return forbidden_csrf(request)
        workspace_id = str(form.get("workspaceId") or "")
        try:
            await in_db(lambda: api_keys.revoke(actor=member_actor(user[0], workspace_id),
                                                key_id=request.path_params["id"]))
        except (PermissionError, ServiceError):
            return error_page(request, 404, "Not found", "No API key with that id.")
        return RedirectResponse("/dashboard/api-keys?" + urlencode({"workspace": workspace_id}), status_code=303)

    async def connected_apps(request: Request) -> Response:
        user = await signed_in(request)
        if user is None:
            return login_redirect(request)
        notice = "The app's access has ended." if request.query_params.get("revoked") else None
        apps = await in_db(lambda: oauth_tokens.list_connected_apps(user_id=user[0]))
        for app in apps:
            app["authorisedAt"] = clock.iso(app["authorisedAt"])
            app["lastUsedAt"] = clock.iso(app["lastUsedAt"])
        return render(request, "connected_apps.html", title="Connected apps", nav="apps", apps=apps, notice=notice)

    async def revoke_app(request: Request) -> Response:
        user = await signed_in(request)
        if user is None:
            return login_redirect(request)
        form = await request.form()
        if not csrf_ok(request, form):
            return forbidden_csrf(request)
        try:
            await in_db(lambda: oauth_tokens.revoke_connected_app(
                user_id=user[0], client_id=str(form.get("clientId") or ""),
                workspace_id=str(form.get("workspaceId") or "")))
        except ServiceError:
            return error_page(request, 404, "Not found", "No connected app with that id.")
        return RedirectResponse("/dashboard/settings/connected-apps?revoked=1", status_code=303)

    async def webhooks_page(request: Request) -> Response:
        user = await signed_in(request)
        if user is None:
            return login_redirect(request)
        endpoint_id = request.path_params.get("id")
        spaces, workspace = await in_db(_workspace_context, user[0], request.query_params.get("workspace"))
        if workspace is None:
            return error_page(request, 404, "No workspace", "You are not a member of any workspace.")
        def load() -> tuple[list[Any], Any, Any]:
            actor = member_actor(user[0], workspace["id"])
            endpoints = _data(webhooks.list_endpoints(actor=actor, limit=100))
            if endpoint_id is None:
                return endpoints, None, None
            chosen = next((e for e in endpoints if e["id"] == endpoint_id), None)
            if chosen is None:
                raise LookupError(endpoint_id)
            return endpoints, chosen, _data(webhooks.list_deliveries(actor=actor, webhook_id=endpoint_id, limit=100))

        try:
            endpoints, endpoint, deliveries = await in_db(load)
        except (LookupError, ServiceError):
            return error_page(request, 404, "Not found", "No webhook endpoint with that id.")
        return render(request, "webhooks.html", title="Webhooks", nav="webhooks", workspaces=spaces,
                      workspace=workspace, endpoints=endpoints, endpoint=endpoint,
                      deliveries=deliveries)

    routes = [
        Route("/dashboard/login", login, methods=["GET", "POST"], middleware=middleware),
        Route("/dashboard/logout", logout, methods=["GET", "POST"], middleware=middleware),
        Route("/dashboard", home, methods=["GET"], middleware=middleware),
        Route("/dashboard/api-keys", api_keys_page, methods=["GET", "POST"], middleware=middleware),
        Route("/dashboard/api-keys/{id}/revoke", revoke_key, methods=["POST"], middleware=middleware),
        Route("/dashboard/settings/connected-apps", connected_apps, methods=["GET"], middleware=middleware),
        Route("/dashboard/settings/connected-apps/revoke", revoke_app, methods=["POST"], middleware=middleware),
        Route("/dashboard/webhooks", webhooks_page, methods=["GET"], middleware=middleware),
        Route("/dashboard/webhooks/{id}", webhooks_page, methods=["GET"], middleware=middleware),
    ]
    if oidc_on:
        from oauth import oidc

        routes += oidc.routes(settings, middleware)
    return routes


def _data(result: Any) -> list[dict[str, Any]]:
    """A list from a service answer: a Page, `{"data": [...]}` or a plain list."""
    if hasattr(result, "as_dict"):
        result = result.as_dict()
    if isinstance(result, dict):
        result = result.get("data", [])
    return list(result)


def _explain(problem: ServiceError) -> str:
    if problem.details:
        return "; ".join(f"{d.field} {d.message}" for d in problem.details)
    return problem.message
