"""The OpenAPI 3.1 document, generated from the same declarations that validate requests."""

from __future__ import annotations

from typing import Any

from http_api.routing import Operation
from service.settings import VERSION

ERROR_SCHEMA = {
    "type": "object",
    "required": ["error"],
    "properties": {
        "error": {
            "type": "object",
            "required": ["code", "message"],
            "properties": {
                "code": {"type": "string"},
                "message": {"type": "string"},
                "details": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "required": ["field", "message"],
                        "properties": {"field": {"type": "string"}, "message": {"type": "string"}},
                    },
                },
            },
        }
    },
}

STATUS_TEXT = {
    400: "The body is not JSON, not a JSON object, holds an unpaired surrogate escape or an integer of "
         "more than 4,300 digits.",
    401: "Key missing, malformed, unknown, expired or revoked.",
    403: "Outside the key's profiles, or a write with a read key.",
    404: "No such resource in the caller's workspace.",
    409: "The resource's state forbids the operation.",
    413: "A body over 1 MiB (answered before the key is checked, without rate-limit headers).",
    415: "The body is not application/json.",
    422: "Fields break a rule; `details` names each field.",
    429: "Over the key's request rate; see Retry-After.",
    502: "The platform refused or failed.",
    503: "A part of the service is down.",
}

RATE_HEADERS = {
    name: {"schema": {"type": "integer"}, "description": text}
    for name, text in (
        ("X-RateLimit-Limit", "Requests allowed a minute for this key."),
        ("X-RateLimit-Remaining", "Requests left in the current minute."),
        ("X-RateLimit-Reset", "Unix time when the minute ends."),
    )
}

DESCRIPTION = """\
Publish and schedule posts and hold direct-message conversations on Instagram, WhatsApp, TikTok,
Telegram, YouTube, X, Facebook, Meta Ads and LinkedIn through one API.

Conventions: JSON bodies with camelCase fields; unknown body fields are rejected (422); unknown
query parameters are ignored. Every answer carries `X-Request-Id` (echoed when the request sent a
well-formed one: 1..128 of `A-Z a-z 0-9 . _ : -`). Authenticated answers carry the `X-RateLimit-*`
headers. Errors are `{"error": {"code", "message", "details"?}}`. A body over 1 MiB is 413 on every
operation, before the key is checked. `OPTIONS` on a path answers 204 with `Allow`; a wrong method
405 with the same `Allow`. `page` and `limit` take ASCII digits only.

`Idempotency-Key` on any POST (1..255 printable characters): the same key with the same body within
24 hours replays the first answer (with `Idempotent-Replayed: true`) and does nothing again; with a
different body, 409. An operation that failed leaves no record, so its key may be retried.
Keys are kept per API key.
"""


def _parameters(op: Operation) -> list[dict[str, Any]]:
    params: list[dict[str, Any]] = []
    for segment in op.path.split("/"):
        if segment.startswith("{") and segment.endswith("}"):
            params.append({"name": segment[1:-1], "in": "path", "required": True, "schema": {"type": "string"}})
    for name, spec in op.query.items():
        params.append({"name": name, "in": "query", "required": name in op.required_query, "schema": spec.schema()})
    if op.method == "POST" and op.auth:
        params.append({
            "name": "Idempotency-Key", "in": "header", "required": False,
            "schema": {"type": "string", "minLength": 1, "maxLength": 255},
            "description": "Replay protection for 24 hours.",
        })
    return params


def _operation(op: Operation) -> dict[str, Any]:
    out: dict[str, Any] = {
        "operationId": op.operation_id,
        "summary": op.summary,
        "tags": [op.tag],
        "parameters": _parameters(op),
        "responses": {},
    }
    if op.description:
        out["description"] = op.description
    if not op.auth:
        out["security"] = []
    if op.body is not None:
        out["requestBody"] = {
            "required": op.body_required,
            "content": {"application/json": {"schema": op.body.schema()}},
        }
    for status, spec in sorted(op.responses.items()):
        if status < 400 or (spec is not None and status == 503):
            response: dict[str, Any] = {"description": "OK" if status < 300 else STATUS_TEXT.get(status, "")}
            if spec is not None:
                response["content"] = {"application/json": {"schema": spec.schema()}}
        else:
            response = {
                "description": STATUS_TEXT.get(status, "Error"),
                "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}},
            }
        if op.auth:
            response["headers"] = RATE_HEADERS
        out["responses"][str(status)] = response
    return out


def build(operations: list[Operation], *, base_url: str) -> dict[str, Any]:
    paths: dict[str, dict[str, Any]] = {}
    for op in operations:
        paths.setdefault("/v1" + op.path, {})[op.method.lower()] = _operation(op)
    return {
        "openapi": "3.1.0",
        "info": {"title": "Switchboard API", "version": VERSION, "description": DESCRIPTION},
        "servers": [{"url": base_url}],
        "security": [{"apiKey": []}],
        "paths": paths,
        "components": {
            "securitySchemes": {
                "apiKey": {"type": "http", "scheme": "bearer", "description": "`sk_` + 64 lowercase hex."}
            },
            "schemas": {"Error": ERROR_SCHEMA},
        },
    }
