"""Graph API requests (Facebook Pages, Instagram, Meta Ads) against the per-endpoint parameters of
`facebook-business`, Meta's SDK generated from its own API specs: each node type's edges
(`/{id}/{edge}`) with their HTTP method, parameter names and types (`TypeChecker`'s type strings),
enums compared exactly (case-sensitive), nested objects (an `object_story_spec`) against the SDK's
object of that type, field by field; each node type's fields, which a read's `fields` must name
(`GET /{id}?fields=` against the node, `GET /{id}/{edge}?fields=` against the edge's objects).

The SDK does not say which parameters are required, and types some parameters as free text that
Meta's reference pages restrict (Instagram's `media_type`): `RULES` adds what those pages state,
each citing its page. Every Graph path is a node (`/{id}`) or a node's edge (`/{id}/{edge}`) under a
version prefix; any other is refused. A call carries its token as `Authorization: Bearer` or
`access_token`. WhatsApp's calls go to `whatsapp.py` (Meta's OpenAPI document) except the token
and subscription ones below."""

from __future__ import annotations

import functools
import importlib
import importlib.util
import json
import re
from dataclasses import dataclass, field
from typing import Any

from tests.support.platform_specs import FILE, Seen

# The node types each platform's adapter addresses, as facebook-business names them.
NODE_TYPES = {
    "facebook": [("page", "Page"), ("pagepost", "PagePost"), ("post", "Post"), ("comment", "Comment"),
                 ("user", "User"), ("photo", "Photo"), ("advideo", "AdVideo")],
    "instagram": [("iguserforigonlyapi", "IGUserForIGOnlyAPI"), ("iguser", "IGUser"), ("igmedia", "IGMedia"),
                  ("igcomment", "IGComment"), ("shadowigmediabuilder", "ShadowIGMediaBuilder")],  # a container
    "whatsapp": [("whatsappbusinessaccount", "WhatsAppBusinessAccount"), ("application", "Application")],
    "meta_ads": [("adaccount", "AdAccount"), ("adcreative", "AdCreative"), ("user", "User")],
}
# Nodes Meta documents outside the SDK's generated objects, with their fields.
EXTRA_NODES = {
    # An Instagram-scoped user id's profile, read to name who wrote a DM:
    # https://developers.facebook.com/docs/instagram-platform/instagram-api-with-instagram-login/messaging-api/user-profile
    "instagram": {"Instagram user profile": {"id", "name", "username", "profile_pic", "follower_count",
                                             "is_user_follow_business", "is_business_follow_user",
                                             "is_verified_user"}},
}
# Parameters every Graph request may carry (https://developers.facebook.com/docs/graph-api/results,
# https://developers.facebook.com/docs/graph-api/securing-requests).
COMMON = {"access_token", "appsecret_proof", "fields", "limit", "after", "before", "pretty", "locale",
          "suppress_http_code", "date_format", "summary"}
# Token and login endpoints: Meta documents them on their own pages, outside the SDK's node types.
OUTSIDE = re.compile(r"^/(v\d+\.\d+/)?(oauth/access_token|access_token|refresh_access_token|debug_token|dialog/oauth)$")
VERSIONED = re.compile(r"^/v\d+\.\d+/")
BEARER = re.compile(r"Bearer [A-Za-z0-9._~+/=-]+")
IG_MEDIA = "https://developers.facebook.com/docs/instagram-platform/instagram-graph-api/reference/ig-user/media"


@dataclass(frozen=True)
class Rule:
    """What an edge's reference page states beyond the SDK's parameter types."""

    page: str
    required: tuple[str, ...] = ()
    one_of: tuple[str, ...] = ()  # at least one of these
    enums: dict[str, tuple[str, ...]] = field(default_factory=dict)  # exact values
    max_length: dict[str, int] = field(default_factory=dict)


RULES: dict[tuple[str, str, str], Rule] = {
    # Containers: `media_type` is CAROUSEL, REELS or STORIES, or absent for an image; VIDEO was retired
    # for REELS, and remains only for a carousel's video item (`is_carousel_item=true`):
    # https://developers.facebook.com/docs/instagram-platform/content-publishing#carousel-posts
    ("instagram", "POST", "media"): Rule(
        IG_MEDIA, one_of=("image_url", "video_url", "children"),
        enums={"media_type": ("CAROUSEL", "REELS", "STORIES")}, max_length={"caption": 2200, "children": 10}),
    ("instagram", "POST", "media_publish"): Rule(
        "https://developers.facebook.com/docs/instagram-platform/instagram-graph-api/reference/ig-user/media_publish",
        required=("creation_id",)),
    ("instagram", "POST", "messages"): Rule(
        "https://developers.facebook.com/docs/instagram-platform/instagram-api-with-instagram-login/messaging-api",
        required=("recipient", "message"), enums={"messaging_type": ("RESPONSE", "UPDATE", "MESSAGE_TAG")}),
    ("facebook", "POST", "messages"): Rule(
        "https://developers.facebook.com/docs/messenger-platform/reference/send-api/",
        required=("recipient",), one_of=("message", "sender_action"),
        enums={"messaging_type": ("RESPONSE", "UPDATE", "MESSAGE_TAG")}),
    ("facebook", "POST", "feed"): Rule(
        "https://developers.facebook.com/docs/graph-api/reference/page/feed#publish",
        one_of=("message", "link", "attached_media")),
    ("facebook", "POST", "photos"): Rule(
        "https://developers.facebook.com/docs/graph-api/reference/page/photos#publish", one_of=("url", "source")),
    ("facebook", "POST", "videos"): Rule(
        "https://developers.facebook.com/docs/video-api/guides/publishing", one_of=("file_url", "source",
                                                                                    "upload_phase")),
    ("facebook", "POST", "comments"): Rule(
        "https://developers.facebook.com/docs/graph-api/reference/object/comments#publish",
        one_of=("message", "attachment_url", "attachment_id")),
    ("instagram", "POST", "replies"): Rule(
        "https://developers.facebook.com/docs/instagram-platform/instagram-graph-api/reference/ig-comment/replies",
        required=("message",)),
    ("meta_ads", "POST", "adcreatives"): Rule(
        "https://developers.facebook.com/docs/marketing-api/reference/ad-account/adcreatives#Creating",
        one_of=("object_story_spec", "object_story_id", "asset_feed_spec")),
    ("facebook", "POST", "subscribed_apps"): Rule(
        "https://developers.facebook.com/docs/graph-api/reference/page/subscribed_apps#Creating",
        required=("subscribed_fields",)),
    ("instagram", "GET", "insights"): Rule(
        "https://developers.facebook.com/docs/instagram-platform/api-reference/instagram-user/insights",
        required=("metric", "period"), enums={"period": ("day", "week", "days_28", "month", "lifetime")}),
    ("instagram", "POST", "subscribed_apps"): Rule(
        "https://developers.facebook.com/docs/instagram-platform/webhooks#enable-subscriptions",
        required=("subscribed_fields",)),
}


# Values Meta's reference pages spell differently from the SDK's enum, exactly as the pages do.
ENUM_ERRATA = {
    # https://developers.facebook.com/docs/instagram-platform/instagram-api-with-instagram-login/messaging-api/conversations
    # lists a Business Account's conversations with `platform=instagram`.
    ("conversations", "platform"): ("instagram", "messenger"),
    # https://developers.facebook.com/docs/instagram-platform/api-reference/instagram-user/insights lists
    # `follower_count` (period `day`, the last 30 days), which the SDK's metric enum lacks.
    ("insights", "metric"): ("follower_count",),
}


@functools.cache
def _api() -> Any:
    from facebook_business.api import FacebookAdsApi
    from facebook_business.session import FacebookSession

    return FacebookAdsApi(FacebookSession(access_token="spec-check"))


@dataclass(frozen=True)
class Edge:
    types: dict[str, str]
    enums: dict[str, list[str]]
    target: type | None


@functools.cache
def edges(module: str, name: str) -> dict[tuple[str, str], Edge]:
    """(HTTP method, edge) → its parameters for one node type, built by asking each of the SDK's
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
            checker = request._param_checker
            # The SDK keeps an enum as the values of its class's attributes, `__module__` and all.
            enums = {kind: sorted(v for v in values if isinstance(v, str) and "." not in v)
                     for kind, values in checker._enum_data.items()}
            found[(request._method, request._endpoint.strip("/"))] = Edge(
                dict(checker._type_check_info), enums, getattr(request, "_target_class", None))
    return found


@functools.cache
def node_fields(module: str, name: str) -> frozenset[str]:
    cls = getattr(importlib.import_module(f"facebook_business.adobjects.{module}"), name)
    return _fields_of(cls)


def _fields_of(cls: Any) -> frozenset[str]:
    return frozenset(v for k, v in vars(getattr(cls, "Field", object)).items() if not k.startswith("_"))


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
            params[""] = body
    else:
        params.update({k: ("<file>" if v is FILE else v) for k, v in seen.form().items()})
    return params


def _ad_object(kind: str) -> Any:
    module = importlib.util.find_spec(f"facebook_business.adobjects.{kind.lower()}")
    if module is None:
        return None
    return getattr(importlib.import_module(f"facebook_business.adobjects.{kind.lower()}"), kind, None)


def _type_problems(kind: str, value: Any, enums: dict[str, list[str]], where: str) -> list[str]:
    """The problems of one value against a facebook-business type string, strictly: numbers as
    numbers (or, in a query or form, digits), enums exactly, objects field by field."""
    if value is None:
        return []
    if kind in enums:
        shown = ", ".join(enums[kind][:8]) + (", ..." if len(enums[kind]) > 8 else "")
        return [] if value in enums[kind] else [f"{where}: {value!r} is not one of its values ({shown})"]
    if kind.startswith("list"):
        if isinstance(value, str):
            try:
                value = json.loads(value) if value[:1] == "[" else value.split(",")
            except ValueError:
                return [f"{where}: not a list"]
        if not isinstance(value, list):
            return [f"{where}: a list is expected"]
        inner = kind[4:].strip("<>").strip() or "string"
        return [p for i, item in enumerate(value) for p in _type_problems(inner, item, enums, f"{where}[{i}]")]
    if kind.startswith("map") or kind == "Object":
        if isinstance(value, str) and value[:1] == "{":
            try:
                value = json.loads(value)
            except ValueError:
                return [f"{where}: not JSON"]
        return [] if isinstance(value, dict) else [f"{where}: an object is expected"]
    if kind in ("int", "unsigned int"):
        ok = (isinstance(value, int) and not isinstance(value, bool)) or (
            isinstance(value, str) and re.fullmatch(r"-?\d+" if kind == "int" else r"\d+", value) is not None)
        return [] if ok else [f"{where}: {value!r} is not an {kind}"]
    if kind == "float":
        ok = (isinstance(value, int | float) and not isinstance(value, bool)) or (
            isinstance(value, str) and re.fullmatch(r"-?\d+(\.\d+)?", value) is not None)
        return [] if ok else [f"{where}: {value!r} is not a number"]
    if kind == "bool":
        return [] if isinstance(value, bool) or value in ("true", "false") else [f"{where}: {value!r} is not a bool"]
    if kind in ("string", "datetime", "file"):
        return [] if isinstance(value, str) else [f"{where}: {value!r} is not text"]
    cls = _ad_object(kind)
    if cls is None:
        return []  # a type the SDK names without describing it
    if isinstance(value, str) and value[:1] == "{":
        try:
            value = json.loads(value)
        except ValueError:
            return [f"{where}: not JSON"]
    if not isinstance(value, dict):
        return [f"{where}: a {kind} object is expected"]
    types = getattr(cls, "_field_types", {})
    problems = []
    for key, item in value.items():
        if key not in types:
            problems.append(f"{where}.{key}: not a field of {kind}")
        else:
            problems += _type_problems(types[key], item, _enums_of(cls), f"{where}.{key}")
    return problems


def _enums_of(cls: Any) -> dict[str, list[str]]:
    found = {}
    for name, holder in vars(cls).items():
        if isinstance(holder, type) and name[:1].isupper() and name != "Field":
            found[re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower() + "_enum"] = [
                v for k, v in vars(holder).items() if not k.startswith("_") and isinstance(v, str)]
    return found


def _edge_problems(name: str, edge: Edge, params: dict[str, Any]) -> list[str]:
    problems = []
    for key, value in params.items():
        if key in COMMON or value in ENUM_ERRATA.get((name, key), ()):
            continue
        kind = edge.types.get(key)
        if kind is None:
            problems.append(f"unknown parameter {key!r}")
        else:
            problems += _type_problems(kind, value, edge.enums, key)
    if "fields" in params and edge.target is not None:
        known = _fields_of(edge.target)
        problems += [f"fields: {name!r} is not a field of {edge.target.__name__}"
                     for name in str(params["fields"]).split(",") if name and name.split("{")[0] not in known]
    return problems


def _rule_problems(platform: str, method: str, edge: str, params: dict[str, Any]) -> list[str]:
    rule = RULES.get((platform, method, edge))
    if rule is None:
        return []
    problems = [f"{key!r} is required ({rule.page})" for key in rule.required if params.get(key) in (None, "")]
    if rule.one_of and not any(params.get(key) not in (None, "") for key in rule.one_of):
        problems.append(f"one of {list(rule.one_of)} is required ({rule.page})")
    for key, values in rule.enums.items():
        if (platform, edge, key) == ("instagram", "media", "media_type") and params.get(key) == "VIDEO" \
                and params.get("is_carousel_item") in (True, "true"):
            continue
        if key in params and params[key] not in values:
            problems.append(f"{key}: {params[key]!r} is not one of {list(values)} ({rule.page})")
    for key, limit in rule.max_length.items():
        value = params.get(key)
        if isinstance(value, str) and key == "children":  # ids, a JSON array or comma-separated
            value = json.loads(value) if value[:1] == "[" else value.split(",")
        if isinstance(value, list | str) and len(value) > limit:
            problems.append(f"{key}: at most {limit}, {len(value)} given ({rule.page})")
    return problems


def _token_request(seen: Seen) -> list[str]:
    """Token endpoints authenticate the app (client id and secret) or carry the token they read
    (https://developers.facebook.com/docs/facebook-login/guides/access-tokens/get-long-lived,
    https://developers.facebook.com/docs/graph-api/reference/debug_token)."""
    params = _params(seen)
    if seen.path.endswith("debug_token"):
        return [] if params.get("input_token") else ["debug_token: input_token is required"]
    if params.get("grant_type") in ("ig_refresh_token", "ig_exchange_token") or "access_token" in params:
        return [] if params.get("access_token") else ["the token to exchange or refresh is missing"]
    return [f"{key} is required" for key in ("client_id", "client_secret") if not params.get(key)]


def _node_read(seen: Seen, params: dict[str, Any]) -> list[str]:
    problems = [f"unknown parameter {key!r} of a node read" for key in params if key not in COMMON]
    wanted = [name.split("{")[0] for name in str(params.get("fields", "")).split(",") if name]
    if not wanted:
        return problems
    candidates: dict[str, frozenset[str] | set[str]] = {
        name: node_fields(module, name) for module, name in NODE_TYPES.get(seen.platform, [])}
    candidates.update(EXTRA_NODES.get(seen.platform, {}))
    if any(set(wanted) <= fields for fields in candidates.values()):
        return problems
    name, fields = min(candidates.items(), key=lambda item: len(set(wanted) - item[1]))
    return problems + [f"fields: {field!r} is not a field of {name} (nor of any {seen.platform} node type)"
                       for field in wanted if field not in fields]


ERRORS = "https://developers.facebook.com/docs/graph-api/guides/error-handling"


def _answer(seen: Seen, params: dict[str, Any]) -> list[str]:
    """A failure is Graph's error object (ERRORS); a read answers the fields it asked for, and `id`,
    and no other (https://developers.facebook.com/docs/graph-api/overview#fields)."""
    answer = seen.answer
    if answer is None or "json" not in answer.content_type:
        return []
    try:
        body = json.loads(answer.body)
    except ValueError:
        return [f"answer {answer.status} is not JSON"]
    if answer.status >= 400:
        error = body.get("error") if isinstance(body, dict) else None
        if not isinstance(error, dict):
            return [f"answer {answer.status}: not Graph's error object ({ERRORS})"]
        return [f"answer {answer.status}: error.{key} missing or of the wrong type ({ERRORS})"
                for key, kind in (("message", str), ("type", str), ("code", int)) if not isinstance(error.get(key), kind)]
    wanted = {name.split("{")[0].split(".")[0] for name in str(params.get("fields", "")).split(",") if name}
    if seen.method != "GET" or not wanted or not isinstance(body, dict):
        return []
    data = body.get("data")
    items: list[Any] = data if isinstance(data, list) else [body]
    extra = {key for item in items if isinstance(item, dict) for key in item} - wanted - {"id"}
    return [f"answer {answer.status}: {key!r} was not asked for (fields={params['fields']})" for key in sorted(extra)]


def check(seen: Seen) -> list[str]:
    if OUTSIDE.match(seen.path):
        return _token_request(seen)
    return _request(seen) + _answer(seen, _params(seen))


def _request(seen: Seen) -> list[str]:
    problems = []
    if not BEARER.fullmatch(seen.header("authorization") or "") and not seen.query.get("access_token"):
        problems.append("no access token (Authorization: Bearer, or access_token)")
    if not VERSIONED.match(seen.path):
        return [*problems, f"{seen.method} {seen.path}: a Graph path starts with its version (/vXX.X/)"]
    segments = seen.path.strip("/").split("/")[1:]
    params = _params(seen)
    if len(segments) == 1:
        if seen.method == "GET":
            return problems + _node_read(seen, params)
        if seen.method == "DELETE":
            return problems + [f"unknown parameter {key!r} of a node delete" for key in params if key not in COMMON]
        return [*problems, f"{seen.method} /{{id}}: not a call the {seen.platform} checks describe"]
    if len(segments) != 2:
        return [*problems, f"{seen.method} {seen.path}: a Graph path is /{{id}} or /{{id}}/{{edge}}"]
    edge = segments[1]
    candidates = [(name, found) for module, name in NODE_TYPES.get(seen.platform, [])
                  for (method, name_of_edge), found in edges(module, name).items()
                  if method == seen.method and name_of_edge == edge]
    rules = _rule_problems(seen.platform, seen.method, edge, params)
    if not candidates:
        if (seen.platform, seen.method, edge) in UNDESCRIBED:
            return problems + [f"/{edge}: {p}" for p in rules]
        return [*problems, f"{seen.method} /{{id}}/{edge}: no {seen.platform} node type of {version()} has this edge"]
    results = [(name, _edge_problems(edge, found, params)) for name, found in candidates]
    if not any(not found for _, found in results):
        name, found = min(results, key=lambda r: len(r[1]))
        problems += [f"{name} {seen.method} /{edge}: {p}" for p in found]
    return problems + [f"{seen.method} /{edge}: {p}" for p in rules]


# Edges the adapters use that facebook-business does not describe for the platform's node types;
# their rules (RULES) still apply.
UNDESCRIBED = {
    ("instagram", "POST", "messages"),  # Instagram Login's messaging API (RULES cites its page)
    ("facebook", "POST", "messages"),  # Messenger's Send API
}
