"""Webhook endpoints: created (the secret shown once), tested, rotated, enabled and disabled, deleted,
and each one's delivery log with the payloads and Redeliver. The log is a partial
(`webhook_deliveries.html`) the page asks for again, so a test delivery's outcome shows by itself."""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import HTMLResponse, Response

from dashboard import refusals, views
from dashboard.views import Seat, data_of, field
from kit import shapes
from kit.errors import ServiceError
from oauth.shell import in_db
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


LOG = views.Live(template="webhook_deliveries.html", seen_id="log-seen", load=_endpoint,
                 missing="No webhook endpoint with that id.")
DESTRUCTIVE = ("rotate-secret", "delete")


async def list_page(request: Request) -> Response:
    where = await views.seat(request)
    return await _list(request, where, created=None)


async def create(request: Request) -> Response:
    where, form = await views.acting(request)
    try:
        body: dict[str, Any] = {"url": field(form, "url"), "events": [str(e) for e in form.getlist("events")]}
        if field(form, "description"):
            body["description"] = field(form, "description")
        fields = shapes.parse(CreateWebhook, body)
        # Outside a transaction: the URL's host is looked up first (see service/webhooks/ops.py).
        created = await views.in_own(lambda: webhooks.create(actor=where.actor(), **dict(fields)))
    except ServiceError as problem:
        again = await _list(request, where, created=None)
        return refusals.again(again, problem.status, form, request.url.path,
                              refusals.problems_of(problem, "webhook", "create-heading"))
    return await _list(request, where, created=created.dump(), status=201)


async def _list(request: Request, where: Seat, *, created: dict[str, Any] | None, status: int = 200
                ) -> HTMLResponse:
    endpoints = await in_db(_endpoints, where)
    return views.page(request, "webhooks.html", where, status=status, title="Webhooks", nav="webhooks",
                      endpoints=endpoints, catalogue=_catalogue(), created=created)


async def endpoint_page(request: Request, secret: str | None = None) -> Response:
    where = await views.seated(request)
    loaded = await LOG.read(request, where, request.path_params["id"])
    return views.page(request, "webhook.html", where, title="Webhook endpoint", nav="webhooks",
                      log_html=LOG.first(request, where, loaded), secret=secret, **loaded)


async def action(request: Request) -> Response:
    """POST: send test, enable or disable (then back to the endpoint's page), or the confirmed rotate
    secret and delete."""
    endpoint_id, name = request.path_params["id"], request.path_params["action"]
    if name in DESTRUCTIVE:
        return await destructive(request)
    where, form = await views.acting(request)
    try:
        if name == "test":
            await in_db(lambda: webhooks.send_test(actor=where.actor(), webhook_id=endpoint_id))
            message = "Test event queued: its delivery appears in the log below."
        elif name == "enabled":
            enabled = field(form, "enabled") == "true"
            await in_db(lambda: webhooks.update(actor=where.actor(), webhook_id=endpoint_id, enabled=enabled))
            message = "Endpoint enabled." if enabled else "Endpoint disabled: no events are sent to it."
        else:
            return views.not_found(request, "No such action.")
    except ServiceError as problem:
        return views.refused(request, problem, f"{PAGE}/{endpoint_id}", LOG.missing)
    return views.done(request, message, f"{PAGE}/{endpoint_id}", where)


async def destructive(request: Request) -> Response:
    """Rotate secret and Delete: a confirmation page first (GET), the action on its form (POST)."""
    endpoint_id, name = request.path_params["id"], request.path_params["action"]
    if name not in DESTRUCTIVE:
        return views.not_found(request, "No such action.")
    where = await views.seated(request)
    try:
        endpoint = (await in_db(lambda: webhooks.get(actor=where.actor(), webhook_id=endpoint_id))).dump()
    except ServiceError:
        return views.not_found(request, LOG.missing)
    here = f"{PAGE}/{endpoint_id}"
    if request.method == "GET":
        if name == "delete":
            return views.confirm(request, where, title="Delete endpoint",
                                 question=f"Delete the endpoint {endpoint['url']}?",
                                 detail="Its delivery log goes with it, and deliveries not yet sent are dropped.",
                                 action=f"{here}/delete", button="Delete",
                                 cancel=f"{here}?workspace={where.workspace_id}")
        return views.confirm(request, where, title="Rotate secret",
                             question=f"Rotate the signing secret of {endpoint['url']}?",
                             detail="The new secret is shown once. The old one keeps signing alongside it for "
                                    "24 hours.",
                             action=f"{here}/rotate-secret", button="Rotate secret",
                             cancel=f"{here}?workspace={where.workspace_id}")
    try:
        if name == "delete":
            await in_db(lambda: webhooks.delete(actor=where.actor(), webhook_id=endpoint_id))
            return views.done(request, f"Deleted the endpoint {endpoint['url']}.", PAGE, where)
        rotated = await in_db(lambda: webhooks.rotate_secret(actor=where.actor(), webhook_id=endpoint_id))
    except ServiceError as problem:
        return views.failure(request, problem, here)
    return await endpoint_page(request, secret=rotated.secret)


async def redeliver(request: Request) -> Response:
    delivery_id = request.path_params["id"]
    where, _form = await views.acting(request)
    again = await views.attempt(request, lambda: webhooks.redeliver(actor=where.actor(), delivery_id=delivery_id),
                                PAGE, "No webhook delivery with that id.")
    return views.done(request, "Redelivery queued: it appears at the top of the log.",
                      f"{PAGE}/{again.webhook_id}", where)
