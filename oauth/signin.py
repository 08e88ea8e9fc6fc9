"""Signing in and out: the session the dashboard and the consent screen share."""

from __future__ import annotations

from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import BaseRoute, Route

from kit.errors import RateLimited
from kit.settings import Settings
from oauth.shell import (
    csrf_ok,
    current_user,
    forbidden_csrf,
    in_db,
    off_db,
    render,
    safe_next,
    session_middleware,
    sign_in,
    sign_out,
)
from oauth.signin_context import waiting_app
from service.common import audit, ratelimit
from service.identity import users


def _refused(*, email: str, address: str | None) -> None:
    """A refused sign-in is in the audit log (its attempt was counted before it was judged)."""
    audit.signin(user_id=None, email=email[:320], succeeded=False, ip=address, reason="wrong e-mail or password")


def routes(settings: Settings, middleware: list[Middleware]) -> list[Route]:
    # The sign-in button names the provider (`SWITCHBOARD_OIDC_NAME`); None: no provider configured.
    oidc_on = settings.oidc_name if settings.oidc_issuer and settings.oidc_client_id and settings.oidc_client_secret \
        else None

    async def login(request: Request) -> Response:
        if request.method == "GET":
            if await current_user(request):
                return RedirectResponse(safe_next(request.query_params.get("next")), status_code=303)
            next_url = safe_next(request.query_params.get("next"))
            return render(request, "login.html", title="Sign in", next=next_url,
                          email="", error=None, oidc=oidc_on, app=await waiting_app(next_url))
        form = await request.form()
        next_url = safe_next(str(form.get("next") or ""))
        email = str(form.get("email") or "")
        if not csrf_ok(request, form):
            return render(request, "login.html", status=400, title="Sign in", next=next_url, email=email,
                          error="The form expired; please try again.", oidc=oidc_on,
                          app=await waiting_app(next_url))
        address = request.client.host if request.client else None
        try:
            await off_db(ratelimit.attempt_sign_in, email=email, address=address)
        except RateLimited as limited:
            page = render(request, "login.html", status=429, title="Sign in", next=next_url, email=email,
                          error="Too many failed sign-ins; try again in a few minutes.", oidc=oidc_on,
                          app=await waiting_app(next_url))
            page.headers.update(limited.headers)
            return page
        user = await off_db(lambda: users.verify_password(email=email, password=str(form.get("password") or "")))
        if user is None:
            await in_db(_refused, email=email, address=address)
            return render(request, "login.html", status=401, title="Sign in", next=next_url, email=email,
                          error="The e-mail or the password is not right.", oidc=oidc_on,
                          app=await waiting_app(next_url))
        await in_db(ratelimit.sign_in_succeeded, email=email, address=address)
        await sign_in(request, user.id, user.email)
        # The browser's zone (the form's script filled it in), kept while the person has chosen none.
        chosen_zone = str(form.get("timeZone") or "")
        await in_db(lambda: users.adopt_time_zone(user_id=user.id, name=chosen_zone))
        return RedirectResponse(next_url, status_code=303)

    async def logout(request: Request) -> Response:
        if request.method == "GET":
            return render(request, "logout.html", title="Sign out")
        form = await request.form()
        if not csrf_ok(request, form):
            return forbidden_csrf(request)
        await sign_out(request)
        return RedirectResponse("/dashboard/login", status_code=303)

    return [
        Route("/dashboard/login", login, methods=["GET", "POST"], middleware=middleware),
        Route("/dashboard/logout", logout, methods=["GET", "POST"], middleware=middleware),
    ]


def all_routes(settings: Settings) -> list[BaseRoute]:
    """Sign-in and sign-out, and through an OpenID Connect provider when one is configured."""
    middleware = session_middleware(settings)
    found: list[BaseRoute] = [*routes(settings, middleware)]
    if settings.oidc_issuer and settings.oidc_client_id and settings.oidc_client_secret:
        from oauth import oidc

        found += oidc.routes(settings, middleware)
    return found
