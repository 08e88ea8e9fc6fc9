"""YouTube requests against the Data API v3 discovery document that `google-api-python-client`
ships (`googleapiclient/discovery_cache/documents/youtube.v3.json`; its `revision` names the
version): the method at that path and HTTP method, its query parameters (known, required present,
of the declared type and enum, `part` values among the resource's parts) and the JSON body's
properties, recursively, against the request schema."""

from __future__ import annotations

import functools
import json
import re
from pathlib import Path
from typing import Any

from tests.support.platform_specs import Seen

# Requests outside the Data API: Google's OAuth token endpoint, and the bytes sent to an upload
# session's own URL (the resumable protocol, not a Data API method).
OUTSIDE = (re.compile(r"^/token$"), re.compile(r"^/o/oauth2/"))


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


def _type_ok(spec: dict[str, Any], value: str) -> bool:
    kind = spec.get("type")
    if "enum" in spec and value not in spec["enum"]:
        return False
    if kind == "boolean":
        return value in ("true", "false")
    if kind in ("integer", "number"):
        return re.fullmatch(r"-?\d+(\.\d+)?", value) is not None
    return True


def _body_problems(schema: dict[str, Any], value: Any, where: str) -> list[str]:
    schemas = document()["schemas"]
    if "$ref" in schema:
        schema = schemas[schema["$ref"]]
    kind = schema.get("type")
    if kind == "object" and "properties" in schema:
        if not isinstance(value, dict):
            return [f"{where}: an object is expected"]
        problems = []
        for key, item in value.items():
            prop = schema["properties"].get(key)
            if prop is None:
                problems.append(f"{where}.{key}: not a property of the schema")
            else:
                problems += _body_problems(prop, item, f"{where}.{key}")
        return problems
    if kind == "array":
        if not isinstance(value, list):
            return [f"{where}: an array is expected"]
        return [p for i, item in enumerate(value) for p in _body_problems(schema["items"], item, f"{where}[{i}]")]
    if kind == "string" and not isinstance(value, str):
        return [f"{where}: a string is expected"]
    if kind == "string" and "enum" in schema and value not in schema["enum"]:
        return [f"{where}: {value!r} is not one of {schema['enum']}"]
    if kind == "boolean" and not isinstance(value, bool):
        return [f"{where}: a boolean is expected"]
    if kind == "integer" and (isinstance(value, bool) or not isinstance(value, int | str)):
        return [f"{where}: an integer is expected"]
    return []


def check(seen: Seen) -> list[str]:
    if any(pattern.search(seen.path) for pattern in OUTSIDE):
        return []
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
        elif not _type_ok(spec, value):
            problems.append(f"{name}: {key}={value!r} is not a valid {spec.get('type')}")
    for key, spec in (method.get("parameters") or {}).items():
        if spec.get("required") and key not in seen.query:
            problems.append(f"{name}: required parameter {key!r} missing")
    request_schema = method.get("request")
    if "part" in seen.query and request_schema:
        properties = document()["schemas"][request_schema["$ref"]]["properties"]
        problems += [f"{name}: part {part!r} is not a part of {request_schema['$ref']}"
                     for part in seen.query["part"].split(",") if part not in properties]
    if request_schema and "json" in seen.content_type and seen.body:
        problems += [f"{name}: {p}" for p in _body_problems(request_schema, json.loads(seen.body), "body")]
    if "upload" in seen.path and seen.query.get("uploadType") not in (None, "resumable", "multipart", "media"):
        problems.append(f"{name}: uploadType {seen.query.get('uploadType')!r}")
    return problems
