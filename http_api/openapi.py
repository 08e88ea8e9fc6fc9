"""The OpenAPI 3.1 document, generated from the same declarations that validate requests."""

from __future__ import annotations

import re
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


# -- named schemas -----------------------------------------------------------------------------
# A shape declared with a name (`record("Account", ...)`, `Obj(name=...)`) carries it as its JSON
# Schema `title`; here each one moves to `components/schemas` and every use becomes a `$ref`, so
# generated clients get real type names. Two different shapes under one name get `Name2`, ...


def _hoist(schema: Any, components: dict[str, Any]) -> Any:
    if isinstance(schema, list):
        return [_hoist(item, components) for item in schema]
    if not isinstance(schema, dict):
        return schema
    out = {key: _hoist(value, components) for key, value in schema.items()}
    name = out.get("title")
    if not isinstance(name, str) or "properties" not in out:
        return out
    nullable = isinstance(out.get("type"), list) and "null" in out["type"]
    description = out.pop("description", None)
    component = {**out, "type": "object"}
    key, number = name, 1
    while key in components and components[key] != component:
        number += 1
        key = f"{name}{number}"
    components[key] = component
    ref: dict[str, Any] = {"$ref": f"#/components/schemas/{key}"}
    if nullable:
        ref = {"anyOf": [ref, {"type": "null"}]}
    if description:
        ref["description"] = description
    return ref


# -- examples ----------------------------------------------------------------------------------
# One example per operation's body and success answer, made from the schema: ids with the prefix
# their field implies, instants in the contract's form, an enum's first value.

ID_PREFIXES = {
    "workspace": "ws", "profile": "prf", "account": "acc", "conversation": "conv", "message": "msg",
    "broadcast": "bc", "sequence": "seq", "post": "post", "media": "med", "webhook": "wh", "event": "evt",
    "delivery": "whd", "key": "key", "user": "usr", "enrollment": "enr",
}
SAMPLE_TEXT = {
    "text": "Hello from Switchboard",
    "name": "Spring launch",
    "url": "https://hooks.example.com/switchboard",
    "platform": "telegram",
    "username": "sandbox_bot",
    "events": "message.received",
    "event": "message.received",
    "prefix": "sk_00000000",
    "key": "sk_" + "0" * 64,
    "secret": "whsec_" + "A" * 43 + "=",
    "botToken": "7000000001:AA" + "ExampleBotToken" * 2,
}


def _sample_string(name: str, schema: dict[str, Any], owner: str) -> str:
    if schema.get("enum"):
        return str(schema["enum"][0])
    if schema.get("format") == "date-time":
        return "2026-11-21T09:30:00Z"
    if schema.get("format") == "date":
        return "2026-11-21"
    if name in SAMPLE_TEXT:
        return SAMPLE_TEXT[name]
    stem = name.removesuffix("s")[:-2] if name.endswith(("Id", "Ids")) else (owner if name == "id" else "")
    words = [stem, *reversed(re.findall(r"[A-Z]?[a-z]+", stem))]  # WebhookDelivery: delivery; ApiKeyCreated: key
    prefix = next((ID_PREFIXES[w.lower()] for w in words if w.lower() in ID_PREFIXES), None)
    if prefix:
        return f"{prefix}_2Yx8kQ4mN7pR1sT5"
    if schema.get("format") == "uri":
        return "https://example.com/path"
    return name or "string"


def _example(schema: Any, components: dict[str, Any], name: str = "", owner: str = "", depth: int = 0) -> Any:
    if not isinstance(schema, dict) or depth > 24:  # shapes nest a few levels; never recursive
        return None
    if "$ref" in schema:
        key = schema["$ref"].rsplit("/", 1)[1]
        return _example(components[key], components, name, key.removesuffix("Page"), depth + 1)
    if "anyOf" in schema:
        return _example(schema["anyOf"][0], components, name, owner, depth + 1)
    kind = schema.get("type")
    if isinstance(kind, list) and "null" in kind and depth > 0 and name not in SAMPLE_TEXT:
        return None  # an optional value: shown empty, as most records have it
    kind = next((k for k in kind if k != "null"), None) if isinstance(kind, list) else kind
    if kind == "object" or "properties" in schema:
        props = schema.get("properties", {})
        wanted = schema.get("required") or list(props)
        return {key: _example(props[key], components, key, owner, depth + 1) for key in wanted if key in props}
    if kind == "array":
        item = _example(schema.get("items", {}), components, name, owner, depth + 1)
        return [] if item is None else [item]
    if kind == "integer":
        return int(schema.get("minimum", 1) or 1)
    if kind == "number":
        return 1.0
    if kind == "boolean":
        return not name.startswith("needs")
    if kind == "string":
        return _sample_string(name, schema, owner)
    return None


def _with_examples(operation: dict[str, Any], components: dict[str, Any]) -> None:
    contents = [operation.get("requestBody", {}).get("content", {}).get("application/json")]
    contents += [response.get("content", {}).get("application/json")
                 for status, response in operation["responses"].items() if status.startswith("2")]
    for content in contents:
        if content and "schema" in content:
            example = _example(content["schema"], components)
            if example is not None:
                content["example"] = example


def build(operations: list[Operation], *, base_url: str) -> dict[str, Any]:
    paths: dict[str, dict[str, Any]] = {}
    components: dict[str, Any] = {"Error": ERROR_SCHEMA}
    for op in operations:
        operation = _hoist(_operation(op), components)
        _with_examples(operation, components)
        paths.setdefault("/v1" + op.path, {})[op.method.lower()] = operation
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
            "schemas": dict(sorted(components.items())),
        },
    }
