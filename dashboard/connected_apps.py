"""Connected apps: the assistants a person allowed in, and ending their access."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from dashboard import views
from kit import clock
from kit.errors import ServiceError
from oauth.shell import in_db
from service.identity import oauth_tokens


async def connected_apps(request: Request) -> Response:
    user = await views.signed_in(request)
    notice = "The app's access has ended." if request.query_params.get("revoked") else None
    apps = await in_db(lambda: oauth_tokens.list_connected_apps(user_id=user[0]))
    for app in apps:
        app["authorisedAt"] = clock.iso(app["authorisedAt"])
        app["lastUsedAt"] = clock.iso(app["lastUsedAt"])
    return views.render(request, "connected_apps.html", title="Connected apps", nav="apps", apps=apps,
                        notice=notice)


async def revoke_app(request: Request) -> Response:
    user = await views.signed_in(request)
    form = await views.checked_form(request)
    try:
        await in_db(lambda: oauth_tokens.revoke_connected_app(
            user_id=user[0], client_id=str(form.get("clientId") or ""),
            workspace_id=str(form.get("workspaceId") or "")))
    except ServiceError:
        return views.not_found(request, "No connected app with that id.")
    return RedirectResponse("/dashboard/settings/connected-apps?revoked=1", status_code=303)
