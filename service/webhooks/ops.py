"""Outbound webhooks: what front doors call about customers' endpoints and their delivery log.

No HTTP call happens in an API request: the API only writes rows. Dispatching events and sending
deliveries are the engine's work (service/webhooks/work.py); signing is service/webhooks/signing.py.
Saving a URL does wait on the network: its host name is looked up (up to `net`'s deadline) to
refuse a private address. So `create` and `update` run outside a transaction (their front doors
run them as work that waits) and write in a short one of their own after the lookup: a slow name
server holds neither SQLite's one write lock nor one of the few storage threads.

Tenancy: endpoints belong to the workspace and receive every profile's events, so creating or
changing one needs a read-write key with scope `full`; a key limited to profiles (or a read key)
may read endpoints and the delivery log, which carry no secrets and no event data.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from kit import clock, ids, net
from kit.errors import Conflict, FieldProblem, NotFound, ValidationFailed
from kit.pagination import Page, paginate
from service.common import audit, events, idempotency
from service.common.configured import Configured
from service.identity.auth import Actor
from service.webhooks import work
from service.webhooks.shapes import Webhook, WebhookCreated, WebhookDeleted, WebhookEventCatalogue, WebhookSecret
from service.webhooks.shapes import WebhookDelivery as DeliveryRecord
from service.webhooks.signing import new_secret, seal, unseal
from storage.db import db
from storage.models import Event, WebhookDelivery, WebhookEndpoint

settings = Configured(__name__)  # handed in by the composition root (wire)

ROTATION_OVERLAP = timedelta(hours=24)
MAX_LIVE_OLD_SECRETS = 5  # rotations within 24 h beyond this drop the oldest: keeps the header short


# ---------------------------------------------------------------------------------------------
# Endpoints


def _check_events(names: list[str]) -> list[str]:
    unknown = [FieldProblem(f"events[{index}]", f"{name!r} is not a known event; see GET /v1/webhooks/events")
               for index, name in enumerate(names) if name not in events.CATALOGUE]
    if unknown:
        raise ValidationFailed("Some event names are not known.", details=unknown)
    return list(dict.fromkeys(names))


def _check_url(url: str) -> str:
    parts = url.split("://", 1)[1].split("/", 1)[0]
    if "@" in parts:
        # Credentials in the URL would be stored and shown in clear; the signature authenticates us.
        raise ValidationFailed.field("url", "must not carry a user name or password")
    try:
        net.check_url(url, allow_private=settings().webhook_allow_private)
    except net.AddressRefused as refused:
        raise ValidationFailed.field("url", refused.message) from None
    return url


def _require_admin(actor: Actor) -> None:
    actor.require_role("admin", MANAGE_WEBHOOKS)
    actor.require_write()
    actor.require_full_scope("manage webhook endpoints (they receive every profile's events)")


MANAGE_WEBHOOKS = "manage webhooks"


def get_row(*, actor: Actor, webhook_id: str) -> WebhookEndpoint:
    actor.require_role("admin", MANAGE_WEBHOOKS)
    endpoint = WebhookEndpoint.get_or_none(WebhookEndpoint.id == webhook_id,
                                           WebhookEndpoint.workspace == actor.workspace_id)
    if endpoint is None:
        raise NotFound("No webhook endpoint with that id.")
    return endpoint


def create(*, actor: Actor, url: str, events: list[str] | None = None,
           description: str | None = None) -> WebhookCreated:
    _require_admin(actor)
    names = _check_events(events or [])
    _check_url(url)
    secret = new_secret()
    moment = clock.now()
    with db.atomic():
        endpoint = WebhookEndpoint.create(
            id=ids.new_id("wh"), workspace=actor.workspace_id, url=url, events=names, description=description,
            enabled=True, secret=seal(secret), created_at=moment, updated_at=moment,
        )
        idempotency.attach(endpoint.id)
        audit.record(actor, "webhook.created", target=("webhook", endpoint.id), details={"url": url})
    return WebhookCreated(**dict(Webhook.model_validate(endpoint)), secret=secret)


def created(*, actor: Actor, webhook_id: str) -> WebhookCreated:
    """The answer to a retry under the key of a create that died after storing its endpoint: that
    endpoint with its secret, as the first answer would have shown it, never a second endpoint."""
    endpoint = get_row(actor=actor, webhook_id=webhook_id)
    secret = unseal(bytes(endpoint.secret), settings().secret_key)
    return WebhookCreated(**dict(Webhook.model_validate(endpoint)), secret=secret)


def list_endpoints(*, actor: Actor, page: int | None = None, limit: int | None = None) -> Page:
    actor.require_role("admin", MANAGE_WEBHOOKS)
    query = (WebhookEndpoint.select().where(WebhookEndpoint.workspace == actor.workspace_id)
             .order_by(WebhookEndpoint.created_at, WebhookEndpoint.id))
    return paginate(query, page=page, limit=limit, record=Webhook)


def get(*, actor: Actor, webhook_id: str) -> Webhook:
    return Webhook.model_validate(get_row(actor=actor, webhook_id=webhook_id))


def update(*, actor: Actor, webhook_id: str, **changes: Any) -> Webhook:
    """Change the fields given in `changes` (snake_case), and only those."""
    get_row(actor=actor, webhook_id=webhook_id)  # a missing endpoint is a 404 before anything else
    _require_admin(actor)
    names = _check_events(changes["events"]) if "events" in changes else None
    if "url" in changes:
        _check_url(changes["url"])  # before the transaction: it may wait on a name server
    with db.atomic():
        endpoint = get_row(actor=actor, webhook_id=webhook_id)  # again, in the transaction that writes it
        if names is not None:
            endpoint.events = names
        for field in ("url", "description", "enabled"):
            if field in changes:
                setattr(endpoint, field, changes[field])
        endpoint.updated_at = clock.now()
        endpoint.save()
        audit.record(actor, "webhook.updated", target=("webhook", endpoint.id), details={"fields": sorted(changes)})
    return Webhook.model_validate(endpoint)


def delete(*, actor: Actor, webhook_id: str) -> WebhookDeleted:
    """Delete the endpoint with its delivery log; deliveries not yet sent are dropped."""
    endpoint = get_row(actor=actor, webhook_id=webhook_id)
    _require_admin(actor)
    WebhookDelivery.delete().where(WebhookDelivery.endpoint == endpoint.id).execute()
    endpoint.delete_instance()
    audit.record(actor, "webhook.deleted", target=("webhook", endpoint.id))
    return WebhookDeleted(id=endpoint.id, deleted=True)


def rotate_secret(*, actor: Actor, webhook_id: str) -> WebhookSecret:
    endpoint = get_row(actor=actor, webhook_id=webhook_id)
    _require_admin(actor)
    moment = clock.now()
    key = settings().secret_key
    old = unseal(bytes(endpoint.previous_secrets), key) if endpoint.previous_secrets is not None else []
    live = [item for item in old if item["expiresAt"] > clock.iso(moment)]
    live.insert(0, {"secret": unseal(bytes(endpoint.secret), key),
                    "expiresAt": clock.iso(moment + ROTATION_OVERLAP)})
    secret = new_secret()
    endpoint.secret = seal(secret)
    endpoint.previous_secrets = seal(live[:MAX_LIVE_OLD_SECRETS])
    endpoint.updated_at = moment
    endpoint.save()
    audit.record(actor, "webhook.secret_rotated", target=("webhook", endpoint.id))
    return WebhookSecret(secret=secret)


def _queue_one(row: dict[str, Any]) -> DeliveryRecord:
    WebhookDelivery.insert(**row).execute()
    work.nudge_after_commit([row["id"]])
    return DeliveryRecord.model_validate(WebhookDelivery.get_by_id(row["id"]))


def send_test(*, actor: Actor, webhook_id: str) -> DeliveryRecord:
    """Queue a `webhook.test` event to this endpoint only, whatever its event filter."""
    endpoint = get_row(actor=actor, webhook_id=webhook_id)
    _require_admin(actor)
    if not endpoint.enabled:
        raise Conflict("The endpoint is disabled; enable it before sending a test event.")
    moment = clock.now()
    event = events.emit(workspace_id=actor.workspace_id, type="webhook.test",
                        data={"webhook": Webhook.model_validate(endpoint).dump()})
    # Already dispatched: the dispatcher must not fan it out to the workspace's other endpoints.
    Event.update(dispatched_at=moment).where(Event.id == event.id).execute()
    return _queue_one(work.new_delivery(endpoint_id=endpoint.id, workspace_id=actor.workspace_id, event_id=event.id,
                                    event_type=event.type, moment=moment))


def list_deliveries(*, actor: Actor, webhook_id: str, status: str | None = None, event: str | None = None,
                    page: int | None = None, limit: int | None = None) -> Page:
    endpoint = get_row(actor=actor, webhook_id=webhook_id)
    if event is not None and event not in events.CATALOGUE:
        raise ValidationFailed.field("event", f"{event!r} is not a known event; see GET /v1/webhooks/events")
    query = WebhookDelivery.select().where(WebhookDelivery.endpoint == endpoint.id)
    if status is not None:
        query = query.where(WebhookDelivery.status == status)
    if event is not None:
        query = query.where(WebhookDelivery.event_type == event)
    query = query.order_by(WebhookDelivery.created_at.desc(), WebhookDelivery.id.desc())
    return paginate(query, page=page, limit=limit, record=DeliveryRecord)


def get_delivery(*, actor: Actor, delivery_id: str) -> DeliveryRecord:
    actor.require_role("admin", MANAGE_WEBHOOKS)
    delivery = WebhookDelivery.get_or_none(WebhookDelivery.id == delivery_id,
                                           WebhookDelivery.workspace == actor.workspace_id)
    if delivery is None:
        raise NotFound("No webhook delivery with that id.")
    return DeliveryRecord.model_validate(delivery)


def redeliver(*, actor: Actor, delivery_id: str) -> DeliveryRecord:
    """A new delivery row of the same event to the same endpoint (same envelope id), whatever the old one's state."""
    actor.require_role("admin", MANAGE_WEBHOOKS)
    old = WebhookDelivery.get_or_none(WebhookDelivery.id == delivery_id,
                                      WebhookDelivery.workspace == actor.workspace_id)
    if old is None:
        raise NotFound("No webhook delivery with that id.")
    _require_admin(actor)
    endpoint = WebhookEndpoint.get_by_id(old.endpoint_id)
    if not endpoint.enabled:
        raise Conflict("The endpoint is disabled; enable it before redelivering.")
    return _queue_one(work.new_delivery(endpoint_id=endpoint.id, workspace_id=old.workspace_id,
                                    event_id=old.event_id, event_type=old.event_type, moment=clock.now()))


def catalogue() -> WebhookEventCatalogue:
    return WebhookEventCatalogue.model_validate(
        {"data": [{"name": name, "description": text} for name, text in events.CATALOGUE.items()]})
