"""The service's outermost ASGI layer: a request id on every answer, a 500 that tells nothing of the
fault, and fixed /v1 paths sent straight to their endpoint."""

from __future__ import annotations

import logging
import random
import re
import time
from collections.abc import Collection

from starlette._utils import get_route_path
from starlette.applications import Starlette
from starlette.middleware.exceptions import ExceptionMiddleware
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Match, Route
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from http_api.routing import Endpoint, JsonResponse, render_json
from kit import log_context, metrics

log = logging.getLogger("switchboard.http")
_REQUEST_ID = re.compile(r"[A-Za-z0-9._:-]{1,128}")
ID_HEADER = b"x-request-id"
_METHODS = ("GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS")


class ServiceApp(Starlette):
    """A Starlette app whose outermost layer is `RequestContext`, which answers every fault itself.

    Starlette's own error layer (`ServerErrorMiddleware`) is left out: it would wrap `send` once more
    and, holding the handler for `Exception`, answer a fault before `RequestContext` could tell a
    caller's NUL from ours. Its exception layer stays, for the router's own 404 and 405.
    """

    def build_middleware_stack(self) -> ASGIApp:
        app: ASGIApp = ExceptionMiddleware(self.router, handlers=self.exception_handlers, debug=self.debug)
        for middleware in reversed(self.user_middleware):
            app = middleware.cls(app, *middleware.args, **middleware.kwargs)
        return RequestContext(app, self.routes)


def _always_first(routes: list[BaseRoute], route: Route, methods: Collection[str]) -> bool:
    """True when the router would pick this route for its path whatever the method."""
    return all(_first_match(routes, route.path, method) is route for method in methods)


class RequestContext:
    """Outermost (see `ServiceApp`).

    A request for a fixed /v1 path (`/v1/workspaces`, not `/v1/posts/{id}`) goes straight to its
    endpoint, by one dictionary lookup instead of the router's match against every route before it,
    and its answer is written with the request id among its headers. A fixed path served by an ASGI
    app of its own (`/mcp`, the MCP SDK's endpoint) goes straight to that app, past the exception
    layer and the router, with `send` wrapped to add the id. Only paths whose own route is the one
    the router would pick, for each of its methods, are taken (checked against the app's whole
    route list when it is built), so the answer is the router's answer. Everything else, wrong
    methods included, goes on to the app, with `send` wrapped to add the id.
    """

    def __init__(self, app: ASGIApp, routes: list[BaseRoute]) -> None:
        self.app = app
        self.exact: dict[str, Endpoint] = {}
        self.apps: dict[str, ASGIApp] = {}
        for route in routes:
            if not (isinstance(route, Route) and not route.param_convertors):
                continue
            if isinstance(route.app, Endpoint):
                if _always_first(routes, route, route.app.methods):
                    self.exact[route.path] = route.app
            # An ASGI app of its own (no methods): the router hands it every method.
            elif route.methods is None and _always_first(routes, route, _METHODS):
                self.apps[route.path] = route.app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        request_id = ""
        for name, value in scope["headers"]:
            if name == ID_HEADER:
                request_id = value.decode("latin-1")
        if not (request_id and _REQUEST_ID.fullmatch(request_id)):
            # Request ids need to be unique, not secret: no system call for randomness per request.
            request_id = f"req_{random.getrandbits(96):024x}"
        scope.setdefault("state", {})["request_id"] = request_id
        log_context.request_id.set(request_id)  # this request's task has a context of its own
        id_header = (ID_HEADER, request_id.encode())

        timed = time.perf_counter() if metrics.enabled() else 0.0
        path = get_route_path(scope)
        endpoint = self.exact.get(path)
        if endpoint is not None and scope["method"] in endpoint.methods:
            scope["path_params"] = {}
            try:
                response = await endpoint.handle(Request(scope, receive, send))
            except Exception as error:
                response = _fault(error, request_id)
            response.raw_headers.append(id_header)  # nothing has been sent: no `send` to wrap
            await response(scope, receive, send)
            if timed:
                metrics.http_request(scope["method"], path, response.status_code, time.perf_counter() - timed)
            return

        started = False
        status = 500

        async def send_with_id(message: Message) -> None:
            nonlocal started, status
            if message["type"] == "http.response.start":
                started = True
                status = message["status"]
                headers = [header for header in message.get("headers", ()) if header[0].lower() != ID_HEADER]
                headers.append(id_header)
                message["headers"] = headers
            await send(message)

        try:
            await self.apps.get(path, self.app)(scope, receive, send_with_id)
        except Exception as error:
            if started:  # too late to answer: the fault is only logged
                log.error("unhandled error in request %s after its answer began", request_id, exc_info=error)
                return
            await _fault(error, request_id)(scope, receive, send_with_id)
        finally:
            if timed:
                route = path if path in self.apps else _route_template(scope)
                metrics.http_request(scope["method"], route, status, time.perf_counter() - timed)


def _route_template(scope: Scope) -> str:
    """The template of the route the router chose (`/v1/posts/{post_id}`), under the mounts it passed
    through; `unmatched` for a path no route took (a label per stray path would have no end)."""
    route = scope.get("route")
    template = getattr(route, "path", None)
    if template is None:
        return "unmatched"
    mounted = (scope.get("root_path") or "")[len(scope.get("app_root_path") or ""):]
    return f"{mounted}{template}"


def _fault(error: Exception, request_id: str) -> Response:
    if isinstance(error, ValueError) and "NUL (0x00)" in str(error):
        # psycopg2 refusing a NUL for PostgreSQL's text: input no edge check named (a form field,
        # say), the caller's to mend rather than a fault of ours.
        return _answer(400, "bad_request", "The request holds a NUL character, which is not text.")
    log.error("unhandled error in request %s", request_id, exc_info=error)
    return _answer(500, "internal_error",
                   f"Something went wrong on our side. Quote request id {request_id} when reporting it.")


def _answer(status: int, code: str, message: str) -> Response:
    return JsonResponse(render_json({"error": {"code": code, "message": message}}), status)


def _first_match(routes: list[BaseRoute], path: str, method: str) -> BaseRoute | None:
    scope = {"type": "http", "path": path, "root_path": "", "method": method}
    return next((route for route in routes if route.matches(scope)[0] == Match.FULL), None)
