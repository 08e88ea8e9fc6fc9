"""The /v1 application: every resource's operations, the error envelope, the OpenAPI document."""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Match, Route

from http_api import openapi
from http_api.routes import (
    accounts,
    analytics,
    api_keys,
    approvals,
    automations,
    broadcasts,
    connect,
    conversations,
    health,
    media,
    members,
    posts,
    saved_replies,
    sequences,
    webhooks,
    workspaces,
)
from http_api.routing import Endpoint, Operation, error_response, json_response
from kit.errors import BadRequest, MethodNotAllowed, NotFound

ROUTE_MODULES = [health, api_keys, workspaces, accounts, connect, conversations, broadcasts, posts, media, webhooks,
                 analytics, automations, sequences, members, saved_replies,
                 approvals]


def all_operations() -> list[Operation]:
    return [operation for module in ROUTE_MODULES for operation in module.OPERATIONS]


def _allowed_methods(request: Request) -> str:
    """Every method some route takes on this path. Starlette's own `Allow` names only the first route
    that matched the path (`/v1/connect/{platform}` takes GET, `/v1/connect/telegram` POST)."""
    scope = {**request.scope, "method": "\x00"}  # a method no route takes: every route on the path matches partially
    methods: set[str] = {"OPTIONS"}
    for route in request.app.router.routes:
        if isinstance(route, Route) and route.methods and route.matches(scope)[0] != Match.NONE:
            methods |= route.methods
    return ", ".join(sorted(methods))


async def _http_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, HTTPException)
    if exc.status_code == 405:
        allow = _allowed_methods(request)
        if request.method == "OPTIONS":  # RFC 9110 §9.3.7: what the resource takes
            return Response(status_code=204, headers={"Allow": allow})
        return error_response(MethodNotAllowed(), {"Allow": allow})
    if exc.status_code == 404:
        return error_response(NotFound("No such path."))
    return error_response(BadRequest("The request could not be read."))


# Only the router's own refusals: any other fault is answered by `http_api.middleware.RequestContext`.
EXCEPTION_HANDLERS: dict[Any, Any] = {HTTPException: _http_error}


def v1_routes(*, base_url: str, rate_limit_per_minute: int, reference_appendix: str = "") -> list[Route]:
    """Every /v1 route, for the composition root to place on its own router.

    `reference_appendix` ends the API reference's description (the sandbox's controls). They sit on
    the root router rather than in a mounted sub-application: each mounted Starlette
    app runs its own middleware stack again, which measurably slows every request.
    """
    operations = all_operations()
    by_path: dict[str, dict[str, Operation]] = defaultdict(dict)
    for operation in operations:
        by_path[operation.path][operation.method] = operation
    document = openapi.build(operations, base_url=base_url, appendix=reference_appendix)

    async def openapi_json(request: Request) -> Response:
        return json_response(200, document)

    routes = [Route("/v1/openapi.json", openapi_json, methods=["GET"])]
    routes += [Route("/v1" + path, Endpoint(methods, rate_limit=rate_limit_per_minute), methods=list(methods))
               for path, methods in by_path.items()]
    return routes
