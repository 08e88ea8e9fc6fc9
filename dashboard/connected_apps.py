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
    """GET: the question first (as a key's or a webhook's revocation asks); POST: the app's access ends."""
    user = await views.signed_in(request)
    if request.method == "GET":
        return await _ask(request, user[0])
    form = await views.checked_form(request)
    try:
        await in_db(lambda: oauth_tokens.revoke_connected_app(
            user_id=user[0], client_id=str(form.get("clientId") or ""),
            workspace_id=str(form.get("workspaceId") or "")))
    except ServiceError:
        return views.not_found(request, "No connected app with that id.")
    return RedirectResponse("/dashboard/settings/connected-apps?revoked=1", status_code=303)


async def _ask(request: Request, user_id: str) -> Response:
    client_id = request.query_params.get("clientId", "")
    workspace_id = request.query_params.get("workspaceId", "")
    apps = await in_db(lambda: oauth_tokens.list_connected_apps(user_id=user_id))
    app = next((a for a in apps if a["clientId"] == client_id and a["workspaceId"] == workspace_id), None)
    if app is None:
        return views.not_found(request, "No connected app with that id.")
    return views.render(request, "confirm.html", title="Revoke app", nav="apps",
                        question=f"Revoke {app['clientName']}'s access to {app['workspaceName']}?",
                        detail="It can no longer act for you there: its tokens stop working at once. "
                               "It can ask you again later.",
                        action="/dashboard/settings/connected-apps/revoke", button="Revoke",
                        cancel="/dashboard/settings/connected-apps",
                        hidden={"clientId": app["clientId"], "workspaceId": app["workspaceId"]})
