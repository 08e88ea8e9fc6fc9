
from http_api.declare import op
from http_api.routing import Call, Reply
from kit.pagination import Page
from kit.shapes import PageQuery, page_of
from service.webhooks import ops as webhooks
from service.webhooks.shapes import (
    CreateWebhook,
    DeliveryQuery,
    UpdateWebhook,
    Webhook,
    WebhookCreated,
    WebhookDeleted,
    WebhookDelivery,
    WebhookEventCatalogue,
    WebhookSecret,
)

_WHO = ("Endpoints receive every profile's events, so creating or changing one (also rotating its "
        "secret, sending a test, redelivering) needs a read-write key with scope `full` (403 otherwise); "
        "any key of the workspace may read endpoints and their delivery log, which hold no secret and no "
        "event data.")


def create(call: Call) -> WebhookCreated:
    return webhooks.create(actor=call.actor, **dict(call.body))


def resume_create(call: Call, webhook_id: str) -> Reply:
    """A retry under the key of a request that died after storing its endpoint: that endpoint, never a second."""
    return Reply(webhooks.created(actor=call.actor, webhook_id=webhook_id), status=201)


def list_(call: Call) -> Page:
    return webhooks.list_endpoints(actor=call.actor, **dict(call.query))


def get(call: Call) -> Webhook:
    return webhooks.get(actor=call.actor, webhook_id=call.path["id"])


def update(call: Call) -> Webhook:
    return webhooks.update(actor=call.actor, webhook_id=call.path["id"], **call.body.model_dump(exclude_unset=True))


def delete(call: Call) -> WebhookDeleted:
    return webhooks.delete(actor=call.actor, webhook_id=call.path["id"])


def rotate_secret(call: Call) -> WebhookSecret:
    return webhooks.rotate_secret(actor=call.actor, webhook_id=call.path["id"])


def send_test(call: Call) -> Reply:
    return Reply(webhooks.send_test(actor=call.actor, webhook_id=call.path["id"]), status=202)


def deliveries(call: Call) -> Page:
    return webhooks.list_deliveries(actor=call.actor, webhook_id=call.path["id"], **dict(call.query))


def redeliver(call: Call) -> Reply:
    return Reply(webhooks.redeliver(actor=call.actor, delivery_id=call.path["id"]), status=202)


def catalogue(call: Call) -> WebhookEventCatalogue:
    return webhooks.catalogue()


TAG = "Webhooks"

# `/webhooks/events` is declared before `/webhooks/{id}` so that the catalogue is not read as an id.
OPERATIONS = [
    op("GET", "/webhooks/events", catalogue, summary="The event catalogue", tag=TAG,
       operation_id="listWebhookEvents", answer=WebhookEventCatalogue,
       description="Every event name with its description. Names are never renamed; new ones are added "
                   "over time and reach endpoints subscribed to every event (`events: []`)."),
    op("POST", "/webhooks", create, summary="Create a webhook endpoint (its secret is shown once)", tag=TAG,
       operation_id="createWebhook", ok=201, body=CreateWebhook, answer=WebhookCreated,
       waits=True, resume=resume_create,  # the URL's host is looked up before the endpoint is written
       description="Deliveries are signed with `x-service-signature: t=<unix>,v1=<hex HMAC-SHA256 of "
                   "`<t>.<raw body>` keyed with the whole `whsec_` secret>` (Stripe's scheme), and "
                   "retried after 30 s, 2 min, 8 min, 32 min and 2 h (6 attempts), then `FAILED`. "
                   "Delivery is at least once and in no particular order: use the envelope `id` to drop "
                   "duplicates and `createdAt` to order. " + _WHO),
    op("GET", "/webhooks", list_, summary="List webhook endpoints (never their secrets)", tag=TAG,
       operation_id="listWebhooks", query=PageQuery, answer=page_of(Webhook), description=_WHO),
    op("GET", "/webhooks/{id}", get, summary="Get a webhook endpoint", tag=TAG, operation_id="getWebhook",
       answer=Webhook),
    op("PATCH", "/webhooks/{id}", update, summary="Change a webhook endpoint", tag=TAG,
       operation_id="updateWebhook", body=UpdateWebhook, answer=Webhook, waits=True,
       description="Any subset of `url`, `events`, `description`, `enabled`. " + _WHO),
    op("DELETE", "/webhooks/{id}", delete, summary="Delete a webhook endpoint", tag=TAG,
       operation_id="deleteWebhook", answer=WebhookDeleted,
       description="Deletes the endpoint with its delivery log; deliveries not yet sent are dropped."),
    op("POST", "/webhooks/{id}/rotate-secret", rotate_secret, summary="Rotate the signing secret", tag=TAG,
       operation_id="rotateWebhookSecret", answer=WebhookSecret,
       description="The new secret signs at once; each secret replaced less than 24 h ago keeps signing "
                   "alongside (one `v1=` per live secret, the newest first; at most 5 old ones)."),
    op("POST", "/webhooks/{id}/test", send_test, summary="Send a webhook.test event to this endpoint", tag=TAG,
       operation_id="testWebhook", ok=202, answer=WebhookDelivery, errors=(409,),
       description="Queues a `webhook.test` event (data: `{webhook: <endpoint record>}`) to this endpoint "
                   "only, whatever its event filter, and answers its delivery. A disabled endpoint: 409."),
    op("GET", "/webhooks/{id}/deliveries", deliveries, summary="The endpoint's delivery log", tag=TAG,
       operation_id="listWebhookDeliveries", query=DeliveryQuery,
       answer=page_of(WebhookDelivery),
       description="Newest first. `attempts` counts attempts made, also one cut short by a worker that "
                   "stopped (that attempt is made again). `responseStatus` and `lastError` describe the "
                   "last attempt. An event is kept `SWITCHBOARD_EVENT_RETENTION_DAYS` (default 30) once "
                   "every delivery of it has ended; then it leaves the log with its deliveries."),
    op("POST", "/webhooks/deliveries/{id}/redeliver", redeliver, summary="Send a delivery's event again",
       tag=TAG, operation_id="redeliverWebhook", ok=202, answer=WebhookDelivery, errors=(409,),
       description="A new delivery of the same event (the same envelope `id`) to the same endpoint, with "
                   "a fresh attempt count, whatever the state of the original. A disabled endpoint: 409. A "
                   "delivery whose event is past its retention is gone: 404."),
]
