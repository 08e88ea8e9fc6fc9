"""Outbound webhooks: endpoints, the delivery rows made from the event outbox, and how one is sent.

The life of an event:

1. a change calls `events.emit()` in its own transaction (the outbox row);
2. `dispatch_pending()` (every scheduler tick) claims undispatched events and, in one transaction,
   writes one `WebhookDelivery` per enabled endpoint that subscribes to the event's type;
3. `deliver(delivery_id)` (a queue task) claims the row with a lease, sends it, and records the
   outcome: `DELIVERED`, or `RETRYING` with the next attempt at the configured delay, or `FAILED`
   after the last attempt;
4. `sweep_due()` (every tick) hands out rows whose retry is due, whose task was never run, or whose
   worker died mid-attempt (the lease expired): at least once, whatever happens to a process.

No HTTP call happens in an API request: the API only writes rows.

Tenancy: endpoints belong to the workspace and receive every profile's events, so creating or
changing one needs a read-write key with scope `full`; a key limited to profiles (or a read key)
may read endpoints and the delivery log, which carry no secrets and no event data.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import logging
import secrets
import ssl
import threading
import time
from dataclasses import dataclass
from datetime import datetime, timedelta
from functools import lru_cache
from typing import Any

import httpx2

from service.engine import core as engine
from service.identity.auth import Actor
from service.kit import clock, crypto, events, ids, local_ca, net, settings
from service.kit.errors import Conflict, FieldProblem, NotFound, ValidationFailed
from service.kit.pagination import Page, paginate
from service.webhooks.shapes import Webhook, WebhookCreated, WebhookDeleted, WebhookEventCatalogue, WebhookSecret
from service.webhooks.shapes import WebhookDelivery as DeliveryRecord
from storage import hot
from storage.db import connection, db, is_postgres
from storage.models import Event, WebhookDelivery, WebhookEndpoint

log = logging.getLogger("switchboard.webhooks")

USER_AGENT = "Switchboard-Webhooks/1.0"
PENDING = ("QUEUED", "RETRYING")
ROTATION_OVERLAP = timedelta(hours=24)
MAX_LIVE_OLD_SECRETS = 5  # rotations within 24 h beyond this drop the oldest: keeps the header short
_SENT_ALWAYS = {"user-agent": USER_AGENT, "accept": "*/*"}
RESPONSE_READ_LIMIT = 64 * 1024  # the receiver's body is not kept; read a little so keep-alive works



# ---------------------------------------------------------------------------------------------
# Secrets: random, encrypted at rest (they must be readable to sign), shown once.


def new_secret() -> str:
    # The standard alphabet, padded: the Standard Webhooks libraries decode it with a
    # non-validating b64decode that would silently drop url-safe `-` and `_`.
    return "whsec_" + base64.b64encode(secrets.token_bytes(32)).decode()


def _seal(value: Any) -> bytes:
    return crypto.encrypt_json({"v": value})


@lru_cache(maxsize=4096)
def _unseal(blob: bytes, secret_key: str) -> Any:
    # Cached on the ciphertext: a worker signs many deliveries with one endpoint's secret, and
    # Fernet decryption per attempt would be most of the signing cost.
    return crypto.decrypt_json(blob)["v"]


def signing_secrets(endpoint: WebhookEndpoint, *, at: Any = None) -> list[str]:
    """The secrets that sign now: the current one first, then those rotated out less than 24 h ago."""
    moment = at or clock.now()
    key = settings.current().secret_key
    out = [_unseal(bytes(endpoint.secret), key)]
    if endpoint.previous_secrets is not None:
        for old in _unseal(bytes(endpoint.previous_secrets), key):
            if old["expiresAt"] > clock.iso(moment):
                out.append(old["secret"])
    return out


def signature_header(body: bytes, secrets_: list[str], timestamp: int) -> str:
    """`t=<unix>,v1=<hex>[,v1=<hex>]`: HMAC-SHA256 keyed with the whole `whsec_...` string (Stripe's scheme)."""
    signed = str(timestamp).encode() + b"." + body
    parts = [f"t={timestamp}"]
    parts += ["v1=" + hmac.new(secret.encode(), signed, hashlib.sha256).hexdigest() for secret in secrets_]
    return ",".join(parts)


def _standard_key(secret: str) -> bytes:
    """The HMAC key of Standard Webhooks: the base64-decoded part after `whsec_`. Secrets made before
    the standard alphabet (unpadded base64url) decode with the url-safe alphabet."""
    encoded = secret.removeprefix("whsec_")
    padded = encoded + "=" * (-len(encoded) % 4)
    if "-" in encoded or "_" in encoded or not encoded.endswith("="):
        return base64.urlsafe_b64decode(padded)
    return base64.b64decode(padded)


def standard_headers(event_id: str, body: bytes, secrets_: list[str], timestamp: int) -> dict[str, str]:
    """`webhook-id`, `webhook-timestamp`, `webhook-signature` (`v1,<base64>` per live secret,
    space-separated): what the `standardwebhooks` libraries verify."""
    signed = f"{event_id}.{timestamp}.".encode() + body
    signatures = [
        "v1," + base64.b64encode(hmac.new(_standard_key(secret), signed, hashlib.sha256).digest()).decode()
        for secret in secrets_
    ]
    return {"webhook-id": event_id, "webhook-timestamp": str(timestamp), "webhook-signature": " ".join(signatures)}


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
        net.check_url(url, allow_private=settings.current().webhook_allow_private)
    except net.AddressRefused as refused:
        raise ValidationFailed.field("url", refused.message) from None
    return url


def _require_admin(actor: Actor) -> None:
    actor.require_write()
    actor.require_full_scope("manage webhook endpoints (they receive every profile's events)")


def get_row(*, actor: Actor, webhook_id: str) -> WebhookEndpoint:
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
    endpoint = WebhookEndpoint.create(
        id=ids.new_id("wh"), workspace=actor.workspace_id, url=url, events=names, description=description,
        enabled=True, secret=_seal(secret), created_at=moment, updated_at=moment,
    )
    return WebhookCreated(**dict(Webhook.model_validate(endpoint)), secret=secret)


def list_endpoints(*, actor: Actor, page: int | None = None, limit: int | None = None) -> Page:
    query = (WebhookEndpoint.select().where(WebhookEndpoint.workspace == actor.workspace_id)
             .order_by(WebhookEndpoint.created_at, WebhookEndpoint.id))
    return paginate(query, page=page, limit=limit, record=Webhook)


def get(*, actor: Actor, webhook_id: str) -> Webhook:
    return Webhook.model_validate(get_row(actor=actor, webhook_id=webhook_id))


def update(*, actor: Actor, webhook_id: str, **changes: Any) -> Webhook:
    """Change the fields given in `changes` (snake_case), and only those."""
    endpoint = get_row(actor=actor, webhook_id=webhook_id)
    _require_admin(actor)
    if "events" in changes:
        endpoint.events = _check_events(changes["events"])
    if "url" in changes:
        endpoint.url = _check_url(changes["url"])
    if "description" in changes:
        endpoint.description = changes["description"]
    if "enabled" in changes:
        endpoint.enabled = changes["enabled"]
    endpoint.updated_at = clock.now()
    endpoint.save()
    return Webhook.model_validate(endpoint)


def delete(*, actor: Actor, webhook_id: str) -> WebhookDeleted:
    """Delete the endpoint with its delivery log; deliveries not yet sent are dropped."""
    endpoint = get_row(actor=actor, webhook_id=webhook_id)
    _require_admin(actor)
    WebhookDelivery.delete().where(WebhookDelivery.endpoint == endpoint.id).execute()
    endpoint.delete_instance()
    return WebhookDeleted(id=endpoint.id, deleted=True)


def rotate_secret(*, actor: Actor, webhook_id: str) -> WebhookSecret:
    endpoint = get_row(actor=actor, webhook_id=webhook_id)
    _require_admin(actor)
    moment = clock.now()
    key = settings.current().secret_key
    old = _unseal(bytes(endpoint.previous_secrets), key) if endpoint.previous_secrets is not None else []
    live = [item for item in old if item["expiresAt"] > clock.iso(moment)]
    live.insert(0, {"secret": _unseal(bytes(endpoint.secret), key),
                    "expiresAt": clock.iso(moment + ROTATION_OVERLAP)})
    secret = new_secret()
    endpoint.secret = _seal(secret)
    endpoint.previous_secrets = _seal(live[:MAX_LIVE_OLD_SECRETS])
    endpoint.updated_at = moment
    endpoint.save()
    return WebhookSecret(secret=secret)


def _new_delivery(*, endpoint_id: str, workspace_id: str, event_id: str, event_type: str,
                  moment: Any) -> dict[str, Any]:
    return {
        "id": ids.new_id("whd"), "workspace": workspace_id, "endpoint": endpoint_id, "event": event_id,
        "event_type": event_type, "status": "QUEUED", "attempts": 0, "next_attempt_at": moment,
        "nudged_at": moment if engine.has_nudger() else None, "created_at": moment, "updated_at": moment,
    }


def _queue_one(row: dict[str, Any]) -> DeliveryRecord:
    WebhookDelivery.insert(**row).execute()
    nudge_after_commit([row["id"]])
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
    return _queue_one(_new_delivery(endpoint_id=endpoint.id, workspace_id=actor.workspace_id, event_id=event.id,
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
    delivery = WebhookDelivery.get_or_none(WebhookDelivery.id == delivery_id,
                                           WebhookDelivery.workspace == actor.workspace_id)
    if delivery is None:
        raise NotFound("No webhook delivery with that id.")
    return DeliveryRecord.model_validate(delivery)


def redeliver(*, actor: Actor, delivery_id: str) -> DeliveryRecord:
    """A new delivery row of the same event to the same endpoint (same envelope id), whatever the old one's state."""
    old = WebhookDelivery.get_or_none(WebhookDelivery.id == delivery_id,
                                      WebhookDelivery.workspace == actor.workspace_id)
    if old is None:
        raise NotFound("No webhook delivery with that id.")
    _require_admin(actor)
    endpoint = WebhookEndpoint.get_by_id(old.endpoint_id)
    if not endpoint.enabled:
        raise Conflict("The endpoint is disabled; enable it before redelivering.")
    return _queue_one(_new_delivery(endpoint_id=endpoint.id, workspace_id=old.workspace_id,
                                    event_id=old.event_id, event_type=old.event_type, moment=clock.now()))


def catalogue() -> WebhookEventCatalogue:
    return WebhookEventCatalogue.model_validate(
        {"data": [{"name": name, "description": text} for name, text in events.CATALOGUE.items()]})


# ---------------------------------------------------------------------------------------------
# Deliveries are work of the engine (service/engine.py): at least once, so a delivery whose worker
# died mid-attempt keeps its status and is simply handed out again when its lease expires.


def lease_seconds() -> float:
    # An attempt can spend the timeout connecting, sending and waiting for the answer; the lease
    # must outlast it or a second worker would take the row while the first still sends it.
    return 3 * settings.current().webhook_timeout_seconds + 5


def deliver(delivery_id: str) -> str | None:
    """One attempt at one delivery, if it is due and free; returns the status it ends in (None: not ours)."""
    with connection(), db.atomic():
        found = claim(delivery_id)
    if found is None:
        return None
    outcome = attempt(found)
    with connection(), db.atomic():
        return _record(found, outcome)


def deliver_group(delivery_ids: list[str]) -> None:
    """Attempts at several deliveries in turn (the group one task hands out), each made as `deliver`
    makes it, in one write transaction per delivery instead of two: an attempt's outcome is written
    in the transaction that claims the next delivery and reads what it sends.

    Each outcome is still written at once, since the next claim follows the answer straight away.
    One row's fault leaves the others to run: a row whose outcome could not be written is handed out
    again when its lease expires, as after a crash.
    """
    answered: tuple[engine.Claim, Outcome] | None = None
    for delivery_id in delivery_ids:
        try:
            with connection(), db.atomic():
                if answered is not None:
                    _record(*answered)
                found = claim(delivery_id)
                loaded = _load(found) if found is not None else None
            answered = None  # written: committed with the claim
            if found is not None:
                answered = (found, _attempt_loaded(found, loaded))
        except Exception:
            log.exception("webhook delivery %s failed; the sweeper will hand it out again", delivery_id)
    if answered is not None:
        try:
            with connection(), db.atomic():
                _record(*answered)
        except Exception:
            log.exception("webhook delivery %s failed; the sweeper will hand it out again", answered[0].id)


def _record(found: engine.Claim, outcome: Outcome) -> str | None:
    if not outcome.delivered:
        log.info("webhook delivery %s attempt %d failed: %s", found.id, found.attempts, outcome.error)
    return record_outcome(found, outcome)


DELIVERY_WORK = engine.Kind(
    name="webhook_delivery", table="webhook_delivery", ready=PENDING, run=deliver, run_group=deliver_group,
    lease_seconds=lease_seconds, returning=("endpoint_id", "event_id"),
)


def nudge_after_commit(delivery_ids: list[str]) -> None:
    engine.nudge_after_commit(DELIVERY_WORK, delivery_ids)


def _claim_subquery(query: Any) -> Any:
    # Several workers tick at once: on PostgreSQL they skip each other's rows instead of waiting.
    return query.for_update(skip_locked=True) if is_postgres() else query


@dataclass(frozen=True)
class Dispatched:
    events: int  # events claimed (some may have no subscribed endpoint)
    deliveries: list[str]  # ids of the delivery rows written


def dispatch_pending(*, limit: int = 500) -> Dispatched:
    """Turn up to `limit` undispatched events into delivery rows.

    Runs in the caller's transaction: the events are marked dispatched and their deliveries written
    together, so a crash in between leaves the events to dispatch again, never half done.
    """
    moment = clock.now()
    pending = _claim_subquery(
        Event.select(Event.id).where(Event.dispatched_at.is_null()).order_by(Event.created_at, Event.id).limit(limit)
    )
    claimed = list(
        Event.update(dispatched_at=moment)
        .where(Event.id.in_(pending), Event.dispatched_at.is_null())
        .returning(Event.id, Event.workspace, Event.type, Event.created_at)
        .namedtuples()
        .execute()
    )
    if not claimed:
        return Dispatched(0, [])
    claimed.sort(key=lambda row: (row.created_at, row.id))
    workspaces = {row.workspace for row in claimed}
    endpoints: dict[str, list[WebhookEndpoint]] = {}
    for endpoint in WebhookEndpoint.select(WebhookEndpoint.id, WebhookEndpoint.workspace, WebhookEndpoint.events).where(
        WebhookEndpoint.workspace.in_(list(workspaces)), WebhookEndpoint.enabled == True  # noqa: E712 - SQL
    ):
        endpoints.setdefault(endpoint.workspace_id, []).append(endpoint)
    rows = [
        _new_delivery(endpoint_id=endpoint.id, workspace_id=event.workspace, event_id=event.id,
                      event_type=event.type, moment=moment)
        for event in claimed
        for endpoint in endpoints.get(event.workspace, [])
        if not endpoint.events or event.type in endpoint.events
    ]
    for start in range(0, len(rows), 200):
        # Built by hand and kept: peewee builds a batch's SQL anew each time, which was a tenth of a
        # busy worker's time holding the GIL.
        hot.insert_many(WebhookDelivery, rows[start : start + 200])
    new_ids = [row["id"] for row in rows]
    nudge_after_commit(new_ids)
    return Dispatched(len(claimed), new_ids)


def sweep_due(*, limit: int = 500) -> list[str]:
    """Mark up to `limit` deliveries that are due and in no one's hands as nudged; return their ids.

    Due: a retry whose time came, a row whose task was lost, a row whose worker died mid-attempt
    (its lease expired). Runs in the caller's transaction; the caller enqueues after commit.
    """
    return engine.sweep(DELIVERY_WORK, limit=limit).nudged


@dataclass(frozen=True)
class Outcome:
    delivered: bool
    response_status: int | None = None
    error: str | None = None
    final: bool = False  # no retry whatever the attempt count (the endpoint is disabled)


def claim(delivery_id: str) -> engine.Claim | None:
    """Take the row for one attempt: None when it is not due, done, or held (see `engine.claim`)."""
    return engine.claim(DELIVERY_WORK, delivery_id)


def record_outcome(found: engine.Claim, outcome: Outcome) -> str | None:
    """Write the attempt's outcome if this worker still holds the row; return the new status."""
    moment = clock.now()
    delays = settings.current().webhook_retry_delays
    delivered_at = next_attempt_at = None
    if outcome.delivered:
        status, delivered_at = "DELIVERED", moment
    elif outcome.final or found.attempts > len(delays):
        status = "FAILED"
    else:
        status, next_attempt_at = "RETRYING", moment + timedelta(seconds=delays[found.attempts - 1])
    error = None if outcome.delivered else outcome.error
    held = engine.finish(found, status=status, next_attempt_at=next_attempt_at, response_status=outcome.response_status,
                         last_error=error, delivered_at=delivered_at)
    return status if held else None


# ---------------------------------------------------------------------------------------------
# Sending


def render_body(event: Event) -> bytes:
    """The envelope's bytes, the same on every attempt and redelivery (the signature covers them)."""
    return json.dumps(events.envelope(event), ensure_ascii=False, separators=(",", ":")).encode()


_transport_lock = threading.Lock()
_transport: tuple[tuple[Any, ...], net.GuardedTransport] | None = None


def transport() -> net.GuardedTransport:
    """One guarded transport per process (per settings), shared by the worker threads for keep-alive.

    Attempts go to the transport itself, not through an `httpx2.Client`: a webhook needs none of
    the client's layers (authentication, redirects, cookies, merged settings), which cost 45–65 µs
    of CPU a `POST` (282–301 against 236–239 µs, measured to a local HTTPS receiver), all of it
    holding the GIL the worker's threads share.
    """
    global _transport
    current = settings.current()
    local_ca = _local_ca(current)
    config = (current.webhook_allow_private, current.webhook_ca_bundle, local_ca)
    with _transport_lock:
        if _transport is None or _transport[0] != config:
            if _transport is not None:
                _transport[1].close()
            _transport = (config, net.guarded_transport(
                allow_private=current.webhook_allow_private, extra_ca_bundle=current.webhook_ca_bundle,
                local_ca_bundle=local_ca[0] if local_ca else None,
            ))
        return _transport[1]


def _local_ca(current: settings.Settings) -> tuple[str, float] | None:
    """The data dir's local CA (made by `switchboard webhooks listen`) and its mtime, trusted only
    where private webhook URLs are allowed: the receivers it signs for live on this machine."""
    if not current.webhook_allow_private:
        return None
    path = local_ca.ca_path(current.data_dir)
    try:
        return str(path), path.stat().st_mtime
    except OSError:
        return None


def _describe(error: Exception) -> str:
    """A fixed sentence for a failed attempt: exception text (paths, library internals) is never shown."""
    if isinstance(error, net.AddressRefused):
        return error.message
    if isinstance(error, httpx2.TimeoutException):
        return f"No answer within {settings.current().webhook_timeout_seconds:g} s."
    chain: BaseException | None = error
    while chain is not None:
        if isinstance(chain, ssl.SSLCertVerificationError):
            return "The endpoint's TLS certificate could not be verified."
        if isinstance(chain, ssl.SSLError):
            return "The TLS handshake with the endpoint failed."
        if isinstance(chain, ConnectionRefusedError):
            return "The endpoint refused the connection."
        chain = chain.__cause__ or chain.__context__
    if isinstance(error, httpx2.ConnectError):
        return "Could not connect to the endpoint."
    if isinstance(error, httpx2.RemoteProtocolError):
        return "The endpoint closed the connection or answered with malformed HTTP."
    return "The request to the endpoint failed."


def send(*, url: str, body: bytes, headers: dict[str, str]) -> Outcome:
    """POST the body; 2xx within the timeout is delivered, anything else (a redirect too) is a failure."""
    timeout = settings.current().webhook_timeout_seconds
    deadline = time.monotonic() + timeout
    try:
        request = httpx2.Request("POST", url, content=body, headers={**_SENT_ALWAYS, **headers},
                                 extensions={"timeout": dict.fromkeys(("connect", "read", "write", "pool"), timeout)})
        response = transport().handle_request(request)
        try:
            read = 0
            for chunk in response.iter_raw():  # the body is not kept, only drained
                read += len(chunk)
                if read >= RESPONSE_READ_LIMIT or time.monotonic() > deadline:
                    break
            status = response.status_code
        finally:
            response.close()
    except (httpx2.HTTPError, net.AddressRefused, OSError) as error:
        return Outcome(False, None, _describe(error))
    if 200 <= status < 300:
        return Outcome(True, status)
    if 300 <= status < 400:
        return Outcome(False, status, f"HTTP {status}: redirects are not followed.")
    return Outcome(False, status, f"HTTP {status}.")


# Read once per attempt: written as SQL rather than built by the query builder, whose per-call cost
# showed in a worker's throughput (its threads share one GIL).
_LOAD_SQL = """
SELECT w.url, w.enabled, w.secret, w.previous_secrets, e.type, e.data, e.created_at, e.workspace_id
  FROM webhook_endpoint w, event e
 WHERE w.id = ? AND e.id = ?
"""


def _as_datetime(value: Any) -> datetime:
    return value if isinstance(value, datetime) else datetime.fromisoformat(value)


def attempt(found: engine.Claim) -> Outcome:
    """Build and send one attempt of a claimed delivery.

    The rows are read in a short connection block and the HTTP call made outside it, so a slow
    endpoint never holds a pooled PostgreSQL connection (or any transaction) for its 10 s.
    """
    with connection():
        loaded = _load(found)
    return _attempt_loaded(found, loaded)


def _load(found: engine.Claim) -> tuple[Any, ...] | None:
    """The endpoint's and the event's columns that an attempt needs (None: one of them is gone)."""
    return hot.run_fixed(_LOAD_SQL, (found.columns["endpoint_id"], found.columns["event_id"])).fetchone()


def _attempt_loaded(found: engine.Claim, row: tuple[Any, ...] | None) -> Outcome:
    if row is None:
        return Outcome(False, None, "The endpoint or the event no longer exists.", final=True)
    url, enabled, secret, previous, event_type, data, created_at, workspace_id = row
    if not enabled:
        return Outcome(False, None, "The endpoint is disabled.", final=True)
    endpoint = WebhookEndpoint(secret=secret, previous_secrets=previous)
    event = Event(id=found.columns["event_id"], type=event_type, data=json.loads(data),
                  created_at=_as_datetime(created_at), workspace=workspace_id)
    body = render_body(event)
    live, timestamp = signing_secrets(endpoint), int(time.time())
    headers = {
        "content-type": "application/json",
        "x-service-signature": signature_header(body, live, timestamp),
        "x-service-event": event_type,
        "x-service-delivery": found.id,
        **standard_headers(event.id, body, live, timestamp),
    }
    return send(url=url, body=body, headers=headers)
