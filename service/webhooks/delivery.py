"""Sending one webhook delivery: its body, its signed headers and the HTTP attempt.

No transaction is open while an attempt waits on the endpoint: the rows are read first in a short
connection block, and the outcome is written by the delivery's work (service/webhooks/work.py).
"""

from __future__ import annotations

import json
import ssl
import threading
import time
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import httpx2

from kit import local_ca, net
from kit.settings import Settings
from service.common import events
from service.common.configured import Configured
from service.engine import core as engine
from service.webhooks.signing import signature_header, signing_secrets, standard_headers
from storage import hot
from storage.db import connection
from storage.models import Event, WebhookEndpoint

settings = Configured(__name__)  # handed in by the composition root (wire)

USER_AGENT = "Switchboard-Webhooks/1.0"
_SENT_ALWAYS = {"user-agent": USER_AGENT, "accept": "*/*"}
RESPONSE_READ_LIMIT = 64 * 1024  # the receiver's body is not kept; read a little so keep-alive works


@dataclass(frozen=True)
class Outcome:
    delivered: bool
    response_status: int | None = None
    error: str | None = None
    final: bool = False  # no retry whatever the attempt count (the endpoint is disabled)



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
    current = settings()
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


def _local_ca(current: Settings) -> tuple[str, float] | None:
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
        return f"No answer within {settings().webhook_timeout_seconds:g} s."
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
    timeout = settings().webhook_timeout_seconds
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
    row = hot.run_fixed(_LOAD_SQL, (found.columns["endpoint_id"], found.columns["event_id"])).fetchone()
    return tuple(row) if row is not None else None


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
