"""Webhook endpoints and their delivery log."""

from __future__ import annotations

from typing import Any

from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from oauth.dashboard.shell import current_user as signed_in
from oauth.dashboard.shell import data_of, error_page, in_db, login_redirect, render, workspace_context
from service.identity.auth import member_actor
from service.kit.errors import ServiceError
from service.kit.settings import Settings
from service.webhooks import ops as webhooks


def routes(settings: Settings, middleware: list[Middleware]) -> list[Route]:
    async def webhooks_page(request: Request) -> Response:
        user = await signed_in(request)
        if user is None:
            return login_redirect(request)
        endpoint_id = request.path_params.get("id")
        spaces, workspace = await in_db(workspace_context, user[0], request.query_params.get("workspace"))
        if workspace is None:
            return error_page(request, 404, "No workspace", "You are not a member of any workspace.")
        def load() -> tuple[list[Any], Any, Any]:
            actor = member_actor(user[0], workspace["id"])
            endpoints = data_of(webhooks.list_endpoints(actor=actor, limit=100))
            if endpoint_id is None:
                return endpoints, None, None
            chosen = next((e for e in endpoints if e["id"] == endpoint_id), None)
            if chosen is None:
                raise LookupError(endpoint_id)
            return endpoints, chosen, data_of(webhooks.list_deliveries(actor=actor, webhook_id=endpoint_id, limit=100))

        try:
            endpoints, endpoint, deliveries = await in_db(load)
        except (LookupError, ServiceError):
            return error_page(request, 404, "Not found", "No webhook endpoint with that id.")
        return render(request, "webhooks.html", title="Webhooks", nav="webhooks", workspaces=spaces,
                      workspace=workspace, endpoints=endpoints, endpoint=endpoint,
                      deliveries=deliveries)

    return [
        Route("/dashboard/webhooks", webhooks_page, methods=["GET"], middleware=middleware),
        Route("/dashboard/webhooks/{id}", webhooks_page, methods=["GET"], middleware=middleware),
    ]
