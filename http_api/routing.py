"""How a /v1 operation is declared and run.

An `Operation` names its method, path, body and query shapes and its answers, each a pydantic
model (`kit.shapes`); the same declaration validates requests (the body and query reach the
handler as their models) and writes the OpenAPI document. Handlers are plain synchronous
functions, run by `storage.requests.run` as every front door's work is: a read (a GET whose key is
known, whose rate-limit tokens are already leased to this process and whose handler only reads)
on the event loop itself on SQLite; everything else, and every read that turns out to need a write
it cannot make at once (the process must lease more rate-limit tokens; the key's `lastUsedAt` is
due while another connection writes), in one hop to the storage threads (authentication, rate
limit, idempotency, the handler in one transaction), so the event loop never waits on a writer or
on the network.
"""

from __future__ import annotations

import functools
import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import BaseModel
from starlette.requests import Request
from starlette.responses import Response
from starlette.types import Receive, Scope, Send

from kit import json_input, log_context, shapes
from kit.errors import BadRequest, NotFound, PayloadTooLarge, ServiceError, UnsupportedMediaType
from kit.pagination import Page
from service.common import idempotency, ratelimit
from service.identity.auth import Actor, authenticate_api_key, outbound_bucket
from storage import requests
from storage.db import db
from storage.requests import Transaction, in_transaction, transaction

MAX_BODY_BYTES = 1024 * 1024


@dataclass
class Call:
    """What a handler receives: the actor and the validated inputs (the operation's models)."""

    actor: Actor
    path: dict[str, str]
    query: Any  # the query model, or None when the operation takes no query
    body: Any  # the body model, or None when the operation takes no body
    # When the request came in (`time.monotonic()`): what the process read after then may serve it
    # (`service.common.epochs`).
    arrived: float | None = None


@dataclass
class Reply:
    body: Any
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)


Handler = Callable[[Call], Any]
Shape = type[BaseModel]


@dataclass
class Operation:
    method: str
    path: str
    handler: Handler
    summary: str
    tag: str
    operation_id: str
    responses: dict[int, Shape | None]
    body: Shape | None = None
    body_required: bool = True
    query: Shape | None = None
    auth: bool = True
    description: str = ""
    waits: bool = False  # calls a platform: may wait seconds on the network
    # "read" (GET): one snapshot, no write lock; "write": one write transaction around the handler;
    # "own": the handler runs short transactions itself, because it calls a platform in between.
    transaction: Transaction | Literal[""] = ""
    # For "own" operations under an `Idempotency-Key`: answers a retry whose first request died after
    # making its resource (given the resource's id), instead of running the operation again.
    resume: Callable[[Call, str], Any] | None = None
    # Takes the raw request itself (a media upload's bytes, streamed to disk): no JSON body, no
    # 1 MiB limit; it authenticates and answers on its own.
    stream: Callable[[Request], Any] | None = None
    # A body that is not JSON (a CSV file): its media type. The handler gets the raw bytes as
    # `call.body`, within the same 1 MiB limit; another Content-Type → 415.
    raw_body: str | None = None

    def __post_init__(self) -> None:
        if not self.transaction:
            self.transaction = "own" if self.waits else ("read" if self.method == "GET" else "write")

    @functools.cached_property
    def success_status(self) -> int:
        return min(status for status in self.responses if status < 400)


def render_json(body: Any) -> bytes:
    # Records and pages are written by pydantic-core straight to JSON (compact, UTF-8 as is).
    if isinstance(body, Page):
        return body.json()
    if isinstance(body, BaseModel):
        return body.model_dump_json(by_alias=True).encode()
    return json.dumps(body, ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode()


class JsonResponse(Response):
    """A JSON answer with its header lines written once, as bytes. (Starlette's own constructor
    encodes the given headers, then searches them for the two it adds: a tenth of a quick read.)"""

    media_type = "application/json"

    def __init__(self, body: bytes, status: int, headers: dict[str, str] | None = None) -> None:
        self.status_code = status
        self.background = None
        self.body = body
        self.raw_headers = [(b"content-type", b"application/json"), (b"content-length", b"%d" % len(body))]
        if headers:
            self.raw_headers += [(_header_name(name), value.encode("latin-1")) for name, value in headers.items()]

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        # Starlette's, less its checks for a WebSocket denial and a background task: neither is ever one.
        await send({"type": "http.response.start", "status": self.status_code, "headers": self.raw_headers})
        await send({"type": "http.response.body", "body": self.body})


@functools.cache  # the names come from code: the rate-limit headers, Retry-After, Location, ...
def _header_name(name: str) -> bytes:
    return name.lower().encode("latin-1")


def json_response(status: int, body: Any, headers: dict[str, str] | None = None) -> Response:
    return JsonResponse(render_json(body), status, headers)


def error_response(error: ServiceError, headers: dict[str, str] | None = None) -> Response:
    return json_response(error.status, error.body(), {**(headers or {}), **error.headers})


async def read_body(request: Request) -> bytes:
    declared = request.headers.get("content-length")
    if declared is not None and declared.isascii() and declared.isdigit() and int(declared) > MAX_BODY_BYTES:
        raise PayloadTooLarge()
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > MAX_BODY_BYTES:
            raise PayloadTooLarge()
        chunks.append(chunk)
    return b"".join(chunks)


def _carries_body(request: Request) -> bool:
    # On the raw header list (ASGI names are lower case): a miss in Starlette's `Headers` raises
    # and catches a KeyError, and nearly every GET misses twice here.
    for name, value in request.scope["headers"]:
        if name == b"transfer-encoding" or (name == b"content-length" and value not in (b"", b"0")):
            return True
    return False


def _authorization(request: Request) -> str | None:
    # The `Authorization` line, read off the raw list (ASGI names are lower case): building
    # `Headers` costs more than the rest of a quick read's header handling. Two lines are refused
    # rather than one picked: a proxy and the client may disagree on which one counts.
    found = None
    for name, value in request.scope["headers"]:
        if name == b"authorization":
            if found is not None:
                raise BadRequest("Send one Authorization header, not several.")
            found = value.decode("latin-1")
    return found


def parse_json_body(op: Operation, content_type: str | None, raw: bytes) -> Any:
    if op.raw_body is not None:
        if (content_type or "").split(";")[0].strip().lower() != op.raw_body:
            raise UnsupportedMediaType(f"The body must be {op.raw_body}.")
        return raw
    if op.body is None:
        return None
    if not raw.strip():
        if op.body_required:
            raise BadRequest("This operation needs a JSON object body.")
        return shapes.parse(op.body, {})
    media_type = (content_type or "").split(";")[0].strip().lower()
    if media_type != "application/json":
        raise UnsupportedMediaType()
    decoded = json_input.decode(raw)
    if not isinstance(decoded, dict):
        raise BadRequest("The request body must be a JSON object.")
    return shapes.parse(op.body, decoded)


def _read_on_loop(op: Operation, request: Request, spent: list[ratelimit.Quota], arrived: float,
                  rate_limit: int) -> Response:
    """A read in the event loop's snapshot (`storage.requests.run`). Should it need a write that
    could wait, `WriteNeeded` leaves it and nothing was written, but the rate-limit token it spent
    is kept in `spent`, so the attempt on a thread does not count the request twice."""
    quota = None
    try:
        actor = authenticate_api_key(_authorization(request), arrived=arrived)
        log_context.workspace_id.set(actor.workspace_id)
        quota = ratelimit.hit(actor.credential_id, limit=rate_limit, leased_only=True)
        spent.append(quota)
        call = Call(actor=actor, path=dict(request.path_params), query=_query(op, request), body=None,
                    arrived=arrived)
        return _to_response(op, op.handler(call), quota.headers())
    except ServiceError as error:
        return error_response(error, quota.headers() if quota is not None else {})


def _execute(op: Operation, request: Request, raw: bytes, admitted: ratelimit.Quota | None = None,
             arrived: float | None = None, *, rate_limit: int) -> Response:
    """The synchronous part of a request, run in a worker thread. `admitted`: the rate-limit token
    that an attempt on the event loop already spent for this request; `arrived`: when the request
    came in (`time.monotonic()`)."""
    headers: dict[str, str] = {}
    try:
        if not op.auth:
            query = _query(op, request)
            call = Call(actor=None, path=dict(request.path_params), query=query, body=None)  # type: ignore[arg-type]
            if op.transaction == "none":  # health: it checks storage itself and must answer when it is down
                return _to_response(op, op.handler(call), headers)
            with transaction(op.transaction):
                return _to_response(op, op.handler(call), headers)
        actor = authenticate_api_key(_authorization(request), arrived=arrived)
        log_context.workspace_id.set(actor.workspace_id)
        if request.client is not None:  # for the audit log
            actor = actor.at(request.client.host)
        quota = admitted or ratelimit.hit(actor.credential_id, limit=rate_limit)
        headers.update(quota.headers())
        query = _query(op, request)
        # The Content-Type is looked up only for an operation that reads a body: building the
        # request's `Headers` costs a GET more than its rate-limit check.
        takes_body = op.body is not None or op.raw_body is not None
        body = parse_json_body(op, request.headers.get("content-type"), raw) if takes_body else None
        call = Call(actor=actor, path=dict(request.path_params), query=query, body=body, arrived=arrived)
        key = request.headers.get("idempotency-key") if op.method == "POST" else None
        if key is None:
            # A handler of "read" or "write" calls no one (DESIGN rule 15): a deadlock's victim on
            # PostgreSQL wrote nothing and runs again rather than answering 500.
            return in_transaction(op.transaction, lambda: _to_response(op, op.handler(call), headers))
        return _idempotent(op, call, request, raw, key, headers)
    except ServiceError as error:
        return error_response(error, headers)


def _idempotent(op: Operation, call: Call, request: Request, raw: bytes, key: str,
                headers: dict[str, str]) -> Response:
    """Run a POST under its `Idempotency-Key`: reserved first, in a committed transaction of its own,
    so a concurrent or later request with the key never runs the operation a second time."""
    idempotency.check_key(key)
    fingerprint = idempotency.request_fingerprint(op.method, request.url.path, raw)
    with db.atomic():
        reserved = idempotency.reserve(call.actor.credential_id, key, fingerprint)
    if isinstance(reserved, idempotency.Replay):
        return json_response(reserved.status, reserved.body, {**headers, "Idempotent-Replayed": "true"})
    bound = idempotency.bind(reserved)
    try:
        if op.transaction == "own":
            # The operation commits as it goes: it ties what it makes to the key itself (`attach`),
            # and a retry after its death resumes from that instead of making it again.
            if reserved.resource_id is not None and op.resume is not None:
                result = op.resume(call, reserved.resource_id)
            else:
                result = op.handler(call)
            response = _to_response(op, result, headers)
            with db.atomic():
                idempotency.complete(reserved, response.status_code, json.loads(bytes(response.body)))
            return response
        with transaction(op.transaction):
            response = _to_response(op, op.handler(call), headers)
            idempotency.complete(reserved, response.status_code, json.loads(bytes(response.body)))
        return response
    except ServiceError as error:
        with db.atomic():
            idempotency.finish_failed(reserved, error.status, error.body())
        raise
    except BaseException:
        with db.atomic():  # an unexpected fault: free the key unless something was made (a retry finds it)
            idempotency.finish_failed(reserved, 500, {"error": {"code": "internal_error",
                                                                "message": "An unexpected error occurred."}})
        raise
    finally:
        idempotency.unbind(bound)


def _query(op: Operation, request: Request) -> Any:
    if op.query is None:
        return None
    # The contract ignores unknown query parameters; the model forbids them (for MCP tools' arguments).
    names = shapes.aliases(op.query)
    return shapes.parse(op.query, {k: v for k, v in request.query_params.items() if k in names})


def _to_response(op: Operation, result: Any, headers: dict[str, str]) -> Response:
    if isinstance(result, Response):  # a redirect, for browser flows
        result.headers.update(headers)
        return result
    if isinstance(result, Reply):
        return json_response(result.status, result.body, {**headers, **result.headers})
    return json_response(op.success_status, result, headers)


class Endpoint:
    """The ASGI app of one /v1 path, dispatching on the method.

    An ASGI app rather than a Starlette request function: the wrapper Starlette puts around those
    (one more layer of exception handling and one more `send` wrapper per message) has nothing to
    do here, since every failure a caller can cause is answered below and any other fault reaches
    `RequestContext`, which also calls `handle` itself for fixed paths.
    """

    def __init__(self, operations: dict[str, Operation], *, rate_limit: int) -> None:
        self.operations = operations
        self.rate_limit = rate_limit  # requests a minute a key may make (the app's settings)
        self.methods = frozenset(operations) | ({"HEAD"} if "GET" in operations else set())

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        response = await self.handle(Request(scope, receive, send))
        await response(scope, receive, send)

    async def handle(self, request: Request) -> Response:
        arrived = time.monotonic()
        op = self.operations[request.method if request.method != "HEAD" else "GET"]
        if any("\x00" in value for value in request.path_params.values()):
            return error_response(NotFound("No such path."))  # no id holds NUL (nor could PostgreSQL keep one)
        if op.stream is not None:
            return await op.stream(request)  # type: ignore[no-any-return]
        try:
            # Read (up to the limit) whenever a body came, also where the operation takes none: an
            # oversized body is a 413 before any key is checked or any rate counted.
            raw = await read_body(request) if op.body is not None or _carries_body(request) else b""
        except ServiceError as error:
            return error_response(error)
        if op.body is None and op.raw_body is None:
            raw = b""
        spent: list[ratelimit.Quota] = []
        rate_limit = self.rate_limit

        def work(on_loop: bool) -> Response:
            if on_loop:
                return _read_on_loop(op, request, spent, arrived, rate_limit)
            return _execute(op, request, raw, spent[0] if spent else None, arrived, rate_limit=rate_limit)

        # The operation's own transactions are opened in `_execute`: the key is checked and the
        # request counted before, and an idempotent POST commits its key apart.
        bucket = outbound_bucket(request.headers.get("authorization")) if op.waits else None
        try:
            return await requests.run(work, transaction="none", waits=op.waits, bucket=bucket,
                                      on_loop=op.transaction == "read" and op.auth,
                                      connect=op.auth or op.transaction != "none")
        except ServiceError as error:  # the workspace's share of the outbound pool stayed taken (429)
            return error_response(error)
