"""API keys: created (the secret shown once), listed, revoked."""

from __future__ import annotations

from urllib.parse import urlencode

from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import Route

from oauth.dashboard.shell import (
    csrf_ok,
    error_page,
    explain,
    forbidden_csrf,
    in_db,
    login_redirect,
    render,
    workspace_context,
)
from oauth.dashboard.shell import current_user as signed_in
from service.identity import api_keys
from service.identity.api_key_shapes import ApiKeyCreated, CreateApiKey
from service.identity.auth import member_actor
from service.kit import shapes
from service.kit.errors import ServiceError
from service.kit.settings import Settings


def routes(settings: Settings, middleware: list[Middleware]) -> list[Route]:
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
                error, status = explain(problem), problem.status
        spaces, workspace = await in_db(workspace_context, user[0], wanted)
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

    return [
        Route("/dashboard/api-keys", api_keys_page, methods=["GET", "POST"], middleware=middleware),
        Route("/dashboard/api-keys/{id}/revoke", revoke_key, methods=["POST"], middleware=middleware),
    ]
