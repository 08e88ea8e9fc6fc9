"""A request and its answer checked against an OpenAPI document, read as JSON Schema: the operation
at that path and HTTP method; its path, query and header parameters (known, required ones present,
each value of its schema: type, bounds, pattern, enum); its request body against the body schema
(required properties, types without coercion, bounds, patterns, enums, `readOnly` properties refused);
its answer against the response schema of its status. Validators are built once per operation.

Query, path and header values travel as text: each is read the way OpenAPI's `form`/`simple` styles
write it (an integer's digits, `true`/`false`, an array's comma-separated items) and what does not
read so stays text, which the schema then refuses. JSON bodies are validated as sent."""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from jsonschema.exceptions import ValidationError
from jsonschema.protocols import Validator

from tests.support.platform_specs import FILE, Seen

INTEGER = re.compile(r"-?\d+")
NUMBER = re.compile(r"-?\d+(\.\d+)?([eE][-+]?\d+)?")


@dataclass
class Operation:
    id: str
    method: str
    template: str
    pattern: re.Pattern[str]
    parameters: dict[tuple[str, str], dict[str, Any]] = field(default_factory=dict)  # (in, name) → parameter
    body: dict[str, Any] | None = None  # media type → schema
    body_required: bool = False
    responses: dict[str, Any] = field(default_factory=dict)
    security: list[dict[str, Any]] = field(default_factory=list)
    path_names: list[str] = field(default_factory=list)


class Document:
    """One OpenAPI document's operations, each matched by method and path, with its validators."""

    def __init__(self, document: dict[str, Any], *, name: str, request_validator: type[Validator],
                 response_validator: type[Validator], prefix: str = "") -> None:
        self.document = document
        self.name = name
        self.request_validator = request_validator
        self.response_validator = response_validator
        self.operations: list[Operation] = []
        for template, item in document["paths"].items():
            shared = item.get("parameters") or []
            for method, spec in item.items():
                if method not in ("get", "post", "put", "patch", "delete"):
                    continue
                pattern = re.compile("^" + re.sub(r"\\\{[^}]+\\\}", "([^/]+)", re.escape(prefix + template)) + "$")
                names = re.findall(r"\{([^}]+)\}", template)
                operation = Operation(spec.get("operationId") or f"{method.upper()} {template}", method.upper(),
                                      template, pattern)
                operation.path_names = names
                for parameter in [*shared, *(spec.get("parameters") or [])]:
                    parameter = self.resolve(parameter)
                    operation.parameters[(parameter["in"], parameter["name"])] = parameter
                body = spec.get("requestBody")
                if body:
                    body = self.resolve(body)
                    operation.body = {kind: media.get("schema") or {} for kind, media in body["content"].items()}
                    operation.body_required = bool(body.get("required"))
                operation.responses = spec.get("responses") or {}
                operation.security = spec.get("security", document.get("security")) or []
                self.operations.append(operation)
        # A literal path before a template (`/2/media/upload` before `/2/media/{media_key}`).
        self.operations.sort(key=lambda op: op.template.count("{"))

    def resolve(self, item: dict[str, Any]) -> dict[str, Any]:
        while "$ref" in item:
            node: Any = self.document
            for part in item["$ref"].removeprefix("#/").split("/"):
                node = node[part.replace("~1", "/").replace("~0", "~")]
            item = node
        return item

    def match(self, method: str, path: str, prefer: tuple[str, ...] = ()) -> tuple[Operation, dict[str, str]] | None:
        """The operation at that path, a literal one before a template; among templates that match
        alike (`/{Version}/{Phone-Number-ID}` and `/{Version}/{WABA-ID}`), the first of `prefer`."""
        ordered = sorted(self.operations, key=lambda op: op.id not in prefer) if prefer else self.operations
        for operation in ordered:
            if operation.method != method:
                continue
            found = operation.pattern.match(path)
            if found:
                return operation, dict(zip(operation.path_names, found.groups(), strict=True))
        return None

    @functools.cache
    def _validator(self, kind: str, key: str) -> Validator:
        schema = json.loads(key)
        cls = self.request_validator if kind == "request" else self.response_validator
        # The schema as the root of a resource that also holds the document's components, so
        # that its `#/components/...` references resolve.
        return cls({**schema, "components": self.document.get("components", {})})

    def errors(self, kind: str, schema: dict[str, Any], value: Any, where: str) -> list[str]:
        validator = self._validator(kind, json.dumps(schema, sort_keys=True))
        return [_describe(error, where) for error in _leaves(validator.iter_errors(value))]

    # -- requests ----------------------------------------------------------------------------------
    def check_request(self, seen: Seen, *, ignore_query: Callable[[str], bool] = lambda key: False,
                      path: str | None = None, prefer: tuple[str, ...] = ()) -> list[str]:
        found = self.match(seen.method, path if path is not None else seen.path, prefer)
        if found is None:
            return [f"{seen.method} {seen.path}: no such operation in {self.name}"]
        operation, path_values = found
        name = operation.id
        problems: list[str] = []
        for key, value in path_values.items():
            spec = operation.parameters.get(("path", key))
            if spec and "schema" in spec:
                problems += [f"{name}: {p}" for p in self.errors(
                    "request", spec["schema"], _read_text(spec["schema"], value, self), f"path {key}")]
        for key, value in seen.query.items():
            spec = operation.parameters.get(("query", key))
            if spec is None:
                if not ignore_query(key):
                    problems.append(f"{name}: unknown query parameter {key!r}")
                continue
            problems += [f"{name}: {p}" for p in self.errors(
                "request", spec.get("schema") or {}, _read_text(spec.get("schema") or {}, value, self), f"query {key}")]
        for (where, key), spec in operation.parameters.items():
            if not spec.get("required"):
                continue
            if where == "query" and key not in seen.query:
                problems.append(f"{name}: required query parameter {key!r} missing")
            if where == "header" and seen.header(key) is None and key.lower() != "content-type":
                problems.append(f"{name}: required header {key!r} missing")
            if where == "header" and seen.header(key) is not None and "schema" in spec and key.lower() != "content-type":
                problems += [f"{name}: {p}" for p in self.errors("request", spec["schema"], seen.header(key),
                                                                 f"header {key}")]
        problems += [f"{name}: {p}" for p in self._body(seen, operation)]
        return problems

    def _body(self, seen: Seen, operation: Operation) -> list[str]:
        if operation.body is None:
            return ["takes no body"] if seen.body else []
        if not seen.body:
            return ["a body is required"] if operation.body_required else []
        media = seen.content_type.split(";", 1)[0].strip().lower()
        if media not in operation.body:
            return [f"body of type {media!r}, where the operation takes {sorted(operation.body)}"]
        schema = operation.body[media]
        if media.endswith("json"):
            try:
                value = json.loads(seen.body)
            except ValueError:
                return ["the body is not JSON"]
        else:
            value = {key: (_FILE_TEXT if item is FILE else _read_text(_property(self, schema, key), item, self))
                     for key, item in seen.form().items()}
        return self.errors("request", schema, value, "body")

    # -- answers -----------------------------------------------------------------------------------
    def check_answer(self, seen: Seen, *, path: str | None = None, prefer: tuple[str, ...] = (),
                     error_schema: dict[str, Any] | None = None) -> list[str]:
        """The answer against the response schema of its status; a failure the operation does not
        describe, against `error_schema` (the platform's one error shape) when given."""
        answer = seen.answer
        found = self.match(seen.method, path if path is not None else seen.path, prefer)
        if answer is None or found is None or "json" not in answer.content_type:
            return []
        operation = found[0]
        status = str(answer.status)
        response = (operation.responses.get(status) or operation.responses.get(f"{status[0]}XX")
                    or operation.responses.get("default"))
        if response is None and error_schema is not None and answer.status >= 400:
            response = {"content": {"application/json": {"schema": error_schema}}}
        if response is None:
            return ([] if not operation.responses else
                    [f"{operation.id}: answered {status}, which the operation does not describe"])
        content = (self.resolve(response).get("content") or {})
        media_type = answer.content_type.split(";", 1)[0].strip().lower()
        schema = (content.get(media_type) or {}).get("schema") or next(
            (media.get("schema") for kind, media in content.items() if "json" in kind), None)
        if schema is None:
            return []
        try:
            value = json.loads(answer.body)
        except ValueError:
            return [f"{operation.id}: answer {status} is not JSON"]
        return [f"{operation.id}: {p}" for p in self.errors("response", schema, value, f"answer {status}")]


_FILE_TEXT = "<file>"


def _property(document: Document, schema: dict[str, Any], key: str) -> dict[str, Any]:
    schema = document.resolve(schema)
    return document.resolve((schema.get("properties") or {}).get(key) or {})


def _read_text(schema: dict[str, Any], value: str, document: Document) -> Any:
    """A text value (query, path, header, form field) as its schema's type reads it, or the text."""
    schema = document.resolve(schema)
    kind = schema.get("type")
    if kind is None and ("oneOf" in schema or "anyOf" in schema):
        options = [document.resolve(s) for s in schema.get("oneOf") or schema.get("anyOf") or []]
        kind = next((s.get("type") for s in options if s.get("type") not in (None, "string")), None)
        schema = next((s for s in options if s.get("type") == kind), schema)
    if kind == "integer" and INTEGER.fullmatch(value):
        return int(value)
    if kind == "number" and NUMBER.fullmatch(value):
        return float(value) if any(c in value for c in ".eE") else int(value)
    if kind == "boolean" and value in ("true", "false"):
        return value == "true"
    if kind == "array":
        items = schema.get("items") or {}
        return [_read_text(items, item, document) for item in value.split(",")] if value else []
    if kind == "object" and value[:1] == "{":
        try:
            return json.loads(value)
        except ValueError:
            return value
    return value


def _leaves(errors: Any) -> list[ValidationError]:
    """The innermost reasons: of a `oneOf`/`anyOf` that no branch satisfies, the errors of the
    branch that came closest (one whose `type` matched, then the one that went deepest, then the
    fewest errors)."""
    found: list[ValidationError] = []
    for error in errors:
        if error.validator in ("oneOf", "anyOf") and error.context:
            branches: dict[Any, list[ValidationError]] = {}
            for sub in error.context:
                branches.setdefault(sub.relative_schema_path[0] if sub.relative_schema_path else 0, []).append(sub)
            best = min(branches.values(), key=lambda subs: (
                any(s.relative_path and s.relative_path[-1] == "type" for s in subs),
                -max(len(s.relative_path) for s in subs), len(subs)))
            found += _leaves(best)
        else:
            found.append(error)
    return found


def shorten(message: str, limit: int = 300) -> str:
    """A message of a long value, its middle left out (the end says what is wrong)."""
    return message if len(message) <= limit else message[:limit // 2] + " ... " + message[-limit // 2:]


def _describe(error: ValidationError, where: str) -> str:
    at = where + "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in error.absolute_path)
    return f"{at}: {shorten(error.message)}"
