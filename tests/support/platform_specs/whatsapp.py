"""WhatsApp Cloud API requests and answers against Meta's Business Messaging API OpenAPI document
(`published/whatsapp/business-messaging-api_v23.0.yaml`, from the `facebook/openapi` repository, MIT;
`published/whatsapp/SOURCE` names the commit): `/messages` bodies (each message type's schema, templates'
`language` object and components), the phone numbers and templates reads, the `Authorization: Bearer`
header the document requires, and each answer against its response schema.

Where the document contradicts Meta's own reference pages, the reference wins and the correction is
listed in `ERRATA`, each with its page. Token endpoints (`debug_token`, `oauth/access_token`) and the
app's webhook subscription (`subscribed_apps`) lie outside this document: they go to the Graph check."""

from __future__ import annotations

import functools
import hashlib
import json
import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml
from openapi_schema_validator import OAS31Validator

from tests.support.platform_specs import Seen
from tests.support.platform_specs.openapi import Document

DATA = Path(__file__).parent / "published" / "whatsapp"
FILE = DATA / "business-messaging-api_v23.0.yaml"


def _strict_all_of(node: Any) -> None:
    """`additionalProperties: false` inside one branch of an `allOf` refuses the other branches'
    properties too (JSON Schema reads each branch alone), so no message body could pass: the
    document means "no property the branches do not name", which 2020-12 writes
    `unevaluatedProperties: false` on the `allOf` itself."""
    if isinstance(node, dict):
        branches = node.get("allOf")
        if isinstance(branches, list) and any(isinstance(b, dict) and b.get("additionalProperties") is False
                                              for b in branches):
            for branch in branches:
                if isinstance(branch, dict) and branch.get("additionalProperties") is False:
                    del branch["additionalProperties"]
            node["unevaluatedProperties"] = False
        for value in node.values():
            _strict_all_of(value)
    elif isinstance(node, list):
        for value in node:
            _strict_all_of(value)


def _cta_url(schemas: dict[str, Any]) -> None:
    """Interactive call-to-action URL buttons (`type: cta_url`, an action `name: cta_url` with
    `parameters.display_text` and `url`):
    https://developers.facebook.com/docs/whatsapp/cloud-api/messages/interactive-cta-url-messages"""
    interactive = schemas["InteractiveObject"]["properties"]["type"]
    interactive["enum"] = [*interactive["enum"], "cta_url"]
    schemas["ActionObject"] = {"anyOf": [schemas["ActionObject"], {
        "type": "object", "additionalProperties": False, "required": ["name", "parameters"],
        "properties": {"name": {"type": "string", "enum": ["cta_url"]}, "parameters": {
            "type": "object", "additionalProperties": False, "required": ["display_text", "url"],
            "properties": {"display_text": {"type": "string", "minLength": 1, "maxLength": 20},
                           "url": {"type": "string", "pattern": "^https?://"}}}}}]}


def _language_policy(schemas: dict[str, Any]) -> None:
    """A template's `language` is an object whose `code` is required; `policy` (only
    `deterministic`) may be left out: https://developers.facebook.com/docs/whatsapp/cloud-api/reference/messages#language-object"""
    schemas["LanguageObject"]["required"] = ["code"]


# Parameters every Graph request may carry (https://developers.facebook.com/docs/graph-api/results,
# https://developers.facebook.com/docs/graph-api/securing-requests), which the document's
# operations leave out.
COMMON = frozenset({"appsecret_proof", "access_token", "fields", "limit", "after", "before"})

def _button_index(schemas: dict[str, Any]) -> None:
    """A template button's `index` is its position, 0 to 9 (the document's pattern `^[2-6, 11-14]$`
    is a character class, not the ranges it meant):
    https://developers.facebook.com/docs/whatsapp/cloud-api/reference/messages#button-parameter-object"""

    def fix(node: Any) -> None:
        if isinstance(node, dict):
            if node.get("pattern") == "^[2-6, 11-14]$":
                node["pattern"] = "^[0-9]$"
            for value in node.values():
                fix(value)
        elif isinstance(node, list):
            for value in node:
                fix(value)

    fix(schemas)


def _phone_number_status(schemas: dict[str, Any]) -> None:
    """A registered phone number's `status` is `CONNECTED`, which the document's enum lacks (it has
    `LINKED`, `UNLINKED`, ...). Meta's phone number node answers CONNECTED once a number is
    registered, as the business solution providers' references relaying it say: "After registration,
    the phone number's status should change from PENDING to CONNECTED"
    (https://docs.ycloud.com/v2.0.1/reference/whatsapp_phone_number-register)."""
    schemas["WhatsAppPhoneNumberStatus"]["enum"].append("CONNECTED")


# A node read `/{Version}/{id}` matches every node's template alike (a business, a phone number, a
# template, ...): it is checked as the node the adapter reads, the phone number.
NODES_READ = ("getPhoneNumberById",)

ERRATA: list[Callable[[dict[str, Any]], None]] = [_cta_url, _language_policy, _button_index, _phone_number_status]


@functools.cache
def document() -> Document:
    raw = _parsed(FILE)
    _strict_all_of(raw)
    for correction in ERRATA:
        correction(raw["components"]["schemas"])
    return Document(raw, name=f"WhatsApp Business Messaging API ({version()})",
                    request_validator=OAS31Validator, response_validator=OAS31Validator)


def _parsed(path: Path) -> Any:
    """The YAML document, read once per machine: its JSON form is kept by its digest in the
    temporary directory (parsing 1 MB of YAML takes a second or more, JSON a few ms)."""
    text = path.read_bytes()
    cached = Path(tempfile.gettempdir()) / f"switchboard-specs-{hashlib.sha256(text).hexdigest()[:16]}.json"
    try:
        return json.loads(cached.read_text())
    except (OSError, ValueError):
        value = yaml.load(text, Loader=yaml.CSafeLoader)
        partial = cached.with_suffix(f".{os.getpid()}.tmp")
        partial.write_text(json.dumps(value))
        partial.replace(cached)  # whole or absent, whichever worker wrote it
        return value


def version() -> str:
    return f"facebook/openapi {FILE.name}"


def check(seen: Seen) -> list[str]:
    from tests.support.platform_specs import graph

    if graph.OUTSIDE.match(seen.path) or seen.path.endswith("/subscribed_apps"):
        return graph.check(seen)
    doc = document()
    # Graph's common parameters (https://developers.facebook.com/docs/graph-api/securing-requests):
    # the proof of the app secret rides on every call of an app that requires it.
    problems = doc.check_request(seen, ignore_query=lambda key: key in COMMON, prefer=NODES_READ)
    if problems and problems[0].endswith(f"no such operation in {doc.name}"):
        return problems
    return problems + doc.check_answer(seen, prefer=NODES_READ,
                                       error_schema={"$ref": "#/components/schemas/GraphAPIError"})
