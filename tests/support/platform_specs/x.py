"""X requests against the API v2 as `xdk` (X's SDK, generated from X's OpenAPI document) describes
it: each client method's path and HTTP method, its query parameters with their types (from the
method's signature) and its request body model (`xdk.schemas`). A request must match an operation,
use only its query parameters, with values of their types, and a body whose fields are the model's
and validate against it."""

from __future__ import annotations

import functools
import importlib
import inspect
import json
import pkgutil
import re
import typing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel, TypeAdapter, ValidationError

from tests.support.platform_specs import FILE, Seen

# The OAuth 2.0 token endpoint is X's, but outside the API v2 document.
OUTSIDE = ("/2/oauth2/token",)
URL = re.compile(r'url = \(?\s*self\.client\.base_url\s*\+\s*"([^"]+)"')
VERB = re.compile(r"self\.client\.session\.(get|post|put|delete|patch)\(")
PARAM = re.compile(r'params\["([^"]+)"\] = (?:",".join\(\s*str\(item\) for item in )?(\w+)')
# xdk names the Post fields parameter `post.fields`; X's API reference and its servers call it
# `tweet.fields` (https://docs.x.com/x-api/fundamentals/fields). The SDK's rename, undone here.
WIRE_NAMES = {"post.fields": "tweet.fields"}
# Cursor parameters of paginated operations, which the SDK's paginator adds itself.
PAGING = {"pagination_token", "next_token"}


@dataclass
class Operation:
    name: str
    verb: str
    template: str
    pattern: re.Pattern[str]
    query: dict[str, Any] = field(default_factory=dict)  # query key → annotation
    required: set[str] = field(default_factory=set)
    body: type[BaseModel] | None = None


@functools.cache
def operations() -> list[Operation]:
    import xdk

    found = []
    for module in pkgutil.iter_modules(xdk.__path__):
        if not module.ispkg:
            continue
        try:
            client = importlib.import_module(f"xdk.{module.name}.client")
        except ImportError:
            continue
        sources = _function_sources(client)
        for cls in vars(client).values():
            if not (inspect.isclass(cls) and cls.__module__ == client.__name__):
                continue
            for name, function in vars(cls).items():
                if name.startswith("_") or not inspect.isfunction(function):
                    continue
                source = sources.get(name, "")
                url, verb = URL.search(source), VERB.search(source)
                if not url or not verb:
                    continue
                hints = _hints(function, client)
                names = dict((key, python) for key, python in PARAM.findall(source))
                template = url.group(1)
                pattern = re.compile("^" + re.sub(r"\\\{[^}]+\\\}", "[^/]+", re.escape(template)) + "$")
                operation = Operation(f"{module.name}.{name}", verb.group(1).upper(), template, pattern)
                signature = inspect.signature(function)
                for sdk_key, python in names.items():
                    key = WIRE_NAMES.get(sdk_key, sdk_key)
                    operation.query[key] = hints.get(python, Any)
                    parameter = signature.parameters.get(python)
                    if parameter is not None and parameter.default is inspect.Parameter.empty:
                        operation.required.add(key)
                body = hints.get("body")
                if inspect.isclass(body) and issubclass(body, BaseModel):
                    operation.body = body
                found.append(operation)
    return found


def _function_sources(module: Any) -> dict[str, str]:
    """Each method's text, cut from the module's file read once (`inspect.getsource` per method
    rescans the whole file, seconds for X's large generated clients)."""
    text = Path(module.__file__).read_text()
    starts = [(m.start(), m.group(1)) for m in re.finditer(r"^    def (\w+)\(", text, re.MULTILINE)]
    ends = [start for start, _ in starts[1:]] + [len(text)]
    return {name: text[start:end] for (start, name), end in zip(starts, ends, strict=True)}


def _hints(function: Any, module: Any) -> dict[str, Any]:
    names = {**vars(typing), **vars(module)}
    try:
        return typing.get_type_hints(function, names)
    except (NameError, TypeError):
        return dict(getattr(function, "__annotations__", {}))


def version() -> str:
    from importlib.metadata import version as installed

    return f"xdk {installed('xdk')}"


def _operation(seen: Seen) -> Operation | None:
    matches = [op for op in operations() if op.verb == seen.method and op.pattern.match(seen.path)]
    # A literal path beats a template (`/2/media/upload` before `/2/media/{media_key}`).
    matches.sort(key=lambda op: op.template.count("{"))
    return matches[0] if matches else None


def _value_ok(annotation: Any, value: str) -> bool:
    inner = annotation
    if typing.get_origin(annotation) is typing.Union:
        inner = next(a for a in typing.get_args(annotation) if a is not type(None))
    try:
        if typing.get_origin(inner) in (list, typing.List):  # noqa: UP006
            TypeAdapter(inner).validate_python(value.split(","))
        else:
            TypeAdapter(inner).validate_python(value)
    except ValidationError:
        return False
    return True


def _body(seen: Seen) -> dict[str, Any] | None:
    if "json" in seen.content_type and seen.body:
        value = json.loads(seen.body)
        return value if isinstance(value, dict) else {"": value}
    if "form" in seen.content_type:
        return {key: ("<file>" if value is FILE else value) for key, value in seen.form().items()}
    return None


def _unknown(model: type[BaseModel], value: Any, where: str) -> list[str]:
    if not isinstance(value, dict):
        return []
    problems = []
    aliases = {(f.alias or key): f for key, f in model.model_fields.items()}
    for key, item in value.items():
        spec = aliases.get(key)
        if spec is None:
            problems.append(f"{where}.{key}: not a field of {model.__name__}")
            continue
        for inner in _models(spec.annotation):
            items = item if isinstance(item, list) else [item]
            for each in items:
                problems += _unknown(inner, each, f"{where}.{key}")
    return problems


def _models(annotation: Any) -> list[type[BaseModel]]:
    if inspect.isclass(annotation) and issubclass(annotation, BaseModel):
        return [annotation]
    return [m for arg in typing.get_args(annotation) for m in _models(arg)]


def check(seen: Seen) -> list[str]:
    if seen.path in OUTSIDE:
        return []
    operation = _operation(seen)
    if operation is None:
        return [f"{seen.method} {seen.path}: no such operation in X's API v2 ({version()})"]
    name = operation.name
    problems = []
    for key, value in seen.query.items():
        if key not in operation.query and key not in PAGING:
            problems.append(f"{name}: unknown query parameter {key!r}")
        elif key in operation.query and not _value_ok(operation.query[key], value):
            problems.append(f"{name}: {key}={value!r} is not of its type")
    problems += [f"{name}: required query parameter {key!r} missing"
                 for key in operation.required if key not in seen.query]
    body = _body(seen)
    if operation.body is not None:
        if body is None:
            problems.append(f"{name}: a body is required")
        else:
            problems += [f"{name}: {p}" for p in _unknown(operation.body, body, "body")]
            try:
                operation.body.model_validate(body)
            except ValidationError as error:
                problems += [f"{name}: body.{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in error.errors()]
    elif body:
        problems.append(f"{name}: takes no body")
    return problems
