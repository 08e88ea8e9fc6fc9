"""X requests and answers against X's API v2 OpenAPI document itself (`published/x/openapi.json`, from the
`xdevplatform/xdk` repository's `specs/openapi.json`; `published/x/SOURCE` names the commit and the
document's own `info.version`), validated as JSON Schema: each operation's path, query and body
schemas with their required fields, bounds, patterns, enums and strict types, the `Authorization`
its security schemes take, and each answer against the response schema of its status."""

from __future__ import annotations

import functools
import json
import re
from dataclasses import replace
from pathlib import Path
from typing import Any

from openapi_schema_validator import OAS30ReadValidator, OAS30WriteValidator

from tests.support.platform_specs import Seen
from tests.support.platform_specs.openapi import Document

DATA = Path(__file__).parent / "published" / "x"
# The OAuth 2.0 token endpoint is X's, but outside the API v2 document; X documents it on
# https://docs.x.com/fundamentals/authentication/oauth-2-0/user-access-token.
OUTSIDE = ("/2/oauth2/token",)
# Cursor parameters of paginated operations: X's reference names `pagination_token`, and the
# responses' `meta.next_token` is what is sent back in it.
PAGING = {"pagination_token"}
# The document names the Post fields parameter `post.fields`; X's reference and its servers take
# `tweet.fields` (https://docs.x.com/x-api/fundamentals/fields): read as the document's name.
WIRE_NAMES = {"tweet.fields": "post.fields"}
BEARER = re.compile(r"Bearer [A-Za-z0-9._~+/=-]+")
OAUTH1 = re.compile(r"OAuth .+")


def _problem_types(schemas: dict[str, Any]) -> None:
    """X answers HTTP-level refusals (401, 429, 500) with RFC 7807's generic `about:blank` problem
    (https://docs.x.com/x-api/fundamentals/response-codes-and-errors), which the document's
    discriminator does not know: it is mapped to the base fields of a Problem, `type` and `title`
    required."""
    schemas["GenericProblem"] = {"type": "object", "required": ["type", "title"], "properties": {
        "type": {"type": "string"}, "title": {"type": "string"}, "detail": {"type": "string"},
        "status": {"type": "integer"}}}
    problem = schemas["Problem"]
    mapping = problem["discriminator"]["mapping"]
    mapping["about:blank"] = "#/components/schemas/GenericProblem"
    problem["oneOf"].append({"$ref": "#/components/schemas/GenericProblem"})


ERRATA = [_problem_types]


@functools.cache
def document() -> Document:
    raw = json.loads((DATA / "openapi.json").read_text())
    for correction in ERRATA:
        correction(raw["components"]["schemas"])
    return Document(raw, name=f"X's API v2 ({version()})",
                    request_validator=OAS30WriteValidator, response_validator=OAS30ReadValidator)


@functools.cache
def version() -> str:
    info = json.loads((DATA / "openapi.json").read_text())["info"]
    return f"OpenAPI {info['title']} {info['version']}"


def _authorization(seen: Seen) -> list[str]:
    found = document().match(seen.method, seen.path)
    if found is None:
        return []
    operation = found[0]
    schemes = {name for requirement in operation.security for name in requirement}
    header = seen.header("authorization") or ""
    takes_bearer = bool(schemes & {"OAuth2UserToken", "BearerToken"})
    if takes_bearer and BEARER.fullmatch(header):
        return []
    if "UserToken" in schemes and OAUTH1.fullmatch(header):
        return []
    if not schemes:
        return []
    wanted = " or ".join(sorted(schemes))
    return [f"{operation.id}: header Authorization must carry {wanted} ('Bearer <token>'"
            + (" or 'OAuth ...'" if "UserToken" in schemes else "") + ")"]


def _token_request(seen: Seen) -> list[str]:
    """A confidential client authenticates with HTTP Basic, a public one names its `client_id`."""
    if (seen.header("authorization") or "").startswith("Basic ") or "client_id" in seen.form():
        return []
    return ["POST /2/oauth2/token: no client authentication (HTTP Basic or client_id)"]


def check(seen: Seen) -> list[str]:
    if seen.path in OUTSIDE:
        return _token_request(seen)
    doc = document()
    if WIRE_NAMES.keys() & seen.query.keys():
        seen = replace(seen, query={WIRE_NAMES.get(key, key): value for key, value in seen.query.items()})
    problems = doc.check_request(seen, ignore_query=lambda key: key in PAGING)
    if problems and problems[0].endswith(f"no such operation in {doc.name}"):
        return problems
    return problems + _authorization(seen) + doc.check_answer(seen)
