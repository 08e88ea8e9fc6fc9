"""Descriptions written by hand for platforms that publish no machine-readable one (TikTok, LinkedIn):
each endpoint's query, body, headers and answer as JSON Schema (draft 2020-12), every property
carrying the page it was read from in `$comment`. `check()` matches a request to its endpoint and
validates it, strictly (no property the page does not list, types without coercion)."""

from __future__ import annotations

import functools
import json
import re
from dataclasses import dataclass, field
from typing import Any

from jsonschema import Draft202012Validator

from tests.support.platform_specs import Seen
from tests.support.platform_specs.openapi import shorten


@dataclass(frozen=True)
class Endpoint:
    name: str
    method: str
    path: str  # a regular expression matched against the whole path
    page: str
    query: dict[str, Any] | None = None  # schema of the query parameters (values as text), None: no query
    body: dict[str, Any] | None = None  # schema of the JSON (or form) body, None: no body
    form: bool = False  # the body is application/x-www-form-urlencoded
    binary: bool = False  # the body is a file's bytes (its headers say what they are)
    headers: dict[str, str] = field(default_factory=dict)  # header (lower case) → regular expression
    answer: dict[str, Any] | None = None  # schema of a successful JSON answer


def text(page: str, **extra: Any) -> dict[str, Any]:
    return {"type": "string", "$comment": page, **extra}


def obj(page: str, properties: dict[str, Any], required: tuple[str, ...] = (), **extra: Any) -> dict[str, Any]:
    return {"type": "object", "$comment": page, "properties": properties, "required": list(required),
            "additionalProperties": False, **extra}


@functools.cache
def _validator(key: str) -> Draft202012Validator:
    return Draft202012Validator(json.loads(key))


def errors(schema: dict[str, Any], value: Any, where: str) -> list[str]:
    validator = _validator(json.dumps(schema, sort_keys=True))
    found = []
    for error in sorted(validator.iter_errors(value), key=lambda e: list(e.absolute_path)):
        at = where + "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in error.absolute_path)
        found.append(f"{at}: {shorten(error.message)}")
    return found


def check(seen: Seen, endpoints: list[Endpoint], platform: str) -> list[str]:
    endpoint = next((e for e in endpoints if e.method == seen.method and re.fullmatch(e.path, seen.path)), None)
    if endpoint is None:
        return [f"{seen.method} {seen.path}: no such endpoint in the {platform} reference pages"]
    name = endpoint.name
    problems = []
    for header, pattern in endpoint.headers.items():
        given = seen.header(header)
        if given is None or not re.fullmatch(pattern, given):
            problems.append(f"{name}: header {header} must match {pattern!r} ({endpoint.page})")
    if endpoint.query is None:
        problems += [f"{name}: unknown query parameter {key!r}" for key in seen.query]
    else:
        problems += [f"{name}: {p}" for p in errors(endpoint.query, dict(seen.query), "query")]
    if endpoint.body is None:
        if seen.body:
            problems.append(f"{name}: takes no body ({endpoint.page})")
    elif endpoint.binary:
        if not seen.body:
            problems.append(f"{name}: the bytes are missing ({endpoint.page})")
    elif endpoint.form:
        if "x-www-form-urlencoded" not in seen.content_type:
            problems.append(f"{name}: the body must be application/x-www-form-urlencoded ({endpoint.page})")
        problems += [f"{name}: {p}" for p in errors(endpoint.body, seen.form(), "body")]
    else:
        try:
            value: Any = json.loads(seen.body) if seen.body else {}
        except ValueError:
            return [*problems, f"{name}: the body is not JSON"]
        problems += [f"{name}: {p}" for p in errors(endpoint.body, value, "body")]
    answer = seen.answer
    if endpoint.answer is not None and answer is not None and answer.status < 300 and "json" in answer.content_type:
        try:
            problems += [f"{name}: {p}" for p in errors(endpoint.answer, json.loads(answer.body),
                                                         f"answer {answer.status}")]
        except ValueError:
            problems.append(f"{name}: answer {answer.status} is not JSON")
    return problems
