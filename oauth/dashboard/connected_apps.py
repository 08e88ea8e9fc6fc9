"""Connected apps: the assistants a person allowed in, and ending their access."""

from __future__ import annotations

from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import Route

from kit import clock
from kit.errors import ServiceError
from kit.settings import Settings
from oauth.dashboard.shell import csrf_ok, error_page, forbidden_csrf, in_db, login_redirect, render
from oauth.dashboard.shell import current_user as signed_in
from service.identity import oauth_tokens


def routes(settings: Settings, middleware: list[Middleware]) -> list[Route]:
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

    return [
        Route("/dashboard/settings/connected-apps", connected_apps, methods=["GET"], middleware=middleware),
        Route("/dashboard/settings/connected-apps/revoke", revoke_app, methods=["POST"], middleware=middleware),
    ]
