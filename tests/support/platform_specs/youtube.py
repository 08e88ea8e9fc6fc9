"""YouTube requests and answers against the Data API v3 discovery document that
`google-api-python-client` ships (`googleapiclient/discovery_cache/documents/youtube.v3.json`; its
`revision` names the version), read as JSON Schema: the method at that path and HTTP method; its
query parameters (known, required ones present, integers within `minimum`/`maximum`, enums, `part`
values among the resource's parts); the JSON body against the request schema with no property the
schema lacks; the `Authorization: Bearer` header; each JSON answer against the response schema
(64-bit counts are strings there, as Google's JSON writes them). Plus the rules each method's
reference page states, which the discovery document cannot express (`RULES`)."""

from __future__ import annotations

import functools
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from jsonschema import Draft202012Validator

from tests.support.platform_specs import Seen
from tests.support.platform_specs.openapi import shorten

# Requests outside the Data API: Google's OAuth token endpoint (checked on its own below), and the
# bytes sent to an upload session's own URL (the resumable protocol, not a Data API method).
TOKEN = re.compile(r"^/token$|^/o/oauth2/token$")
BEARER = re.compile(r"Bearer [A-Za-z0-9._~+/=-]+")
REFERENCE = "https://developers.google.com/youtube/v3/docs"


@dataclass(frozen=True)
class Rule:
    """What a method's reference page states beyond the discovery document."""

    page: str
    one_filter_of: tuple[str, ...] = ()  # exactly one of these query parameters
    required: tuple[str, ...] = ()  # body paths (dotted) that must be present and non-empty
    read_only: tuple[str, ...] = ()  # body paths the API sets itself
    max_length: dict[str, int] = field(default_factory=dict)
    forbidden_characters: dict[str, str] = field(default_factory=dict)


RULES: dict[str, Rule] = {
    "youtube.commentThreads.list": Rule(
        f"{REFERENCE}/commentThreads/list",
        one_filter_of=("allThreadsRelatedToChannelId", "channelId", "id", "videoId")),
    "youtube.comments.list": Rule(f"{REFERENCE}/comments/list", one_filter_of=("id", "parentId")),
    "youtube.channels.list": Rule(
        f"{REFERENCE}/channels/list",
        one_filter_of=("categoryId", "forHandle", "forUsername", "id", "managedByMe", "mine", "mySubscribers")),
    "youtube.videos.list": Rule(f"{REFERENCE}/videos/list", one_filter_of=("chart", "id", "myRating")),
    "youtube.comments.insert": Rule(
        f"{REFERENCE}/comments/insert",
        required=("snippet.parentId", "snippet.textOriginal"),
        read_only=("id", "etag", "kind", "snippet.textDisplay", "snippet.authorDisplayName",
                   "snippet.authorProfileImageUrl", "snippet.authorChannelUrl", "snippet.authorChannelId",
                   "snippet.channelId", "snippet.videoId", "snippet.canRate", "snippet.viewerRating",
                   "snippet.likeCount", "snippet.moderationStatus", "snippet.publishedAt", "snippet.updatedAt")),
    "youtube.commentThreads.insert": Rule(
        f"{REFERENCE}/commentThreads/insert",
        required=("snippet.videoId", "snippet.topLevelComment.snippet.textOriginal"),
        read_only=("id", "etag", "kind", "snippet.topLevelComment.snippet.textDisplay",
                   "snippet.totalReplyCount", "snippet.canReply", "snippet.isPublic")),
    # https://developers.google.com/youtube/v3/docs/videos#snippet.title: required on insert, at most
    # 100 characters, no < or >; #snippet.description: at most 5000 bytes, no < or >.
    "youtube.videos.insert": Rule(
        f"{REFERENCE}/videos/insert",
        required=("snippet.title",),
        read_only=("id", "etag", "kind", "snippet.publishedAt", "snippet.channelId", "snippet.channelTitle",
                   "snippet.thumbnails", "status.uploadStatus", "status.failureReason", "status.rejectionReason",
                   "statistics", "processingDetails", "fileDetails", "suggestions"),
        max_length={"snippet.title": 100, "snippet.description": 5000},
        forbidden_characters={"snippet.title": "<>", "snippet.description": "<>"}),
}


@functools.cache
def document() -> dict[str, Any]:
    import googleapiclient

    path = Path(googleapiclient.__file__).parent / "discovery_cache" / "documents" / "youtube.v3.json"
    return dict(json.loads(path.read_text()))


def revision() -> str:
    return str(document()["revision"])


@functools.cache
def _methods() -> dict[tuple[str, str], dict[str, Any]]:
    """(HTTP method, path) → the discovery method, for plain and upload paths."""
    found: dict[tuple[str, str], dict[str, Any]] = {}

    def walk(resources: dict[str, Any]) -> None:
        for resource in resources.values():
            for method in (resource.get("methods") or {}).values():
                found[(method["httpMethod"], "/" + method["flatPath"])] = method
                for protocol in ((method.get("mediaUpload") or {}).get("protocols") or {}).values():
                    found[(method["httpMethod"], protocol["path"])] = method
            walk(resource.get("resources") or {})

    walk(document()["resources"])
    return found


def _json_schema(spec: dict[str, Any]) -> dict[str, Any]:
    """A discovery schema as JSON Schema: `$ref`s to `$defs`, integer bounds as numbers, 64-bit
    integers as digit strings, no property the schema does not list."""
    if "$ref" in spec:
        return {"$ref": f"#/$defs/{spec['$ref']}"}
    kind = spec.get("type")
    out: dict[str, Any] = {}
    if kind == "object":
        out["type"] = "object"
        if "properties" in spec:
            out["properties"] = {k: _json_schema(v) for k, v in spec["properties"].items()}
            out["additionalProperties"] = False
        if "additionalProperties" in spec:
            out["additionalProperties"] = _json_schema(spec["additionalProperties"])
    elif kind == "array":
        out = {"type": "array", "items": _json_schema(spec.get("items") or {})}
    elif kind == "string" and spec.get("format") in ("int64", "uint64"):
        out = {"type": "string", "pattern": r"^-?\d+$"}
    elif kind in ("string", "boolean", "integer", "number"):
        out["type"] = kind
    if "enum" in spec:
        out["enum"] = spec["enum"]
    for bound in ("minimum", "maximum"):
        if bound in spec:
            out[bound] = float(spec[bound]) if "." in str(spec[bound]) else int(spec[bound])
    return out


@functools.cache
def _validator(ref: str) -> Draft202012Validator:
    definitions = {name: _json_schema(schema) for name, schema in document()["schemas"].items()}
    return Draft202012Validator({"$ref": f"#/$defs/{ref}", "$defs": definitions})


def _errors(ref: str, value: Any, where: str) -> list[str]:
    found = []
    for error in _validator(ref).iter_errors(value):
        at = where + "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in error.absolute_path)
        found.append(f"{at}: {shorten(error.message)}")
    return found


def _query_value(spec: dict[str, Any], value: str) -> list[str]:
    """The problems of one query value against its parameter."""
    values = value.split(",") if spec.get("repeated") else [value]
    problems = []
    for each in values:
        kind = spec.get("type")
        if kind == "boolean" and each not in ("true", "false"):
            problems.append(f"{each!r} is not a boolean")
        elif kind == "integer":
            if not re.fullmatch(r"-?\d+", each):
                problems.append(f"{each!r} is not an integer")
            elif "minimum" in spec and int(each) < int(spec["minimum"]):
                problems.append(f"{each} is less than the minimum of {spec['minimum']}")
            elif "maximum" in spec and int(each) > int(spec["maximum"]):
                problems.append(f"{each} is greater than the maximum of {spec['maximum']}")
        if "enum" in spec and each not in spec["enum"]:
            problems.append(f"{each!r} is not one of {spec['enum']}")
    return problems


def _parts(method: dict[str, Any]) -> set[str]:
    """The `part` values a method takes: the top-level properties of the resource it writes or lists."""
    schemas = document()["schemas"]
    name = (method.get("request") or method.get("response") or {}).get("$ref")
    if name is None:
        return set()
    schema = schemas[name]
    if "items" in schema.get("properties", {}):  # a list response: its items' resource
        name = schema["properties"]["items"]["items"]["$ref"]
    return set(schemas[name].get("properties", {})) - {"kind", "etag"}


def _at(value: Any, dotted: str) -> Any:
    for key in dotted.split("."):
        if not isinstance(value, dict) or key not in value:
            return None
        value = value[key]
    return value


def _rule_problems(name: str, seen: Seen, body: Any) -> list[str]:
    rule = RULES.get(name)
    if rule is None:
        return []
    problems = []
    if rule.one_filter_of:
        given = [key for key in rule.one_filter_of if key in seen.query]
        if len(given) != 1:
            problems.append(f"{name}: exactly one filter of {list(rule.one_filter_of)} is taken, "
                            f"{len(given)} given ({rule.page})")
    if body is not None:
        for path in rule.required:
            if _at(body, path) in (None, ""):
                problems.append(f"{name}: body.{path} is required ({rule.page})")
        for path in rule.read_only:
            if _at(body, path) is not None:
                problems.append(f"{name}: body.{path} is read-only: the API sets it ({rule.page})")
        for path, limit in rule.max_length.items():
            text = _at(body, path)
            if isinstance(text, str) and len(text.encode() if path.endswith("description") else text) > limit:
                problems.append(f"{name}: body.{path} is longer than {limit} ({rule.page})")
        for path, characters in rule.forbidden_characters.items():
            text = _at(body, path)
            if isinstance(text, str) and any(c in text for c in characters):
                problems.append(f"{name}: body.{path} may not contain {characters!r} ({rule.page})")
    return problems


def _token_request(seen: Seen) -> list[str]:
    """Google's token endpoint takes a form with `grant_type` and the client's credentials
    (https://developers.google.com/identity/protocols/oauth2/web-server#exchange-authorization-code)."""
    form = seen.form()
    problems = []
    if "x-www-form-urlencoded" not in seen.content_type:
        problems.append("token: the body must be application/x-www-form-urlencoded")
    if form.get("grant_type") not in ("authorization_code", "refresh_token"):
        problems.append(f"token: grant_type {form.get('grant_type')!r}")
    problems += [f"token: {key} missing" for key in ("client_id", "client_secret") if key not in form]
    return problems


def check(seen: Seen) -> list[str]:
    if TOKEN.search(seen.path):
        return _token_request(seen)
    if "upload_id" in seen.query:  # the bytes of a resumable session, sent to its own URL
        return []
    method = _methods().get((seen.method, seen.path))
    if method is None:
        return [f"{seen.method} {seen.path}: no such method in the YouTube discovery document"]
    name = method["id"]
    problems = []
    params = {**document()["parameters"], **(method.get("parameters") or {})}
    for key, value in seen.query.items():
        spec = params.get(key)
        if spec is None or spec.get("location") != "query":
            problems.append(f"{name}: unknown query parameter {key!r}")
        else:
            problems += [f"{name}: {key}: {p}" for p in _query_value(spec, value)]
    for key, spec in (method.get("parameters") or {}).items():
        if spec.get("required") and key not in seen.query:
            problems.append(f"{name}: required parameter {key!r} missing")
    if "part" in seen.query:
        parts = _parts(method)
        problems += [f"{name}: part {part!r} is not one of {sorted(parts)}"
                     for part in seen.query["part"].split(",") if part not in parts]
    if "upload" in seen.path and seen.query.get("uploadType") not in ("resumable", "multipart", "media"):
        problems.append(f"{name}: uploadType {seen.query.get('uploadType')!r}")
    if not BEARER.fullmatch(seen.header("authorization") or ""):
        problems.append(f"{name}: header Authorization must be 'Bearer <OAuth 2.0 access token>' "
                        f"(scopes {method.get('scopes', [])[:2]})")
    body = None
    request_schema = method.get("request")
    if request_schema and "json" in seen.content_type and seen.body:
        body = json.loads(seen.body)
        problems += [f"{name}: {p}" for p in _errors(request_schema["$ref"], body, "body")]
    elif request_schema and not seen.body and seen.query.get("uploadType") != "media":
        body = {}
    problems += _rule_problems(name, seen, body)
    return problems + _answer_problems(name, method, seen)


def _answer_problems(name: str, method: dict[str, Any], seen: Seen) -> list[str]:
    answer = seen.answer
    response = method.get("response")
    if answer is None or response is None or answer.status >= 300 or "json" not in answer.content_type:
        return []
    try:
        value = json.loads(answer.body)
    except ValueError:
        return [f"{name}: answer {answer.status} is not JSON"]
    return [f"{name}: {p}" for p in _errors(response["$ref"], value, f"answer {answer.status}")]
