"""Graph API requests (Facebook Pages, Instagram, WhatsApp, Meta Ads) against the per-endpoint
parameters of `facebook-business`, Meta's SDK generated from its own API specs: each node type's
edges (`/{id}/{edge}`) with their HTTP method, parameter names and types (its `TypeChecker`). A
request to an edge the SDK describes for the platform's node types must use only that edge's
parameters, with values of their types. Edges it does not describe (WhatsApp's phone-number
`/messages`, Instagram Login's token endpoints) are listed in `UNDESCRIBED` and pass."""

from __future__ import annotations

import functools
import importlib
import json
import re
from typing import Any

from tests.support.platform_specs import FILE, Seen

# The node types each platform's adapter addresses, as facebook-business names them.
NODE_TYPES = {
    "facebook": [("page", "Page"), ("pagepost", "PagePost"), ("post", "Post"), ("comment", "Comment"),
                 ("user", "User"), ("photo", "Photo")],
    "instagram": [("iguserforigonlyapi", "IGUserForIGOnlyAPI"), ("iguser", "IGUser"), ("igmedia", "IGMedia"),
                  ("igcomment", "IGComment")],
    "whatsapp": [("whatsappbusinessaccount", "WhatsAppBusinessAccount")],
    "meta_ads": [("adaccount", "AdAccount"), ("adcreative", "AdCreative"), ("user", "User")],
}
# Parameters every Graph request may carry (https://developers.facebook.com/docs/graph-api/).
COMMON = {"access_token", "appsecret_proof", "fields", "limit", "after", "before", "pretty", "locale",
          "suppress_http_code", "date_format", "summary"}
# Token and login endpoints: Meta documents them on their own pages, outside the SDK's node types.
OUTSIDE = re.compile(r"^/(v\d+\.\d+/)?(oauth/access_token|access_token|refresh_access_token|debug_token|dialog/oauth)$")
VERSIONED = re.compile(r"^/v\d+\.\d+/")


@functools.cache
def _api() -> Any:
    from facebook_business.api import FacebookAdsApi
    from facebook_business.session import FacebookSession

    return FacebookAdsApi(FacebookSession(access_token="spec-check"))


@functools.cache
def edges(module: str, name: str) -> dict[tuple[str, str], Any]:
    """(HTTP method, edge) → the SDK's TypeChecker for one node type, built by asking each of its
    generated methods for its request without sending it (`pending=True`)."""
    cls = getattr(importlib.import_module(f"facebook_business.adobjects.{module}"), name)
    node = cls("0", api=_api())
    found = {}
    for attribute in dir(cls):
        if not attribute.startswith(("create_", "get_", "delete_")):
            continue
        try:
            request = getattr(node, attribute)(pending=True)
        except Exception:  # a method that needs arguments of its own: not one the adapters use
            continue
        if hasattr(request, "_param_checker") and request._endpoint:
            found[(request._method, request._endpoint)] = request._param_checker
    return found


def version() -> str:
    from importlib.metadata import version as installed

    from facebook_business.api import FacebookAdsApi

    return f"facebook-business {installed('facebook-business')} (Graph API {FacebookAdsApi.API_VERSION})"


def _params(seen: Seen) -> dict[str, Any]:
    params: dict[str, Any] = dict(seen.query)
    if "json" in seen.content_type and seen.body:
        body = json.loads(seen.body)
        if isinstance(body, dict):
            params.update(body)
    else:
        params.update({k: ("<file>" if v is FILE else v) for k, v in seen.form().items()})
    return params


def _as_sent(kind: str, value: Any) -> Any:
    """Graph reads a list in a query or form as a JSON array or comma-separated values, and an
    object as JSON text (https://developers.facebook.com/docs/graph-api/reference)."""
    if not isinstance(value, str):
        return value
    if kind.startswith("list") or kind in ("map", "Object") or kind.startswith("map"):
        try:
            return json.loads(value)
        except ValueError:
            return value.split(",") if kind.startswith("list") else value
    return value


def _valid(checker: Any, key: str, value: Any) -> bool:
    """Enum values are read regardless of case: Meta's reference asks for `platform=instagram`
    where the SDK's enum lists `INSTAGRAM`."""
    if checker.is_valid_pair(key, value):
        return True
    return isinstance(value, str) and bool(checker.is_valid_pair(key, value.upper()))


def _problems(checker: Any, params: dict[str, Any]) -> list[str]:
    problems = []
    for key, value in params.items():
        if key in COMMON:
            continue
        if not checker.is_valid_key(key):
            problems.append(f"unknown parameter {key!r}")
        elif not _valid(checker, key, _as_sent(checker.get_type(key), value)):
            problems.append(f"{key}={value!r} is not a {checker.get_type(key)}")
    return problems


def check(seen: Seen) -> list[str]:
    if OUTSIDE.match(seen.path):
        return []
    if not VERSIONED.match(seen.path):
        return [f"{seen.method} {seen.path}: a Graph path starts with its version (/vXX.X/)"]
    segments = seen.path.strip("/").split("/")[1:]
    if len(segments) != 2:  # a node read or delete: fields only
        return []
    edge = segments[1]
    candidates = [(name, checker) for module, name in NODE_TYPES.get(seen.platform, [])
                  for (method, found_edge), checker in edges(module, name).items()
                  if method == seen.method and found_edge == edge]
    if not candidates:
        return [] if (seen.platform, seen.method, edge) in UNDESCRIBED else [
            f"{seen.method} /{{id}}/{edge}: no {seen.platform} node type of {version()} has this edge"]
    params = _params(seen)
    results = [(name, _problems(checker, params)) for name, checker in candidates]
    if any(not problems for _, problems in results):
        return []
    name, problems = min(results, key=lambda r: len(r[1]))
    return [f"{name} {seen.method} /{edge}: {p}" for p in problems]


# Edges the adapters use that facebook-business does not describe for the platform's node types.
UNDESCRIBED = {
    ("whatsapp", "POST", "messages"),  # the phone number's /messages (Cloud API reference)
    ("whatsapp", "GET", "phone_numbers"),
}
