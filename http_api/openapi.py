"""The OpenAPI 3.1 document, generated from the same pydantic models that validate requests and
build answers: each model lands in `components/schemas` under its class name (nested ones too) and
every use is a `$ref`, so generated clients get real type names."""

from __future__ import annotations

import re
from typing import Any

from pydantic import BaseModel

from http_api.routing import Operation
from kit import shapes
from kit.settings import VERSION

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


def _add(components: dict[str, Any], name: str, schema: dict[str, Any]) -> None:
    if components.setdefault(name, schema) != schema:
        raise ValueError(f"two different shapes are named {name}: rename one")


def _schema(model: type[BaseModel], components: dict[str, Any], mode: str = "serialization") -> dict[str, Any]:
    """`model` and the models it nests, into `components`; a reference to it. Bodies are described as
    they are read (`validation`), answers as they are written (`serialization`)."""
    schema = shapes.json_schema(model, mode=mode)
    for name, definition in schema.pop("$defs", {}).items():
        _add(components, name, definition)
    _add(components, model.__name__, schema)
    return {"$ref": f"#/components/schemas/{model.__name__}"}


def _query_parameters(model: type[BaseModel]) -> list[dict[str, Any]]:
    schema = shapes.json_schema(model)
    params = []
    for name, prop in schema.get("properties", {}).items():
        # An optional parameter is simply left out of the URL: its schema is the value's, not "or null".
        options = [option for option in prop.get("anyOf", []) if option.get("type") != "null"]
        value = dict(options[0]) if len(options) == 1 else {k: v for k, v in prop.items()
                                                            if k not in {"default", "description"}}
        param: dict[str, Any] = {"name": name, "in": "query", "required": name in schema.get("required", []),
                                 "schema": value}
        if prop.get("description"):
            param["description"] = prop["description"]
        params.append(param)
    return params


def _parameters(op: Operation) -> list[dict[str, Any]]:
    params: list[dict[str, Any]] = []
    for segment in op.path.split("/"):
        if segment.startswith("{") and segment.endswith("}"):
            params.append({"name": segment[1:-1], "in": "path", "required": True, "schema": {"type": "string"}})
    if op.query is not None:
        params += _query_parameters(op.query)
    if op.method == "POST" and op.auth:
        params.append({
            "name": "Idempotency-Key", "in": "header", "required": False,
            "schema": {"type": "string", "minLength": 1, "maxLength": 255},
            "description": "Replay protection for 24 hours.",
        })
    return params


def _operation(op: Operation, components: dict[str, Any]) -> dict[str, Any]:
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
    if op.raw_body is not None:
        out["requestBody"] = {"required": True, "content": {op.raw_body: {"schema": {"type": "string"}}}}
    if op.body is not None:
        out["requestBody"] = {
            "required": op.body_required,
            "content": {"application/json": {"schema": _schema(op.body, components, "validation")}},
        }
    for status, spec in sorted(op.responses.items()):
        if status < 400 or (spec is not None and status == 503):
            response: dict[str, Any] = {"description": "OK" if status < 300 else STATUS_TEXT.get(status, "")}
            if spec is not None:
                response["content"] = {"application/json": {"schema": _schema(spec, components)}}
        else:
            response = {
                "description": STATUS_TEXT.get(status, "Error"),
                "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}},
            }
        if op.auth:
            response["headers"] = RATE_HEADERS
        out["responses"][str(status)] = response
    return out


# -- examples ----------------------------------------------------------------------------------
# One example per operation's body and success answer, made from the schema: ids with the prefix
# their field implies, instants in the contract's form, an enum's first value.

ID_PREFIXES = {
    "workspace": "ws", "profile": "prf", "account": "acc", "conversation": "conv", "message": "msg",
    "broadcast": "bc", "sequence": "seq", "post": "post", "media": "med", "webhook": "wh", "event": "evt",
    "delivery": "whd", "key": "key", "user": "usr", "enrollment": "enr", "automation": "ca",
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
    if schema.get("examples"):  # a shape that names its own example (a template's name and language)
        return str(schema["examples"][0])
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
    if "const" in schema:  # a one-value Literal
        return schema["const"]
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


def build(operations: list[Operation], *, base_url: str, appendix: str = "") -> dict[str, Any]:
    """The OpenAPI document; `appendix` (the sandbox's controls, given by the composition root) ends
    its description."""
    paths: dict[str, dict[str, Any]] = {}
    components: dict[str, Any] = {}
    _schema(shapes.Error, components)
    for op in operations:
        operation = _operation(op, components)
        _with_examples(operation, components)
        paths.setdefault("/v1" + op.path, {})[op.method.lower()] = operation
    return {
        "openapi": "3.1.0",
        "info": {"title": "Switchboard API", "version": VERSION,
                 "description": DESCRIPTION + "\n" + appendix},
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
