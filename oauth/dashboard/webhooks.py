"""Webhook endpoints: created (the secret shown once), tested, rotated, enabled and disabled, deleted,
and each one's delivery log with the payloads and Redeliver. The log is a partial
(`webhook_deliveries.html`) the page asks for again, so a test delivery's outcome shows by itself."""

from __future__ import annotations

from typing import Any

from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from kit import shapes
from kit.errors import ServiceError
from kit.settings import Settings
from oauth.dashboard.console import (
    NoSeat,
    Seat,
    acting,
    back_to,
    confirm,
    failure,
    field,
    flash,
    fragment,
    in_own,
    not_found,
    page,
    partial,
    seat,
)
from oauth.dashboard.shell import data_of, in_db
from service.webhooks import log
from service.webhooks import ops as webhooks
from service.webhooks.shapes import CreateWebhook

PAGE = "/dashboard/webhooks"
LOG_LIMIT = 50


def _endpoints(where: Seat) -> list[dict[str, Any]]:
    return data_of(webhooks.list_endpoints(actor=where.actor(), limit=100))


def _catalogue() -> list[dict[str, Any]]:
    return list(webhooks.catalogue().dump()["data"])


def _endpoint(where: Seat, endpoint_id: str) -> dict[str, Any]:
    actor = where.actor()
    endpoint = webhooks.get(actor=actor, webhook_id=endpoint_id).dump()
    deliveries = data_of(webhooks.list_deliveries(actor=actor, webhook_id=endpoint_id, limit=LOG_LIMIT))
    bodies = log.payloads(actor=actor, event_ids=[d["eventId"] for d in deliveries])
    return {"endpoint": endpoint,
            "deliveries": [{**d, "payload": bodies.get(d["eventId"], "")} for d in deliveries]}


def routes(settings: Settings, middleware: list[Middleware]) -> list[Route]:
    async def list_page(request: Request) -> Response:
        try:
            where = await seat(request)
        except NoSeat as no:
            return no.response
        endpoints = await in_db(_endpoints, where)
        return page(request, "webhooks.html", where, title="Webhooks", nav="webhooks", endpoints=endpoints,
                    catalogue=_catalogue(), created=None)

    async def create(request: Request) -> Response:
        try:
            where, form = await acting(request)
            body: dict[str, Any] = {"url": field(form, "url"),
                                    "events": [str(e) for e in form.getlist("events")]}
            if field(form, "description"):
                body["description"] = field(form, "description")
            fields = shapes.parse(CreateWebhook, body)
            # Outside a transaction: the URL's host is looked up first (see service/webhooks/ops.py).
            created = await in_own(lambda: webhooks.create(actor=where.actor(), **dict(fields)))
        except NoSeat as no:
            return no.response
        except ServiceError as problem:
            return failure(request, problem, PAGE)
        endpoints = await in_db(_endpoints, where)
        return page(request, "webhooks.html", where, status=201, title="Webhooks", nav="webhooks",
                    endpoints=endpoints, catalogue=_catalogue(), created=created.dump())

    async def endpoint_page(request: Request) -> Response:
        try:
            where = await seat(request)
            loaded = await in_db(_endpoint, where, request.path_params["id"])
        except NoSeat as no:
            return no.response
        except ServiceError:
            return not_found(request, "No webhook endpoint with that id.")
        log_html, _ = fragment(request, "webhook_deliveries.html", "log-seen", workspace=where.workspace, **loaded)
        return page(request, "webhook.html", where, title="Webhook endpoint", nav="webhooks", log_html=log_html,
                    secret=None, **loaded)

    async def live_log(request: Request) -> Response:
        try:
            where = await seat(request)
            loaded = await in_db(_endpoint, where, request.path_params["id"])
        except NoSeat as no:
            return no.response
        except ServiceError:
            return not_found(request, "No webhook endpoint with that id.")
        return partial(request, "webhook_deliveries.html", "log-seen", workspace=where.workspace, **loaded)

    async def endpoint_action(request: Request) -> Response:
        """Send test, enable or disable: a form post, then back to the endpoint's page."""
        endpoint_id, action = request.path_params["id"], request.path_params["action"]
        try:
            where, form = await acting(request)
            if action == "test":
                await in_db(lambda: webhooks.send_test(actor=where.actor(), webhook_id=endpoint_id))
                message = "Test event queued: its delivery appears in the log below."
            elif action == "enabled":
                enabled = field(form, "enabled") == "true"
                await in_db(lambda: webhooks.update(actor=where.actor(), webhook_id=endpoint_id, enabled=enabled))
                message = "Endpoint enabled." if enabled else "Endpoint disabled: no events are sent to it."
            else:
                return not_found(request, "No such action.")
        except NoSeat as no:
            return no.response
        except ServiceError as problem:
            if problem.status == 404:
                return not_found(request, "No webhook endpoint with that id.")
            return failure(request, problem, f"{PAGE}/{endpoint_id}")
        flash(request, message)
        return back_to(f"{PAGE}/{endpoint_id}", where)

    async def destructive(request: Request) -> Response:
        """Rotate secret and Delete: a confirmation page first (GET), the action on its form (POST)."""
        endpoint_id, action = request.path_params["id"], request.path_params["action"]
        if action not in ("rotate-secret", "delete"):
            return not_found(request, "No such action.")
        try:
            where = await seat(request) if request.method == "GET" else (await acting(request))[0]
            endpoint = (await in_db(lambda: webhooks.get(actor=where.actor(), webhook_id=endpoint_id))).dump()
        except NoSeat as no:
            return no.response
        except ServiceError:
            return not_found(request, "No webhook endpoint with that id.")
        here = f"{PAGE}/{endpoint_id}"
        if request.method == "GET":
            if action == "delete":
                return confirm(request, where, title="Delete endpoint",
                               question=f"Delete the endpoint {endpoint['url']}?",
                               detail="Its delivery log goes with it, and deliveries not yet sent are dropped.",
                               action=f"{here}/delete", button="Delete",
                               cancel=f"{here}?workspace={where.workspace_id}")
            return confirm(request, where, title="Rotate secret",
                           question=f"Rotate the signing secret of {endpoint['url']}?",
                           detail="The new secret is shown once. The old one keeps signing alongside it for 24 hours.",
                           action=f"{here}/rotate-secret", button="Rotate secret",
                           cancel=f"{here}?workspace={where.workspace_id}")
        try:
            if action == "delete":
                await in_db(lambda: webhooks.delete(actor=where.actor(), webhook_id=endpoint_id))
                flash(request, f"Deleted the endpoint {endpoint['url']}.")
                return back_to(PAGE, where)
            rotated = await in_db(lambda: webhooks.rotate_secret(actor=where.actor(), webhook_id=endpoint_id))
            loaded = await in_db(_endpoint, where, endpoint_id)
        except ServiceError as problem:
            return failure(request, problem, here)
        log_html, _ = fragment(request, "webhook_deliveries.html", "log-seen", workspace=where.workspace, **loaded)
        return page(request, "webhook.html", where, title="Webhook endpoint", nav="webhooks", log_html=log_html,
                    secret=rotated.secret, **loaded)

    async def redeliver(request: Request) -> Response:
        delivery_id = request.path_params["id"]
        try:
            where, _form = await acting(request)
            again = await in_db(lambda: webhooks.redeliver(actor=where.actor(), delivery_id=delivery_id))
        except NoSeat as no:
            return no.response
        except ServiceError as problem:
            if problem.status == 404:
                return not_found(request, "No webhook delivery with that id.")
            return failure(request, problem, PAGE)
        flash(request, "Redelivery queued: it appears at the top of the log.")
        return back_to(f"{PAGE}/{again.webhook_id}", where)

    return [
        Route(PAGE, list_page, methods=["GET"], middleware=middleware),
        Route(PAGE, create, methods=["POST"], middleware=middleware),
        Route(f"{PAGE}/deliveries/{{id}}/redeliver", redeliver, methods=["POST"], middleware=middleware),
        Route(f"{PAGE}/{{id}}", endpoint_page, methods=["GET"], middleware=middleware),
        Route(f"{PAGE}/{{id}}/live", live_log, methods=["GET"], middleware=middleware),
        Route(f"{PAGE}/{{id}}/{{action:str}}", destructive, methods=["GET"], middleware=middleware),
        Route(f"{PAGE}/{{id}}/{{action:str}}", _post_action(endpoint_action, destructive), methods=["POST"],
              middleware=middleware),
    ]


def _post_action(plain: Any, destructive: Any) -> Any:
    async def dispatch(request: Request) -> Response:
        if request.path_params["action"] in ("rotate-secret", "delete"):
            return await destructive(request)  # type: ignore[no-any-return]
        return await plain(request)  # type: ignore[no-any-return]

    return dispatch
